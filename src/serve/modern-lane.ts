// The edge fast lane of a 2026-07-28 stdio connection: a plain `resources/read` or `tools/call` goes from the classified message to the gate and back to the wire, past SDK v2's serveStdio entry and Protocol; once pinned, every other message its entry would only pass on goes straight to the Protocol.
import type { JSONRPCMessage, Server } from '@modelcontextprotocol/server';
import type { AccessGate } from '../access/gate.js';
import type { Caller } from '../caller.js';
import type { LazyAbort } from '../cancel.js';
import { LaneRequests, NEVER_ABORTED, started } from './lane-requests.js';
import { isPlainObject } from '../wire/envelope.js';
import { errorAnswer, JsonRpc } from '../errors.js';
import type { Era, EraEdge } from '../eras/era.js';
import type { InputBridge } from '../eras/input-bridge.js';
import { isInputRequired, modernWire, servedAtEntry, type ModernWire } from '../eras/rev2026-lane.js';
import type { CallRelay } from '../federation/relay.js';
import type { Logger } from '../logger.js';
import { traceDownstream, tracing } from '../observe/tracing.js';
import type { ClassifiedHandler, MessageKind, Send, Wrapper } from '../wire/compose.js';
import { failureAnswer } from './request-failure.js';
import type { Offers } from './facade.js';
import { relayedCall } from './relayed-call.js';
import { callerLogMeta } from '../eras/log-level.js';

/** What the 2026 lane of one stdio connection needs: the facade's parts, the modern Server it runs beside, and the connection's outbound. */
export interface ModernLaneOptions {
  gate: Pick<AccessGate, 'read' | 'callTool'>;
  /** Which of tools and prompts the session is offered (`tools/call` takes the lane only when tools are). */
  offers: Offers;
  /** Who the connection acts for (a live view). On stdio the SDK hands its handlers no transport identity, so this is every request's caller. */
  caller: Caller;
  logger: Logger;
  /** The 2026-07-28 edge (the answer's cache fields, the not-found code). */
  edge: EraEdge;
  /** The bridge, counting the lane's upstream calls for routing exactly as the facade's. */
  bridge?: InputBridge | undefined;
  /** The facade Server serveStdio pinned for the connection (its codec, serverInfo, input-required seam). */
  server: Server;
  /** The connection's outbound, as the Server's own answers leave. */
  send: Send;
}

const READ = 'resources/read';
const CALL = 'tools/call';

/** A tool call's result is answered as the upstream gave it (a read's gets its cache fields). */
const asIs = (result: Record<string, unknown>): Record<string, unknown> => result;

type Id = string | number;
interface Request {
  id: Id;
  method: string;
  params?: unknown;
}

/**
 * The 2026-07-28 fast lane, an inbound wrapper in front of serveStdio's entry (`next`). It serves a
 * `resources/read` or a `tools/call` (when the session is offered tools) itself only when the SDK
 * would accept it and answer it from the facade's handler alone: the connection is pinned to the modern instance (the lane lets the first such request go to
 * the SDK, which pins it; serveStdio's queue is in order, so every later message meets a pinned
 * connection), the params are exactly `uri` and the envelope (a call: `name`, the envelope and
 * optionally plain `arguments`), and the envelope is exactly the three
 * required keys with capabilities that ask for nothing, accepted by the SDK's own `checkInboundEnvelope`
 * (see `eras/rev2026-lane.ts`). A log level, a progress token, `inputResponses`, `requestState`, other
 * params or capabilities: all go to the SDK.
 *
 * The answer is built as the SDK builds it: the same gate call (policy, audit, rate limit, metrics; a
 * call through `relayedCall`, its upstream's messages relayed with the Server's own `notification`),
 * the era's `answer` for a read (cache fields), then the SDK codec's `encodeResult`; an `input_required` result passes
 * the Server's own seam; a failure is `failureAnswer` with the era's not-found code, through the codec's
 * `encodeErrorCode`. A `notifications/cancelled` aborts a lane request and its answer is never sent;
 * it goes on to the SDK too.
 *
 * Once pinned, every other message that serveStdio's entry would only pass on to the pinned Server
 * (all but `initialize`, `subscriptions/listen`, `notifications/cancelled` and responses: see
 * `servedAtEntry`) is handed to the Server's Protocol entry directly, as `installDispatch` does for a
 * 2025 connection: the message is classified once, at the edge, not again by the entry's queue, its
 * channel and the Protocol's `onmessage`.
 *
 * `MCP_FEDERATE_SDK_REQUESTS=1` (read by the caller) leaves the lane out.
 */
