// Rate limits (reads, completions): one token bucket per principal (never per session), on an injected clock, bounded in memory.
import { LRUCache } from 'lru-cache';
import type { Caller } from '../caller.js';
import type { CallLimitConfig, CompletionLimitConfig, RateLimitConfig } from '../config/schema.js';

/** One limit entry: a read limit (`readsPerMinute`), a completion limit (`completionsPerMinute`) or a call limit (`callsPerMinute`). */
export type BucketLimit = RateLimitConfig | CompletionLimitConfig | CallLimitConfig;

/** An entry's sustained rate per minute, whatever its bucket calls it. */
export const perMinuteOf = (l: BucketLimit): number =>
  'readsPerMinute' in l ? l.readsPerMinute : 'callsPerMinute' in l ? l.callsPerMinute : l.completionsPerMinute;

/** What {@link RateLimiter.take} looks at of the caller. */
export type RateLimitSubject = Pick<Caller, 'principal' | 'roles'>;

/** The answer to one read: go ahead, or retry after this many milliseconds. */
export type TakeResult = { readonly ok: true } | { readonly ok: false; readonly retryAfterMs: number };

/**
 * What the gate asks for each limited request: the in-process {@link RateLimiter} answers at once,
 * a shared one (several replicas, one Redis) may take one round trip.
 */
export interface Limiter {
  /** Takes one from the caller's principal's bucket. */
  take(caller: RateLimitSubject): TakeResult | Promise<TakeResult>;
  /** Hands back what it holds of shared state (leased tokens), when it has any. Idempotent. */
  close?(): Promise<void>;
}

/** Options of {@link RateLimiter}. */
export interface RateLimiterOptions {
  /** Monotonic milliseconds. Default: performance.now. */
  now?: () => number;
  /**
   * Most principals whose buckets are kept. Past it the least recently used bucket is dropped,
   * which refills it: a leniency towards that principal, never a refusal. Default: 10000.
   */
  maxPrincipals?: number;
  /**
   * This process enforces one `share`-th of every limit (rate and burst, burst at least 1): the
   * fallback of one of `share` replicas while their shared buckets are unreachable. Default: 1.
   */
  share?: number;
}

interface Bucket {
  /** Tokens at `at`; fractional between reads. */
  tokens: number;
  /** Clock time `tokens` was computed at. */
  at: number;
}

/** A millionth of a read: slack for floating-point refill, so waiting exactly `retryAfterMs` is always enough. */
const EPSILON = 1e-6;

const OK: TakeResult = Object.freeze({ ok: true });

/**
 * Token buckets for the config's `limits`: the first entry that matches a caller (its `principals`
 * and `roles`, absent = any) applies; none matches, unlimited. Each principal has one bucket,
 * shared by all its sessions, holding up to `burst` reads and refilled at `readsPerMinute`. A
 * bucket that would be full again is as good as absent, so buckets are kept in an LRU bounded by
 * count. If a principal's entry changes (its roles did), its bucket keeps what it had, capped by
 * the new `burst`.
 *
 * @example
 * const limiter = new RateLimiter(config.limits.reads, { now: () => performance.now() });
 * const r = limiter.take(caller); // { ok: true } or { ok: false, retryAfterMs: 120 }
 */
export class RateLimiter implements Limiter {
  private readonly now: () => number;
  private readonly buckets: LRUCache<string, Bucket>;
  private readonly share: number;

  constructor(
    private readonly limits: readonly BucketLimit[],
    options: RateLimiterOptions = {},
  ) {
    this.now = options.now ?? (() => performance.now());
    this.buckets = new LRUCache({ max: options.maxPrincipals ?? 10_000 });
    this.share = options.share ?? 1;
  }

  /** The `limits` entry that applies to `caller` (the first that matches), or undefined: unlimited. */
  limitFor(caller: RateLimitSubject): BucketLimit | undefined {
    return this.limits.find(
      (l) =>
        (l.principals === undefined || l.principals.includes(caller.principal)) && (l.roles === undefined || caller.roles.some((r) => l.roles!.includes(r))),
    );
  }

  /** Takes one read from the caller's principal's bucket. */
  take(caller: RateLimitSubject): TakeResult {
    const limit = this.limitFor(caller);
    if (limit === undefined) return OK;
    const now = this.now();
    const perMs = perMinuteOf(limit) / 60_000 / this.share;
    const burst = this.share === 1 ? limit.burst : Math.max(1, Math.floor(limit.burst / this.share));
    const bucket = this.buckets.get(caller.principal);
    let tokens = burst;
    if (bucket !== undefined) {
      // A clock that steps back refills nothing (and the bucket keeps its later time).
      tokens = Math.min(burst, bucket.tokens + Math.max(0, now - bucket.at) * perMs);
    }
    const at = bucket === undefined ? now : Math.max(now, bucket.at);
    if (tokens >= 1 - EPSILON) {
      this.buckets.set(caller.principal, { tokens: Math.max(0, tokens - 1), at });
      return OK;
    }
    this.buckets.set(caller.principal, { tokens, at });
    return { ok: false, retryAfterMs: Math.max(1, Math.ceil((1 - tokens - EPSILON / 1000) / perMs)) };
  }

  /** Buckets held (principals that read recently). */
  get size(): number {
    return this.buckets.size;
  }
}
