// MCP 2026-07-28 at the session edge: cache hints as result fields, not-found as -32602, SDK v2's stdio entry with listens narrowed to what we serve.
import { withFields } from '../copy.js';
import { errorAnswer, JsonRpc } from '../errors.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import type { ClassifiedHandler, Send, Wrapper } from '../wire/compose.js';
import { isPlainObject } from '../wire/envelope.js';
import { attachedHint } from '../federation/cache-hint.js';
import { Revisions } from '../protocol.js';
import { MODERN, type EraEdge } from './era.js';
import { ListenTap } from './listen-tap.js';

/**
 * `result` with the proxy's hint as the 2026 fields `ttlMs` / `cacheScope`. Without an attached
 * hint the result is returned as it is and the SDK fills its defaults (`ttlMs: 0`, `private`).
 */
export function withCacheFields<T extends object>(result: T): T {
  const hint = attachedHint(result);
  if (!hint) return result;
  // `resultType` is added here, after the cache fields, where the SDK's encodeResult would append it:
  // the same bytes, without the SDK's own copy for it (a spread that adds a key is slow on Node 20).
  if ((result as { resultType?: unknown }).resultType === undefined)
    return withFields(result, { ttlMs: hint.ttlMs, cacheScope: hint.scope, resultType: 'complete' });
  return withFields(result, { ttlMs: hint.ttlMs, cacheScope: hint.scope });
}

/**
 * The 2026-07-28 edge: `-32602` for not-found (the code the SDK itself sends in this era), cache
 * hints as fields, a session open at once (there is no handshake), and on stdio SDK v2's
 * `serveStdio` entry (discovery, the probe and its fallback to 2025, `subscriptions/listen`) with
 * the listen tap in front of it.
 */
export const rev2026: EraEdge = {
  era: MODERN,
  revision: Revisions.modern,
  fastLane: false,
  notFoundCode: JsonRpc.INVALID_PARAMS,
  answer: withCacheFields,
  prepare: () => undefined,
  opened: (_server, then) => then(Revisions.modern),
  stdio(hooks) {
    // Listens narrowed to what the federation accepts: the tap's wrappers sit in front of the entry.
    const tap = new ListenTap(hooks.listen, hooks.listens);
    return {
      refuse: metaNotObject,
      receive: tap.receive,
      send: tap.send,
      async serve(tail) {
        const { serveStdio } = await import('@modelcontextprotocol/server/stdio'); // loaded only when a 2026 client comes
        const entry = serveStdio(({ era }) => hooks.createServer(era), { transport: tail, onerror: (err) => hooks.onerror(err) });
        return () => entry.close();
      },
    };
  },
};

/**
 * A 2026-07-28 request whose `params._meta` is there but is not an object is answered `-32602` here:
 * SDK v2's `serveStdio` cannot read its envelope and drops it with no answer, and every request with
 * a readable id gets exactly one.
 */
function metaNotObject(send: Send): Wrapper<ClassifiedHandler> {
  return (next) => (message, kind, extra) => {
    if (kind === 'request') {
      const { id, params } = message as { id: string | number; params?: unknown };
      const meta = typeof params === 'object' && params !== null ? (params as { _meta?: unknown })._meta : undefined;
      if (meta !== undefined && !isPlainObject(meta)) {
        void send(errorAnswer(id, JsonRpc.INVALID_PARAMS, 'Invalid params: _meta: expected an object') as JSONRPCMessage).catch(() => undefined);
        return;
      }
    }
    next(message, kind, extra);
  };
}