export function modernLane(options: ModernLaneOptions): Wrapper<ClassifiedHandler> | undefined {
  const { gate, edge, server, bridge, caller } = options;
  const tools = options.offers.tools;
  const wire = modernWire(server);
  if (!wire) return undefined;
  const requests = new LaneRequests();
  const protocolVersion = edge.revision;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- an era edge is a plain object of functions
  const { answer, notFoundCode } = edge;
  /**
   * Set once a request with a valid modern envelope claim (not `server/discover`) has gone to the SDK:
   * serveStdio pins the connection to this Server on it, and its queue is in order, so the pin holds
   * for every later message, whichever way it goes.
   */
  let pinned = false;
  const settle = laneAnswers(wire, { server, send: options.send, logger: options.logger, caller, notFoundCode, ended: (id, c) => requests.end(id, c) });
  const session = () => caller.session;

  const read = (id: Id, uri: string, envelope: Record<string, unknown>, relay: CallRelay | undefined) => {
    const controller = requests.start(id);
    const run = (): Promise<Record<string, unknown>> => gate.read(caller, uri, controller, relay);
    settle(
      READ,
      id,
      controller,
      uri,
      envelope,
      () => (tracing() ? traceDownstream({ method: READ, params: { uri }, id, session, protocolVersion }, run) : run()),
      answer,
    );
  };

  const call = (id: Id, params: Record<string, unknown>, relay: CallRelay | undefined) =>
    answerCall(settle, { gate, caller, era: edge.era, protocolVersion }, id, requests.start(id), params, relay, (notification) =>
      server.notification(notification, { relatedRequestId: id }),
    );

  return (next) => (message: JSONRPCMessage, kind: MessageKind, extra) => {
    if (kind === 'request') {
      const request = message as Request;
      const params = request.params;
      const method = request.method;
      if ((method === READ || (method === CALL && tools)) && isPlainObject(params)) {
        const caps = method === READ ? wire.plainRead(params) : wire.plainCall(params);
        if (caps !== undefined) {
          if (!pinned) {
            pinned = true;
            return next(message, kind, extra);
          }
          const relay = bridge?.relayFor({
            era: edge.era,
            caller,
            capabilities: caps,
            signal: NEVER_ABORTED,
            inputResponses: undefined,
            requestState: undefined,
          });
          if (method === READ) return read(request.id, params.uri as string, params._meta as Record<string, unknown>, relay);
          return call(request.id, params, relay);
        }
      }
      if (!pinned) {
        pinned = wire.pins(request.method, params);
        return next(message, kind, extra);
      }
    } else if (kind === 'notification') {
      requests.cancel(message);
    }
    // Pinned: what serveStdio's entry would only pass on goes straight to the Server's Protocol, classified once.
    const entry = pinned && !servedAtEntry(message, kind) ? wire.connectedEntry() : undefined;
    if (entry) return entry(message, kind, undefined);
    next(message, kind, extra);
  };
}

/** Where {@link laneAnswers} answers: the Server whose codec and seam it uses, the outbound, and who asked. */
export interface LaneAnswering {
  server: Server;
  /** Sends one answer (a stdio connection's outbound; an HTTP request's response). */
  send: Send;
  logger: Logger;
  caller: Caller;
  /** The era's not-found code. */
  notFoundCode: number;
  /** The request under `id` was settled (answered, failed or cancelled): forget its cancellation. */
  ended(id: string | number, controller: LazyAbort): void;
}

/**
 * The answering half of a 2026-07-28 lane (this stdio one, and the HTTP endpoint's): the returned
 * `settle` answers one lane request from its outcome, as the facade's handler and the SDK would.
 */
