// Rate limits shared by N replicas: one Redis token bucket per (bucket name, principal), a local bucket of 1/N while Redis is out of reach.
import type { SharedLink } from '../shared-state/link.js';
import { takeToken } from '../shared-state/token-bucket.js';
import { perMinuteOf, RateLimiter, type BucketLimit, type Limiter, type RateLimiterOptions, type RateLimitSubject, type TakeResult } from './rate-limiter.js';

/** Options of {@link SharedRateLimiter}. */
export interface SharedRateLimiterOptions extends Omit<RateLimiterOptions, 'share'> {
  /** Replicas sharing the limits (`redis.replicas`): the fallback enforces one share of each. */
  replicas: number;
  /** Longest wait for Redis (`redis.timeoutMs`) before the fallback decides. */
  timeoutMs: number;
}

const OK: TakeResult = Object.freeze({ ok: true });

/**
 * A {@link Limiter} over one named bucket (`reads`, `completions`, `calls`, …) whose state lives in
 * Redis, so N replicas enforce each configured limit in total. The entry that applies is picked
 * here, as by {@link RateLimiter}; a caller no entry matches costs nothing (no round trip). A
 * limited take is one `EVALSHA` ({@link takeToken}); when the link is down, or the take fails or
 * times out, a local bucket with the limit divided by `replicas` decides instead, and the fallback
 * is counted (`counters.fallbacks`). Nothing is reconciled when Redis comes back: its buckets simply
 * take over again (at worst a principal gets one extra burst per replica at the switch).
 *
 * @example
 * const reads = new SharedRateLimiter('reads', config.limits.reads, link, { replicas: 3, timeoutMs: 250 });
 * await reads.take(caller); // { ok: true } or { ok: false, retryAfterMs }
 */
export class SharedRateLimiter implements Limiter {
  private readonly fallback: RateLimiter;

  constructor(
    private readonly bucket: string,
    limits: readonly BucketLimit[],
    private readonly link: SharedLink,
    private readonly options: SharedRateLimiterOptions,
  ) {
    const { replicas, timeoutMs: _t, ...local } = options;
    this.fallback = new RateLimiter(limits, { ...local, share: replicas });
  }

  take(caller: RateLimitSubject): TakeResult | Promise<TakeResult> {
    const limit = this.fallback.limitFor(caller);
    if (limit === undefined) return OK;
    if (!this.link.ready) return this.local(caller);
    const key = `${this.link.prefix}rl:${this.bucket}:${caller.principal}`;
    return takeToken(this.link, key, limit.burst, perMinuteOf(limit) / 60_000, this.options.timeoutMs).then(
      (answer): TakeResult => (answer.ok ? OK : { ok: false, retryAfterMs: answer.retryAfterMs }),
      () => this.local(caller),
    );
  }

  private local(caller: RateLimitSubject): TakeResult {
    this.link.counters.fallbacks++;
    return this.fallback.take(caller);
  }
}
