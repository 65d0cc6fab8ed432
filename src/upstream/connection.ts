// One upstream connection's wrappers, composed in one place: what an upstream's messages meet, in order, between its transport and the SDK Client.
import type { Client, Transport } from '@modelcontextprotocol/client';
import type { ClassifiedHandler, Wrapper } from '../wire/compose.js';
import { installDispatch } from '../wire/dispatch.js';

/** An answer to a request the upstream's fast path sent (its ids are negative), or an error answer standing in for one. */
export interface FastAnswer {
  id: number;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** What the wrappers of an upstream connection hand their messages to, besides the SDK Client. */
export interface UpstreamConnectionParts {
  /** Takes the answers to fast-path requests (negative ids); the SDK Client never sees them. */
  fastAnswer: (answer: FastAnswer) => void;
  /** Takes the progress of long fast-path calls (their tokens are their negative ids); the SDK Client never sees it. */
  fastProgress: (params: { progressToken: number } & Record<string, unknown>) => void;
}

/**
 * Answers to the fast path's requests, by their negative ids, go to `take`; every other message,
 * and every answer with an id the SDK Client issued, goes on to the Client.
 */
export function fastAnswers(take: (answer: FastAnswer) => void): Wrapper<ClassifiedHandler> {
  return (next) => (message, kind, extra) => {
    if (kind === 'response') {
      const id = (message as { id?: unknown }).id;
      if (typeof id === 'number' && id < 0) return take(message as FastAnswer);
    }
    next(message, kind, extra);
  };
}

/**
 * Progress whose token is a long fast-path call's (negative) goes to `take`, at once: an answer read
 * in the same turn waits a microtask behind it (`installDispatch`), so a call's progress is never
 * overtaken by its result. Every other notification goes on to the Client.
 */
export function fastProgress(take: UpstreamConnectionParts['fastProgress']): Wrapper<ClassifiedHandler> {
  return (next) => (message, kind, extra) => {
    if (kind === 'notification' && (message as { method?: unknown }).method === 'notifications/progress') {
      const params = (message as { params?: { progressToken?: unknown } }).params;
      const token = params?.progressToken;
      if (typeof token === 'number' && token < 0) return take(params as { progressToken: number });
    }
    next(message, kind, extra);
  };
}

/**
 * The wrappers between the classification of an upstream's message and the SDK Client, first
 * listed first: {@link fastAnswers}, then {@link fastProgress}.
 */
export function upstreamInbound(parts: UpstreamConnectionParts): Wrapper<ClassifiedHandler>[] {
  return [fastAnswers(parts.fastAnswer), fastProgress(parts.fastProgress)];
}

/**
 * Composes one upstream connection, once `client.connect(transport)` has resolved. In, in order:
 * 1. the transport: framing and bounds (a line or body too large, too deep or not JSON is refused, with its id if readable);
 * 2. the classification (`installDispatch`, client side): each message classified once; a malformed
 *    or refused answer becomes an error answer for its own request; a response read in the same turn
 *    as a progress notification waits a microtask, behind it;
 * 3. {@link upstreamInbound}: the fast path's answers and its long calls' progress taken out;
 * 4. the SDK Client's own entry points (`_onresponse`, `_onrequest`, `_onnotification`).
 *
 * Out: requests go to `transport.send` from the Client or from the fast path; nothing wraps them.
 *
 * @example composeUpstream(client, transport, { fastAnswer: (a) => upstream.onFastResponse(a) })
 */
export function composeUpstream(client: Client, transport: Transport, parts: UpstreamConnectionParts): void {
  installDispatch(client, transport, 'client', upstreamInbound(parts));
}
