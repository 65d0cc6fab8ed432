// The edge fast lane of a 2025-11-25 connection: a plain `resources/read` or `tools/call` goes from the classified message to the gate and back to the wire, past the SDK Protocol; everything else goes on to it.
import type { ClientCapabilities, JSONRPCMessage, MessageExtraInfo, Server } from '@modelcontextprotocol/server';
import type { AccessGate } from '../access/gate.js';
import type { Caller } from '../caller.js';
import { errorAnswer } from '../errors.js';
import type { EraEdge } from '../eras/era.js';
import { answersInput, type InputBridge } from '../eras/input-bridge.js';
import { callerLogMeta } from '../eras/log-level.js';
import type { Logger } from '../logger.js';
import { traceDownstream, tracing } from '../observe/tracing.js';
import type { ClassifiedHandler, MessageKind, Send, Wrapper } from '../wire/compose.js';
import type { Offers } from './facade.js';
import { relayedCall } from './relayed-call.js';
import { failureAnswer } from './request-failure.js';
import { callerOf } from './request-caller.js';
import type { CallRelay } from '../federation/relay.js';
import type { LazyAbort } from '../cancel.js';
import { LaneRequests, NEVER_ABORTED, started } from './lane-requests.js';
import { isPlainObject } from '../wire/envelope.js';
import { MAX_ITEM_NAME } from '../protocol.js';

/** What the fast lane of one connection needs: the facade's parts, the Server it runs beside, and the connection's outbound. */
export interface FastLaneOptions {
  gate: Pick<AccessGate, 'read' | 'callTool'>;
  /** Who the connection acts for (a live view: a reload's change reaches the next request). */
  caller: Caller;
  logger: Logger;
  /** The caller's era (answers and not-found spelled as the facade spells them). */
  edge: EraEdge;
  /** Which of tools and prompts the session is offered (`tools/call` takes the lane only when tools are). */
  offers: Offers;
  /** The bridge, counting the lane's calls in flight for routing exactly as the facade's. */
  bridge?: InputBridge | undefined;
  /** The facade Server of the connection: the client's capabilities, and notifications tied to a request. */
  server: Server;
  /** The connection's outbound, as the Server's own answers leave (the era's and the connection's wrappers). */
  send: Send;
}

type Id = string | number;
interface Request {
  id: Id;
  method: string;
  params?: unknown;
}

/**
 * The fast lane, as an inbound wrapper in front of the facade Server (`next`). It serves a
 * `resources/read` or a `tools/call` itself when the request is plain: the session is initialized,
 * its client declared none of elicitation, sampling or roots (nothing can be asked of it), and the
 * params are the simple shape (`uri` a string; `name` a string with `arguments` an object without
 * an own `__proto__` key, or absent; no `requestState`, which the SDK's input-required seam checks;
 * no `_meta`, so no progress token, trace context or retry fields). Anything else goes on to the
 * SDK, whose answers are the reference: the lane builds the same ones (the same gate call, so the
 * same policy decision, audit record, rate limit and metrics; the same `failureAnswer`; the result
 * as the era answers it) with the SDK's per-request machinery (context objects, schema passes,
 * promise chains) left out. A client's `notifications/cancelled` aborts a lane request and its
 * answer is never sent, as the SDK does; the notification goes on to the SDK too.
 *
 * `MCP_FEDERATE_SDK_REQUESTS=1` (read by the caller) leaves the lane out, so the suites can run both ways.
 */
