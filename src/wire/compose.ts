// Ordered wrappers around a connection's handlers, `next => handler` (as undici's and hono's compose): the order is the list's. Pure.
import type { Transport } from '@modelcontextprotocol/server';

/** One concern around a handler: given the next handler, the handler that does its part and calls it. */
export type Wrapper<H> = (next: H) => H;

/** A transport's `send`. */
export type Send = Transport['send'];

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
