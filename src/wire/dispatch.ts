// Dispatch of incoming JSON-RPC messages into an SDK Protocol: envelope-checked, every readable request id answered once.
import type { Transport } from '@modelcontextprotocol/server';
import { classify, type ReadableId } from './envelope.js';
import { errorAnswer, JsonRpc, MARK_TOO_DEEP, MARK_TOO_LARGE } from '../errors.js';
import { refuseOnServer, replier } from './answers.js';
import { compose, type ClassifiedHandler, type RefusingTransport, type Send, type Wrapper } from './compose.js';

/** The SDK 2.x Protocol methods this relies on (TypeScript-private, present at run time; pinned by a test). */
interface ProtocolInternals {
  _onrequest(message: unknown, extra?: unknown): void;
  _onresponse(message: unknown): void;
  _onnotification(message: unknown, extra?: unknown): void;
}

/** Which end of the connection the Protocol is: a server answers bad requests, a client fails its own pending ones. */
export type Side = 'server' | 'client';

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

/** A {@link GuardedTail} whose sends go to `send` and closes to `close` (of a transport already started), for session `sessionId` if it has one. */
export function guardedTail(send: Send, close: () => Promise<void>, sessionId?: string): GuardedTail {
  return { [GUARDED]: true, receive: undefined, start: async () => undefined, send, close, ...(sessionId === undefined ? {} : { sessionId }) } as GuardedTail;
}

/** Delivers a classified message to `tail`: its installed dispatch, else its `onmessage`. */
export function deliverTo(tail: GuardedTail): ClassifiedHandler {
  return (message, kind, extra) => (tail.receive ? tail.receive(message, kind, extra) : tail.onmessage?.(message, extra));
}

/** The Protocol's own entry points for a classified message (throws when the SDK lacks them). */
export function protocolEntry(protocol: object): ClassifiedHandler {
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

/**
 * Replaces the SDK's `onmessage` with one that classifies every message by its envelope
 * ({@link classify}) and hands only well-formed ones to the Protocol. The SDK's own dispatcher
 * classifies with zod guards (2.x: ~9 us per request, ~19 us per notification) and, for a message
 * it cannot place, reports it with `JSON.stringify(message)` and never answers it.
 *
 * - server side: a bad envelope with a readable id gets `-32600` with that id (id null when it has
 *   none); a line the transport refused gets `-32700` (not JSON) or `-32600` (too large, too deep);
 *   responses are never answered. (Requests in flight are bounded by `inFlightBound` (`server-edge.ts`),
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
 * `inner` are the connection's wrappers between the classification and the Protocol, first listed
 * outermost (see `compose`): every classified message, and every error answer standing in for a
 * refused or malformed one, meets them in that order.
 *
 * Call after `connect()`. Throws when the Protocol lacks the methods (an SDK change); a test pins it.
 */
export function installDispatch(
  protocol: object,
  transport: RefusingTransport,
  side: Side,
  inner: readonly (Wrapper<ClassifiedHandler> | undefined)[] = [],
): void {
  const entry = compose(inner, protocolEntry(protocol));
  if (side === 'server' && isGuardedTail(transport)) {
    transport.receive = entry;
    return;
  }
  const report = (message: string) => transport.onerror?.(new Error(message));
  const reply = replier(transport);
  const failPending = (id: string | number, message: string, data?: Record<string, unknown>) =>
    entry(errorAnswer(id, JsonRpc.INTERNAL_ERROR, message, data), 'response');

  // SDK 2.x runs a notification's handler a microtask later but a response at once, and a response
  // drops its request's progress handler: a progress notification read in the same chunk as its
  // request's response would be lost. On the client side, a response read in the same turn as a
  // progress notification is handed over a microtask later, after that notification's handler.
  let progressThisTurn = false;
  transport.onmessage = (message, extra) => {
    const envelope = classify(message);
    switch (envelope.kind) {
      case 'notification':
        if (side === 'client' && !progressThisTurn && (message as { method?: unknown }).method === 'notifications/progress') {
          progressThisTurn = true;
          queueMicrotask(() => (progressThisTurn = false));
        }
        return entry(message, envelope.kind, extra);
      case 'response':
        if (progressThisTurn) return queueMicrotask(() => entry(message, 'response', extra));
        return entry(message, envelope.kind, extra);
      case 'request':
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

/** Ids the SDK client issues: integers. */
function isPendingId(id: ReadableId): id is number {
  return typeof id === 'number' && Number.isSafeInteger(id);
}
