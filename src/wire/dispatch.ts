// Dispatch of incoming JSON-RPC messages into an SDK Protocol: envelope-checked, every readable request id answered once.
import type { Transport, JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/server';
import { classify, type ReadableId } from './envelope.js';
import { errorAnswer, errorText, JsonRpc, MARK_TOO_DEEP, MARK_TOO_LARGE } from '../errors.js';
import { InFlightGate } from './in-flight.js';
import type { Send, Wrapper } from './compose.js';
import type { Refusal } from './line-transport.js';

/** The SDK 2.x Protocol methods this relies on (TypeScript-private, present at run time; pinned by a test). */
interface ProtocolInternals {
  _onrequest(message: unknown, extra?: unknown): void;
  _onresponse(message: unknown): void;
  _onnotification(message: unknown, extra?: unknown): void;
}

/** A transport that may report lines it refused and pause its input (see `LineTransport`). */
export type RefusingTransport = Transport & {
  onrefused?: (refusal: Refusal) => void;
  /** Sends JSON text as written (an answer echoing an id as the peer spelled it). */
  sendText?: (text: string) => Promise<void>;
  pauseInput?: () => void;
  resumeInput?: () => void;
};

/** Which end of the connection the Protocol is: a server answers bad requests, a client fails its own pending ones. */
export type Side = 'server' | 'client';

/** What a well-formed message is, as {@link classify} found it. */
export type MessageKind = 'request' | 'notification' | 'response';

/** A handler of a message whose envelope was classified already (by the connection's guard), with its kind. */
export type ClassifiedHandler = (message: JSONRPCMessage, kind: MessageKind, extra?: MessageExtraInfo) => void;

/**
 * The transport a guarded connection hands to whatever serves it: sends and closes pass through,
 * and messages arrive classified. {@link installDispatch} plugs a Protocol into `receive`, so the
 * envelope is classified once, at the edge; an SDK entry that reads `onmessage` gets it there.
 */
export interface GuardedTail extends Transport {
  /** Where classified messages go when a Protocol's dispatch is installed; else they go to `onmessage`. */
  receive: ClassifiedHandler | undefined;
}

const GUARDED = Symbol('mcp-federate/guarded');

/** True for a {@link GuardedTail} (made by {@link guardedTail}). */
function isGuardedTail(transport: Transport): transport is GuardedTail {
  return (transport as { [GUARDED]?: true })[GUARDED] === true;
}

/** A {@link GuardedTail} whose sends go to `send` and closes to `close` (of a transport already started). */
export function guardedTail(send: Send, close: () => Promise<void>): GuardedTail {
  return { [GUARDED]: true, receive: undefined, start: async () => undefined, send, close } as GuardedTail;
}

/** Delivers a classified message to `tail`: its installed dispatch, else its `onmessage`. */
export function deliverTo(tail: GuardedTail): ClassifiedHandler {
  return (message, kind, extra) => (tail.receive ? tail.receive(message, kind, extra) : tail.onmessage?.(message, extra));
}

/** The Protocol's own entry points for a classified message (throws when the SDK lacks them). */
function protocolEntry(protocol: object): ClassifiedHandler {
  const p = protocol as unknown as Partial<ProtocolInternals>;
  if (typeof p._onrequest !== 'function' || typeof p._onresponse !== 'function' || typeof p._onnotification !== 'function') {
    throw new Error('the SDK Protocol lacks _onrequest/_onresponse/_onnotification: dispatch cannot be installed');
  }
  const internals = p as ProtocolInternals;
  return (message, kind, extra) => {
    switch (kind) {
      case 'request':
        return internals._onrequest(message, extra);
      case 'notification':
        return internals._onnotification(message, extra);
      case 'response':
        return internals._onresponse(message);
    }
  };
}

const CANCELLED = 'notifications/cancelled';

/**
 * Replaces the SDK's `onmessage` with one that classifies every message by its envelope
 * ({@link classify}) and hands only well-formed ones to the Protocol. The SDK's own dispatcher
 * classifies with zod guards (2.x: ~9 us per request, ~19 us per notification) and, for a message
 * it cannot place, reports it with `JSON.stringify(message)` and never answers it.
 *
 * - server side: a bad envelope with a readable id gets `-32600` with that id (id null when it has
 *   none); a line the transport refused gets `-32700` (not JSON) or `-32600` (too large, too deep);
 *   responses are never answered. (Requests in flight are bounded by {@link inFlightBound},
 *   which sits in front of the connection whatever serves it.)
 * - client side (an upstream): a malformed or refused response whose id is readable fails that
 *   pending request with `-32603` (marked too large / too deep where that was the reason), so the
 *   caller is answered at once instead of at its timeout; anything else is reported to `onerror`
 *   and dropped. An oversized message whose id cannot be read leaves the connection in an unknown
 *   state: the transport is closed (the upstream reconnects with backoff).
 *
 * On a {@link GuardedTail} (server side), the guard in front has classified and answered already:
 * the Protocol is plugged into `receive` as it is, and nothing is classified twice.
 *
 * Call after `connect()`. Throws when the Protocol lacks the methods (an SDK change); a test pins it.
 */
export function installDispatch(protocol: object, transport: RefusingTransport, side: Side): void {
  const entry = protocolEntry(protocol);
  if (side === 'server' && isGuardedTail(transport)) {
    transport.receive = entry;
    return;
  }
  const internals = protocol as unknown as ProtocolInternals;
  const report = (message: string) => transport.onerror?.(new Error(message));
  const reply = replier(transport);
  const failPending = (id: string | number, message: string, data?: Record<string, unknown>) =>
    internals._onresponse(errorAnswer(id, JsonRpc.INTERNAL_ERROR, message, data));

  transport.onmessage = (message, extra) => {
    const envelope = classify(message);
    switch (envelope.kind) {
      case 'request':
      case 'notification':
      case 'response':
        return entry(message, envelope.kind, extra);
      case 'invalid':
        if (side === 'server') {
          if (envelope.answer) return reply(envelope.id, JsonRpc.INVALID_REQUEST, `Invalid Request: ${envelope.reason}`);
        } else if (!envelope.answer && isPendingId(envelope.id)) {
          return failPending(envelope.id, 'Invalid response from upstream');
        }
        return report(`dropped an invalid message: ${envelope.reason}`);
    }
  };

  transport.onrefused = (refusal) => {
    const { reason, id, limit } = refusal;
    // A request (either way) whose id is already in flight: refused, whichever side we are.
    if (side === 'server' || reason === 'duplicate-id') return refuseOnServer(reply, refusal);
    if (reason === 'parse-error') return report('dropped a line that is not JSON');
    if (isPendingId(id)) {
      return reason === 'too-large'
        ? failPending(id, 'Upstream response too large', { limit, [MARK_TOO_LARGE]: true })
        : failPending(id, 'Upstream response nested too deeply', { limit, [MARK_TOO_DEEP]: true });
    }
    report(`dropped a message (${reason}, limit ${limit})`);
    if (reason === 'too-large') void transport.close();
  };
}

/** The handlers the server's edge gives a connection's transport (its `onmessage` and `onrefused`). */
export interface ServerEdge {
  onmessage: NonNullable<Transport['onmessage']>;
  onrefused: (refusal: Refusal) => void;
}

/**
 * The server side of {@link installDispatch} for a connection whose handler changes after its
 * first message (an era is picked, an SDK entry takes over): the one place its messages are
 * classified. A bad envelope with a readable id gets `-32600` with that id (id null otherwise), a
 * refused line `-32700` / `-32600`, and never reaches `next` (SDK 2.x's `serveStdio` would drop it
 * unanswered before the era is pinned). `next` gets the kind with the message, so a Protocol behind
 * it ({@link guardedTail}) classifies nothing again. Answers go out through `send` (the
 * connection's composed outbound). The caller sets the returned handlers on the transport.
 */
export function serverEdge(transport: RefusingTransport, send: Send, next: ClassifiedHandler): ServerEdge {
  const reply = replier(transport, send);
  return {
    onmessage: (message, extra) => {
      const envelope = classify(message);
      if (envelope.kind !== 'invalid') return next(message, envelope.kind, extra);
      if (envelope.answer) return reply(envelope.id, JsonRpc.INVALID_REQUEST, `Invalid Request: ${envelope.reason}`);
      transport.onerror?.(new Error(`dropped an invalid message: ${envelope.reason}`));
    },
    onrefused: (refusal) => refuseOnServer(reply, refusal),
  };
}

/** The in-flight bound of one connection, as its inbound and outbound wrappers. */
export interface InFlightBound {
  /** Counts a request in, and a cancel as its end. */
  receive: Wrapper<ClassifiedHandler>;
  /** Counts an answer out as a request's end. */
  send: Wrapper<Send>;
}

/**
 * Bounds the requests one client may have in flight to `max`, pausing the transport's input at the
 * bound (one gate for the connection's whole life). Fed by outgoing answers (the SDK sends nothing
 * for a request the client cancelled: the cancel closes it instead). Undefined when there is no
 * bound or the transport cannot pause.
 */
export function inFlightBound(transport: RefusingTransport, max: number | undefined): InFlightBound | undefined {
  const { pauseInput, resumeInput } = transport;
  if (max === undefined || !pauseInput || !resumeInput) return undefined;
  const gate = new InFlightGate(max, pauseInput.bind(transport), resumeInput.bind(transport));
  return {
    receive: (next) => (message, kind, extra) => {
      if (kind === 'request') gate.opened((message as { id: string | number }).id);
      else if (kind === 'notification' && (message as { method: string }).method === CANCELLED) {
        gate.closed((message as { params?: { requestId?: unknown } }).params?.requestId);
      }
      next(message, kind, extra);
    },
    send: (next) => (message, sendOptions) => {
      const m = message as { id?: unknown; method?: unknown };
      if (m.method === undefined) gate.closed(m.id);
      return next(message, sendOptions);
    },
  };
}

/** Sends an error answer for `id` through `send` (written as `idText` when given and the transport can), never throwing. */
function replier(transport: RefusingTransport, send: Send = (message, options) => transport.send(message, options)) {
  return (id: ReadableId, code: number, message: string, data?: unknown, idText?: string) =>
    void (
      idText !== undefined && transport.sendText
        ? transport.sendText(errorText(idText, code, message, data))
        : send(errorAnswer(id, code, message, data) as unknown as JSONRPCMessage)
    ).catch(() => undefined);
}

/**
 * A line the transport refused, answered as the server: `-32700` not JSON, `-32600` too large, too
 * deep, or a request whose id is already in flight (the first one is still answered).
 */
function refuseOnServer(reply: ReturnType<typeof replier>, { reason, id, limit, idText }: Refusal): void {
  if (reason === 'parse-error') return reply(null, JsonRpc.PARSE_ERROR, 'Parse error');
  if (reason === 'duplicate-id') return reply(id, JsonRpc.INVALID_REQUEST, 'Invalid Request: a request with this id is already in flight', undefined, idText);
  const what = reason === 'too-large' ? `message exceeds ${limit} bytes` : `message nests deeper than ${limit} levels`;
  reply(id, JsonRpc.INVALID_REQUEST, `Invalid Request: ${what}`, { limit }, idText);
}

/** Ids the SDK client issues: integers. */
function isPendingId(id: ReadableId): id is number {
  return typeof id === 'number' && Number.isSafeInteger(id);
}
