// The edge fast lane of a 2026-07-28 stdio connection: a plain `resources/read` goes from the classified message to the gate and back to the wire, past SDK v2's serveStdio entry and Protocol; once pinned, every other message its entry would only pass on goes straight to the Protocol.
import type { JSONRPCMessage, Server } from '@modelcontextprotocol/server';
import type { AccessGate } from '../access/gate.js';
import type { Caller } from '../caller.js';
import type { LazyAbort } from '../cancel.js';
import { LaneRequests, NEVER_ABORTED } from './lane-requests.js';
import { isPlainObject } from '../wire/envelope.js';
import { errorAnswer, JsonRpc } from '../errors.js';
import type { EraEdge } from '../eras/era.js';
import type { InputBridge } from '../eras/input-bridge.js';
import { isInputRequired, modernWire, servedAtEntry } from '../eras/rev2026-lane.js';
import type { CallRelay } from '../federation/relay.js';
import type { Logger } from '../logger.js';
import { traceDownstream, tracing } from '../observe/tracing.js';
import type { ClassifiedHandler, MessageKind, Send, Wrapper } from '../wire/compose.js';
import { failureAnswer } from './request-failure.js';

/** What the 2026 lane of one stdio connection needs: the facade's parts, the modern Server it runs beside, and the connection's outbound. */
export interface ModernLaneOptions {
  gate: Pick<AccessGate, 'read'>;
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

type Id = string | number;
interface Request {
  id: Id;
  method: string;
  params?: unknown;
}

/**
 * The 2026-07-28 fast lane, an inbound wrapper in front of serveStdio's entry (`next`). It serves a
 * `resources/read` itself only when the SDK would accept it and answer it from the facade's handler
 * alone: the connection is pinned to the modern instance (the lane lets the first such request go to
 * the SDK, which pins it; serveStdio's queue is in order, so every later message meets a pinned
 * connection), the params are exactly `uri` and the envelope, and the envelope is exactly the three
 * required keys with capabilities that ask for nothing, accepted by the SDK's own `checkInboundEnvelope`
 * (see `eras/rev2026-lane.ts`). A log level, a progress token, `inputResponses`, `requestState`, other
 * params or capabilities: all go to the SDK.
 *
 * The answer is built as the SDK builds it: the same gate call (policy, audit, rate limit, metrics), the
 * era's `answer` (cache fields), then the SDK codec's `encodeResult`; an `input_required` result passes
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
  const { gate, logger, edge, server, send, bridge, caller } = options;
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
  const sendAnswer = (message: JSONRPCMessage) => void send(message).catch((err: unknown) => logger.debug({ err: String(err) }, 'answer not sent'));
  const sdkError = (id: Id, err: unknown) => {
    const e = err as { code?: unknown; message?: unknown; data?: unknown };
    const code = typeof e.code === 'number' && Number.isSafeInteger(e.code) ? e.code : JsonRpc.INTERNAL_ERROR;
    sendAnswer(errorAnswer(id, wire.errorCode(code), typeof e.message === 'string' ? e.message : 'Internal error', e.data));
  };
  const done = (id: Id, controller: LazyAbort): boolean => {
    requests.end(id, controller);
    return controller.aborted;
  };
  const encodeAndSend = (id: Id, result: Record<string, unknown>) => {
    let encoded: Record<string, unknown>;
    try {
      encoded = wire.encode(READ, result);
    } catch (err) {
      server.onerror?.(new Error(`Failed to encode result for ${READ}: ${String(err)}`));
      return sendAnswer(errorAnswer(id, JsonRpc.INTERNAL_ERROR, 'Internal error'));
    }
    sendAnswer({ result: encoded, jsonrpc: '2.0', id });
  };

  const read = (request: Request, uri: string, envelope: Record<string, unknown>, relay: CallRelay | undefined) => {
    const { id } = request;
    const controller = requests.start(id);
    const run = (): Promise<Record<string, unknown>> => gate.read(caller, uri, controller, relay);
    let outcome: Promise<Record<string, unknown>>;
    try {
      outcome = tracing() ? traceDownstream({ method: READ, params: { uri }, id, session: () => caller.session, protocolVersion }, run) : run();
    } catch (err) {
      outcome = Promise.reject(err);
    }
    outcome.then(
      (result) => {
        if (done(id, controller)) return;
        const answered = answer(result);
        if (!isInputRequired(answered)) return encodeAndSend(id, answered);
        // The SDK's handler wrapper checks an input_required answer against the request's capabilities.
        void through(id, controller, () => answered, envelope);
      },
      (err: unknown) => {
        if (done(id, controller)) return;
        const failure = failureAnswer(logger, READ, err, caller, { uri, notFoundCode });
        // The SDK's handler wrapper sees the facade's error first (it rewrites one that is not of this era).
        void through(id, controller, () => Promise.reject(failure), envelope);
      },
    );
  };
  /** An outcome through the Server's input-required seam, then answered as the Protocol answers it. */
  const through = (id: Id, controller: LazyAbort, outcome: () => unknown, envelope: Record<string, unknown>) =>
    wire.seam(READ, outcome, envelope).then(
      (checked) => (controller.aborted ? undefined : encodeAndSend(id, checked)),
      (err: unknown) => (controller.aborted ? undefined : sdkError(id, err)),
    );

  return (next) => (message: JSONRPCMessage, kind: MessageKind, extra) => {
    if (kind === 'request') {
      const request = message as Request;
      const params = request.params;
      if (request.method === READ && isPlainObject(params)) {
        const caps = wire.plainRead(params);
        if (caps !== undefined) {
          if (pinned) {
            const relay = bridge?.relayFor({
              era: edge.era,
              caller,
              capabilities: caps,
              signal: NEVER_ABORTED,
              inputResponses: undefined,
              requestState: undefined,
            });
            return read(request, params.uri as string, params._meta as Record<string, unknown>, relay);
          }
          pinned = true;
          return next(message, kind, extra);
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
