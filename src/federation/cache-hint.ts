// Cache hints: how long a result may be reused and by whom, read from upstreams and combined for our own answers. Pure.

/** Who may reuse a result: any caller (`public`) or only the one that asked (`private`). */
export type CacheScope = 'public' | 'private';

/** The proxy's statement about one result (rendered as `ttlMs` / `cacheScope` for 2026-07-28 clients). */
export interface CacheHint {
  /** How long the result may be reused, in milliseconds; 0: not at all. */
  readonly ttlMs: number;
  readonly scope: CacheScope;
}

/** Where the proxy has no basis for more: reuse nothing, share nothing. */
export const NO_BASIS: CacheHint = Object.freeze({ ttlMs: 0, scope: 'private' });

/** Symbol-keyed carrier of a result's hint: never serialised, so 2025 answers are unaffected. */
export const CACHE_HINT: unique symbol = Symbol('mcp-federate.cacheHint');

/**
 * An upstream result's own hint (MCP 2026-07-28 `ttlMs` / `cacheScope`). A missing or invalid
 * `ttlMs` is 0 and a missing scope is `private` (the spec's defaults), so a 2025 upstream's results
 * carry {@link NO_BASIS}.
 */
export function hintOf(result: Record<string, unknown>): CacheHint {
  const ttl = result.ttlMs;
  const ttlMs = typeof ttl === 'number' && Number.isSafeInteger(ttl) && ttl > 0 ? ttl : 0;
  const scope: CacheScope = result.cacheScope === 'public' ? 'public' : 'private';
  return ttlMs === 0 && scope === 'private' ? NO_BASIS : { ttlMs, scope };
}

/** The hint of a whole built from parts: the shortest TTL, `private` if any part is. */
export function combineHints(a: CacheHint, b: CacheHint): CacheHint {
  if (a === b) return a;
  return { ttlMs: Math.min(a.ttlMs, b.ttlMs), scope: a.scope === 'private' || b.scope === 'private' ? 'private' : 'public' };
}

/** `hint` aged by `ageMs` and capped at `capMs` (the remaining life of the entry it was served from). */
export function agedHint(hint: CacheHint, ageMs: number, capMs = Infinity): CacheHint {
  const ttlMs = Math.max(0, Math.floor(Math.min(hint.ttlMs - ageMs, capMs)));
  return ttlMs === hint.ttlMs ? hint : { ttlMs, scope: hint.scope };
}

/** Attaches `hint` to `result` in place and returns it: pass an object you own (never a cached or upstream one). */
export function withHint<T extends object>(result: T, hint: CacheHint): T & { [CACHE_HINT]: CacheHint } {
  return Object.assign(result, { [CACHE_HINT]: hint });
}

/** The hint attached to a result, if any. */
export function attachedHint(result: object): CacheHint | undefined {
  return (result as { [CACHE_HINT]?: CacheHint })[CACHE_HINT];
}
