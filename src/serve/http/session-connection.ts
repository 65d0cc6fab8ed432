// One 2025-11-25 HTTP session's connection, composed in one place: the transport's edge, the session's wrappers in order, the facade Server behind a guarded tail.
import type { Transport } from '@modelcontextprotocol/server';
import { compose, type ClassifiedHandler, type Send, type Wrapper } from '../../wire/compose.js';
import { deliverTo, guardedTail } from '../../wire/dispatch.js';
import { HttpSessionTransport, type HttpSessionOptions } from './session-transport.js';

/** The wrappers of one HTTP session, each list first listed outermost (see `compose`). */
export interface HttpSessionWrappers {
  /** Between the transport's classification and the session's Server. */
  inbound: readonly (Wrapper<ClassifiedHandler> | undefined)[];
  /** Between the session's Server and the transport's `send`. */
  outbound: readonly (Wrapper<Send> | undefined)[];
}

/**
 * What a 2025-11-25 HTTP session is wrapped in by default: nothing between its edge and its Server
 * (`legacy-sessions.ts` passes the session's edge fast lane as its one inbound wrapper). Its
 * bounds sit in front of the transport, per request, before a body is read (`PrincipalBounds`,
 * the router's checks); a stdio connection's in-flight bound has no counterpart here, since each
 * request holds its own HTTP response.
 */
export const SESSION_WRAPPERS: HttpSessionWrappers = { inbound: [], outbound: [] };

/** One composed session: its transport (the endpoint hands it the session's HTTP requests) and the tail its Server connects to. */
export interface HttpSessionConnection {
  transport: HttpSessionTransport;
  /** What serves the session connects here (a facade Server's `connect`). */
  tail: Transport;
}

/**
 * One session's connection, composed here, in order. In:
 * 1. {@link HttpSessionTransport} (the edge): refused POSTs (406, 415, a batch), a malformed message
 *    answered on its own POST, a duplicate id in flight refused; each message classified once;
 *    a client that goes away cancels its request;
 * 2. `wrappers.inbound`;
 * 3. the Server's Protocol, plugged into the guarded tail by its `connect` (`installDispatch`): it
 *    classifies nothing again.
 *
 * Out: the Server sends on the tail, through `wrappers.outbound`, to the transport's `send` (an
 * answer to its POST, anything else to the session's GET stream). A close of either end reaches
 * the other: the tail's close closes the transport, and the transport's end (after
 * `options.onClosed`) closes the Server.
 *
 * @example const { transport, tail } = composeHttpSession(id, options); await server.connect(tail);
 */
export function composeHttpSession(sessionId: string, options: HttpSessionOptions, wrappers: HttpSessionWrappers = SESSION_WRAPPERS): HttpSessionConnection {
  // What serves the session is known once the tail exists; the transport calls none of these before.
  let deliver: ClassifiedHandler = () => undefined;
  const transport = new HttpSessionTransport(sessionId, options, {
    receive: compose(wrappers.inbound, (message, kind, extra) => deliver(message, kind, extra)),
    error: (error) => tail.onerror?.(error),
    closed: () => tail.onclose?.(),
  });
  const tail = guardedTail(
    compose(wrappers.outbound, (message) => transport.send(message)),
    () => transport.close(),
    sessionId,
  );
  deliver = deliverTo(tail);
  return { transport, tail };
}