export function laneAnswers(wire: ModernWire, answering: LaneAnswering) {
  const { server, send, logger, caller, notFoundCode } = answering;
  const sendAnswer = (message: JSONRPCMessage) => void send(message).catch((err: unknown) => logger.debug({ err: String(err) }, 'answer not sent'));
  const sdkError = (id: Id, err: unknown) => {
    const e = err as { code?: unknown; message?: unknown; data?: unknown };
    const code = typeof e.code === 'number' && Number.isSafeInteger(e.code) ? e.code : JsonRpc.INTERNAL_ERROR;
    sendAnswer(errorAnswer(id, wire.errorCode(code), typeof e.message === 'string' ? e.message : 'Internal error', e.data));
  };
  const done = (id: Id, controller: LazyAbort): boolean => {
    answering.ended(id, controller);
    return controller.aborted;
  };
  const encodeAndSend = (method: string, id: Id, result: Record<string, unknown>) => {
    let encoded: Record<string, unknown>;
    try {
      encoded = wire.encode(method, result);
    } catch (err) {
      server.onerror?.(new Error(`Failed to encode result for ${method}: ${String(err)}`));
      return sendAnswer(errorAnswer(id, JsonRpc.INTERNAL_ERROR, 'Internal error'));
    }
    sendAnswer({ result: encoded, jsonrpc: '2.0', id });
  };
  /** An outcome through the Server's input-required seam, then answered as the Protocol answers it. */
  const through = (method: string, id: Id, controller: LazyAbort, outcome: () => unknown, envelope: Record<string, unknown>) =>
    wire.seam(method, outcome, envelope).then(
      (checked) => (controller.aborted ? undefined : encodeAndSend(method, id, checked)),
      (err: unknown) => (controller.aborted ? undefined : sdkError(id, err)),
    );
  /**
   * Answers one lane request as the facade's handler and the SDK would: `start`'s result shaped by
   * `shape` (the read's cache fields) and encoded; an `input_required` result, or a failure as
   * `failureAnswer` builds it, through the Server's seam (which checks the one against the request's
   * capabilities and rewrites the other where it is not of this era).
   */
  const settle = (
    method: string,
    id: Id,
    controller: LazyAbort,
    uri: string | undefined,
    envelope: Record<string, unknown>,
    start: () => Promise<Record<string, unknown>>,
    shape: (result: Record<string, unknown>) => Record<string, unknown>,
  ) => {
    started(start).then(
      (result) => {
        if (done(id, controller)) return;
        const answered = shape(result);
        if (!isInputRequired(answered)) return encodeAndSend(method, id, answered);
        void through(method, id, controller, () => answered, envelope);
      },
      (err: unknown) => {
        if (done(id, controller)) return;
        const failure = failureAnswer(logger, method, err, caller, { uri, notFoundCode });
        void through(method, id, controller, () => Promise.reject(failure), envelope);
      },
    );
  };
  return settle;
}

/** Where a lane `tools/call` goes: the gate, who asks, in which era. */
export interface LaneCall {
  gate: Pick<AccessGate, 'callTool'>;
  caller: Caller;
  era: Era;
  /** The era's revision (for tracing). */
  protocolVersion: string;
}

/** What {@link laneAnswers} returns: answers one lane request from its outcome. */
export type Settle = ReturnType<typeof laneAnswers>;

/**
 * Runs one plain `tools/call` (params accepted by `ModernWire.plainCall`) as the facade's handler
 * runs it, and answers it through `settle`: the gate's `callTool` with `{ name, arguments }`, inside
 * `relayedCall` (the upstream's messages while it is the only call in flight go to `notify`, tied to
 * this request; the lane never takes a progress token, so no progress), with the caller's envelope
 * log level carried upstream. Both 2026 lanes (stdio, HTTP) call it.
 */
export function answerCall(
  settle: Settle,
  lane: LaneCall,
  id: Id,
  controller: LazyAbort,
  params: Record<string, unknown>,
  relay: CallRelay | undefined,
  notify: (notification: { method: string; params: Record<string, unknown> }) => Promise<void>,
): void {
  const { gate, caller, era, protocolVersion } = lane;
  const envelope = params._meta as Record<string, unknown>;
  const name = params.name as string;
  const args = params.arguments;
  const named = args === undefined ? { name } : { name, arguments: args };
  const run = (): Promise<Record<string, unknown>> =>
    relayedCall(
      {
        signal: controller,
        principal: caller.principal,
        progressToken: undefined,
        notify,
        relay,
        meta: callerLogMeta(era, { mcpReq: { envelope } } as Parameters<typeof callerLogMeta>[1]),
      },
      (context) => gate.callTool(caller, named, context),
    );
  const session = () => caller.session;
  settle(
    CALL,
    id,
    controller,
    undefined,
    envelope,
    () => (tracing() ? traceDownstream({ method: CALL, params: named, id, session, protocolVersion }, run) : run()),
    asIs,
  );
}
