// Verified JWTs remembered by the token's SHA-256 until their `exp`: a repeated token skips the signature check.
import { createHash } from 'node:crypto';

/** Options of {@link VerdictCache}. */
export interface VerdictCacheOptions {
  /** Most entries held; the least recently used goes first. Default: 4096. */
  max?: number;
  /** Current time in ms since the epoch (the clock `exp` is judged by). */
  now: () => number;
}

/**
 * An LRU of successful verdicts keyed by the token's SHA-256 (the token itself is not kept), each
 * until its expiry: a hit at or past it is dropped and misses. Only successes are stored, so tokens
 * that fail cannot push verified ones out faster than verified ones arrive. A new cache per
 * authenticator: a reload of `auth` starts empty.
 *
 * @example
 * const cache = new VerdictCache<Identity>({ now: Date.now });
 * cache.set(token, identity, expiresAtMs);
 * cache.get(token); // identity, until expiresAtMs
 */
export class VerdictCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  private readonly max: number;

  constructor(private readonly options: VerdictCacheOptions) {
    this.max = Math.max(0, options.max ?? 4096);
  }

  /** Number of entries held (expired ones included until touched or pushed out). */
  get size(): number {
    return this.entries.size;
  }

  /** The value stored for `token`, if it has not expired; refreshes its recency. */
  get(token: string): V | undefined {
    const key = keyOf(token);
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (this.options.now() >= entry.expiresAt) return undefined;
    this.entries.set(key, entry); // most recently used last
    return entry.value;
  }

  /** Stores `value` for `token` until `expiresAt` (ms since the epoch). */
  set(token: string, value: V, expiresAt: number): void {
    if (this.max === 0) return;
    const key = keyOf(token);
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  clear(): void {
    this.entries.clear();
  }
}

function keyOf(token: string): string {
  return createHash('sha256').update(token).digest('base64');
}