export function fastLane(options: FastLaneOptions): Wrapper<ClassifiedHandler> {
  const { gate, logger, edge, server, send, bridge } = options;
  const tools = options.offers.tools;
  const requests = new LaneRequests();
  const protocolVersion = edge.revision;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- an era edge is a plain object of functions
  const { answer, notFoundCode } = edge;
  /** Whether the lane may serve this session: undefined until the client's `initialize` is done, then decided once. */
  let open: boolean | undefined;
  const laneOpen = (): boolean => {
    if (open !== undefined) return open;
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- a 2025-11-25 connection: what it declared at initialize holds for its life
    const caps: ClientCapabilities | undefined = server.getClientCapabilities();
    if (caps === undefined) return false;
    return (open = !answersInput(caps));
  };
  const who = (extra: MessageExtraInfo | undefined): Caller => callerOf(extra?.authInfo) ?? options.caller;
  /**
   * The bridge's relay for a lane request of `by`: the lane's callers can be asked nothing, so the
   * bridge sends their calls plain (counted for routing) and never reads the downstream's signal or
   * `ask`; the connection's own caller (a live view) has one relay for the connection's life.
   */
  let ownRelay: CallRelay | undefined;
  const relayOf = (by: Caller): CallRelay | undefined => {
    if (!bridge) return undefined;
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- a 2025-11-25 connection: what it declared at initialize holds for its life
    const relay = (): CallRelay => bridge.relayFor({ era: edge.era, caller: by, capabilities: server.getClientCapabilities(), signal: NEVER_ABORTED });
    if (by !== options.caller) return relay();
    return (ownRelay ??= relay());
  };

  const settle = (id: Id, controller: LazyAbort, method: string, uri: string | undefined, by: Caller, start: () => Promise<Record<string, unknown>>) => {
    started(start).then(
      (result) => {
        requests.end(id, controller);
        if (controller.aborted) return;
        void send({ result: answer(result), jsonrpc: '2.0', id }).catch((err: unknown) => logger.debug({ err: String(err) }, 'answer not sent'));
      },
      (err: unknown) => {
        requests.end(id, controller);
        if (controller.aborted) return;
        const failure = failureAnswer(logger, method, err, by, { uri, notFoundCode });
        void send(errorAnswer(id, failure.code, failure.message, failure.data) as JSONRPCMessage).catch((e: unknown) =>
          logger.debug({ err: String(e) }, 'answer not sent'),
        );
      },
    );
  };

  const read = (request: Request, uri: string, extra: MessageExtraInfo | undefined) => {
    const { id } = request;
    const controller = requests.start(id); // a cache hit never makes its AbortController
    const by = who(extra);
    const relay = relayOf(by);
    const run = (): Promise<Record<string, unknown>> => gate.read(by, uri, controller, relay);
    settle(id, controller, 'resources/read', uri, by, () =>
      tracing() ? traceDownstream({ method: request.method, params: request.params, id, session: () => by.session, protocolVersion }, run) : run(),
    );
  };

  const call = (request: Request, params: Record<string, unknown> & { name: string }, extra: MessageExtraInfo | undefined) => {
    const { id } = request;
    const controller = requests.start(id);
    const by = who(extra);
    const signal = controller;
    const relay = relayOf(by);
    const run = (): Promise<Record<string, unknown>> =>
      relayedCall(
        {
          signal,
          principal: by.principal,
          progressToken: undefined,
          notify: (notification) => server.notification(notification, { relatedRequestId: id }),
          relay,
          meta: callerLogMeta(edge.era, NO_CONTEXT),
        },
        (context) => gate.callTool(by, params, context),
      );
    settle(id, controller, 'tools/call', undefined, by, () =>
      tracing() ? traceDownstream({ method: request.method, params, id, session: () => by.session, protocolVersion }, run) : run(),
    );
  };

  return (next) => (message: JSONRPCMessage, kind: MessageKind, extra?: MessageExtraInfo) => {
    if (kind === 'request') {
      const request = message as Request;
      const params = request.params;
      // A `requestState` (any era) is the SDK's input-required seam's to check; `_meta` may carry a progress token or trace context.
      if (isPlainObject(params) && params._meta === undefined && params.requestState === undefined && laneOpen()) {
        if (request.method === 'resources/read') {
          const uri = params.uri;
          if (typeof uri === 'string') return read(request, uri, extra);
        } else if (tools && request.method === 'tools/call') {
          const { name, arguments: args } = params;
          // An own `__proto__` argument: the facade's params schema drops it, so the SDK path's call differs.
          if (typeof name === 'string' && name.length <= MAX_ITEM_NAME && (args === undefined || (isPlainObject(args) && !Object.hasOwn(args, '__proto__')))) {
            return call(request, params as typeof params & { name: string }, extra); // not copied: nothing on the call path writes to it
          }
        }
      }
    } else if (kind === 'notification') {
      requests.cancel(message);
    }
    next(message, kind, extra);
  };
}

/** The request context `callerLogMeta` reads nothing of in 2025-11-25. */
const NO_CONTEXT = { mcpReq: {} } as Parameters<typeof callerLogMeta>[1];
