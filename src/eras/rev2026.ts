// MCP 2026-07-28 at the session edge: cache hints as result fields, not-found as -32602.
import { JsonRpc } from '../errors.js';
import { attachedHint } from '../federation/cache-hint.js';
import type { EraEdge } from './era.js';

/**
 * `result` with the proxy's hint as the 2026 fields `ttlMs` / `cacheScope`. Without an attached
 * hint the result is returned as it is and the SDK fills its defaults (`ttlMs: 0`, `private`).
 */
export function withCacheFields<T extends object>(result: T): T {
  const hint = attachedHint(result);
  return hint ? { ...result, ttlMs: hint.ttlMs, cacheScope: hint.scope } : result;
}

/** The 2026-07-28 edge: `-32602` for not-found (the code the SDK itself sends in this era), cache hints as fields. */
export const rev2026: EraEdge = {
  era: 'modern',
  notFoundCode: JsonRpc.INVALID_PARAMS,
  answer: withCacheFields,
  prepare: () => undefined,
};
