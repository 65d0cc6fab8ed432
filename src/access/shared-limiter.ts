// Rate limits shared by N replicas: one Redis token bucket per (bucket name, principal), served from local leases when the limit is large, a local bucket of 1/N while Redis is out of reach.
import type { SharedLink } from '../shared-state/link.js';
import { takeToken } from '../shared-state/token-bucket.js';
import { perMinuteOf, RateLimiter, type BucketLimit, type Limiter, type RateLimiterOptions, type RateLimitSubject, type TakeResult } from './rate-limiter.js';
import { leaseCap, TokenLeases } from './token-leases.js';

/** Options of {@link SharedRateLimiter}. */
export interface SharedRateLimiterOptions extends Omit<RateLimiterOptions, 'share'> {
  /** Replicas sharing the limits (`redis.replicas`): the fallback enforces one share of each, and leases are sized by it. */
  replicas: number;
  /** Longest wait for Redis (`redis.timeoutMs`) before the fallback decides. */
  timeoutMs: number;
  /**
   * `redis.leaseMs`: the replicas together hold at most the tokens a bucket refills in this long
   * (and a tenth of its burst), and a lease unused this long is given back. 0: no leases, one round
   * trip per limited take. Default: 250.
   */
  leaseMs?: number;
  /** Called once, when {@link SharedRateLimiter.close} is first called (the cluster stops tracking it). */
  onClose?: () => void;
}

const OK: TakeResult = Object.freeze({ ok: true });

/**
 * A {@link Limiter} over one named bucket (`reads`, `completions`, `calls`, …) whose state lives in
 * Redis, so N replicas enforce each configured limit in total. The entry that applies is picked
 * here, as by {@link RateLimiter}; a caller no entry matches costs nothing (no round trip).
 *
 * A limit that refills at least 2 tokens per replica within `leaseMs` is served from a lease
 * ({@link TokenLeases}): the replica takes a batch of tokens in one round trip and serves takes from
 * it with none. A smaller limit is one `EVALSHA` per take ({@link takeToken}). When the link is
 * down, or a request fails or times out, a local bucket with the limit divided by `replicas`
 * decides instead, and the fallback is counted (`counters.fallbacks`). Nothing is reconciled when
 * Redis comes back: its buckets simply take over again (at worst a principal gets one extra burst
 * per replica at the switch).
 *
 * @example
 * const reads = new SharedRateLimiter('reads', config.limits.reads, link, { replicas: 3, timeoutMs: 250 });
 * await reads.take(caller); // { ok: true } or { ok: false, retryAfterMs }
 */
export class SharedRateLimiter implements Limiter {
  private readonly fallback: RateLimiter;
  private readonly leaseMs: number;
  /** This limiter's leases, one per principal whose limit is large enough. */
  readonly leases: TokenLeases;
  private onClose: (() => void) | undefined;

  constructor(
    private readonly bucket: string,
    limits: readonly BucketLimit[],
    private readonly link: SharedLink,
    private readonly options: SharedRateLimiterOptions,
  ) {
    const { replicas, timeoutMs, leaseMs: _l, onClose: _c, ...local } = options;
    this.fallback = new RateLimiter(limits, { ...local, share: replicas });
    this.leaseMs = options.leaseMs ?? 250;
    this.onClose = options.onClose;
    this.leases = new TokenLeases({
      link,
      replicas,
      leaseMs: this.leaseMs,
      timeoutMs,
      now: options.now ?? (() => performance.now()),
      maxLeases: options.maxPrincipals ?? 10_000,
    });
  }

  take(caller: RateLimitSubject): TakeResult | Promise<TakeResult> {
    const limit = this.fallback.limitFor(caller);
    if (limit === undefined) return OK;
    if (!this.link.ready) return this.local(caller);
    const key = `${this.link.prefix}rl:${this.bucket}:${caller.principal}`;
    const perMs = perMinuteOf(limit) / 60_000;
    const cap = leaseCap(limit.burst, perMs, this.options.replicas, this.leaseMs);
    if (cap >= 2) return this.leases.take({ key, burst: limit.burst, perMs, cap }, () => this.local(caller));
    return takeToken(this.link, key, limit.burst, perMs, this.options.timeoutMs).then(
      (answer): TakeResult => (answer.ok ? OK : { ok: false, retryAfterMs: answer.retryAfterMs }),
      () => this.local(caller),
    );
  }

  /**
   * Gives every lease back to Redis (on shutdown, and when a reload replaced these limits). Takes
   * after it still work, one round trip each. Idempotent.
   */
  close(): Promise<void> {
    const onClose = this.onClose;
    this.onClose = undefined;
    onClose?.();
    return this.leases.close();
  }

  private local(caller: RateLimitSubject): TakeResult {
    this.link.counters.fallbacks++;
    return this.fallback.take(caller);
  }
}
