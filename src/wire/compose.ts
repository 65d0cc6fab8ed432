// The shapes of a connection's handlers, and ordered wrappers around them, `next => handler` (as undici's and hono's compose): the order is the list's. Pure.
import type { JSONRPCMessage, MessageExtraInfo, Transport } from '@modelcontextprotocol/server';
import type { Refusal } from './line-transport.js';

/** One concern around a handler: given the next handler, the handler that does its part and calls it. */
export type Wrapper<H> = (next: H) => H;

/** A transport's `send`. */
export type Send = Transport['send'];

/** What a well-formed message is, as {@link classify} found it. */
export type MessageKind = 'request' | 'notification' | 'response';

/** A handler of a message whose envelope was classified already (by the connection's guard), with its kind. */
export type ClassifiedHandler = (message: JSONRPCMessage, kind: MessageKind, extra?: MessageExtraInfo) => void;

/** A transport that may report lines it refused and pause its input (see `LineTransport`). */
export type RefusingTransport = Transport & {
  onrefused?: (refusal: Refusal) => void;
  /** Sends JSON text as written (an answer echoing an id as the peer spelled it). */
  sendText?: (text: string) => Promise<void>;
  pauseInput?: () => void;
  resumeInput?: () => void;
};

/**
 * `last` wrapped by `wrappers`, the first listed outermost: a message meets them in list order.
 * Undefined entries (a concern a connection does not have) are skipped.
 *
 * @example compose([inFlight.send, tap.send], transport.send) // tap sees an answer, then the in-flight bound, then the wire
 */
export function compose<H>(wrappers: readonly (Wrapper<H> | undefined)[], last: H): H {
  let handler = last;
  for (let i = wrappers.length - 1; i >= 0; i--) {
    const wrap = wrappers[i];
    if (wrap) handler = wrap(handler);
  }
  return handler;
}
