// Leases of shared tokens: a replica takes a batch from a Redis bucket in one round trip and serves reads from it with none, refilling it ahead of need.
import { LRUCache } from 'lru-cache';
import type { SharedLink } from '../shared-state/link.js';
import { giveBackTokens, leaseTokens, type LeaseAnswer } from '../shared-state/token-lease.js';
import type { TakeResult } from './rate-limiter.js';

/** Most of a bucket's burst the replicas may hold in leases at once, together. */
export const BURST_SHARE = 0.1;

/** A lease's first size; it doubles while the demand drains it fast, up to the bucket's cap. */
const FIRST_SIZE = 2;

/**
 * The most tokens one replica may hold of a bucket at once: the replicas together hold at most the
 * tokens the bucket refills in `leaseMs`, and at most {@link BURST_SHARE} of its burst. Below 2, a
 * lease would save nothing: the bucket is taken one token per read, as without leases.
 */
export function leaseCap(burst: number, perMs: number, replicas: number, leaseMs: number): number {
  return Math.floor(Math.min(perMs * leaseMs, burst * BURST_SHARE) / replicas);
}

/** The shared bucket a lease is taken from. */
export interface LeasedBucket {
  /** Its Redis key. */
  readonly key: string;
  readonly burst: number;
  /** Refill per millisecond. */
  readonly perMs: number;
  /** {@link leaseCap}: at least 2. */
  readonly cap: number;
}

/** Options of {@link TokenLeases}. */
export interface TokenLeasesOptions {
  link: SharedLink;
  /** Replicas sharing the buckets (`redis.replicas`): a bucket holding less than all their caps is nearly empty. */
  replicas: number;
  /** A lease unused this long after its last grant is given back (`redis.leaseMs`). */
  leaseMs: number;
  /** Longest wait for Redis (`redis.timeoutMs`). */
  timeoutMs: number;
  /** Monotonic milliseconds. */
  now: () => number;
  /** Most (bucket, principal) leases kept; the least recently used is given back and dropped past it. */
  maxLeases: number;
}

interface Lease {
  bucket: LeasedBucket;
  /** Whole tokens left to serve. */
  tokens: number;
  /** How many tokens the lease is refilled to: adaptive, 2 to `bucket.cap`. */
  size: number;
  /** Clock time of the last grant (undefined before the first). */
  grantedAt: number | undefined;
  /** Past this, the tokens left are given back. */
  expiresAt: number;
  /** The bucket held enough at the last answer to lease from (not nearly empty). */
  roomy: boolean;
  /** The lease request in flight: every take that finds the lease empty waits on this one. */
  fetching: Promise<LeaseAnswer> | undefined;
}

const OK: TakeResult = Object.freeze({ ok: true });

/** A refill is started when a lease falls to this many tokens, so a steady stream never waits for it (a lease of 2 or 3: when it is empty). */
const lowWater = (size: number): number => Math.floor(size / 4);

/**
 * The leases one limiter holds, one per (bucket, principal). A take serves from the lease with no
 * round trip; at the low-water mark the lease is refilled in the background (one `EVALSHA` of
 * TOKEN_LEASE_LUA for up to its size); a take that finds it empty waits for that one request, with
 * every other take that does (no stampede). The size starts at 2 and doubles each time the lease is
 * drained within half of `leaseMs`, up to the bucket's cap; it halves when a lease expires unused.
 * A lease unused for `leaseMs` is given back to the bucket (checked by a timer while any lease holds
 * tokens, so within twice `leaseMs`), as is one dropped from the bounded map or held at `close()`.
 * When the bucket is nearly empty (under `replicas × cap`), Redis grants one token per request and
 * nothing is fetched ahead: every take is one round trip, exactly as without leases.
 *
 * Every token served was taken from the shared bucket, so the replicas together never serve more
 * than one bucket allows, beyond the tokens held at a moment (at most `replicas × cap`); tokens a
 * replica holds and does not use are what the others miss, the same bound.
 */
export class TokenLeases {
  private readonly leases: LRUCache<string, Lease>;
  /** Leases holding tokens: the ones a sweep looks at. */
  private readonly held = new Set<Lease>();
  /** Lease requests and give-backs in flight. */
  private readonly inFlight = new Set<Promise<unknown>>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: TokenLeasesOptions) {
    this.leases = new LRUCache<string, Lease>({
      max: options.maxLeases,
      dispose: (lease, _key, reason) => {
        if (reason === 'evict') void this.giveBack(lease);
      },
    });
  }

  /** Takes one token of `bucket`: from the lease at once, else after one lease request. `fallback` decides when Redis fails. */
  take(bucket: LeasedBucket, fallback: () => TakeResult): TakeResult | Promise<TakeResult> {
    if (this.closed) return this.unleased(bucket, fallback);
    let lease = this.leases.get(bucket.key);
    if (lease === undefined) {
      lease = { bucket, tokens: 0, size: Math.min(FIRST_SIZE, bucket.cap), grantedAt: undefined, expiresAt: 0, roomy: true, fetching: undefined };
      this.leases.set(bucket.key, lease);
    } else {
      lease.bucket = bucket;
      if (lease.tokens > 0 && this.options.now() >= lease.expiresAt) void this.giveBack(lease);
    }
    return this.serve(lease) ? OK : this.wait(lease, fallback);
  }

  /** Gives back every lease unused for `leaseMs` (runs by itself while leases hold tokens); resolves when Redis has them. */
  sweep(): Promise<void> {
    const now = this.options.now();
    const given: Promise<void>[] = [];
    for (const lease of this.held) if (now >= lease.expiresAt) given.push(this.giveBack(lease));
    return Promise.all(given).then(() => undefined);
  }

  /** Tokens held in leases now, not yet served (the most the others can miss). */
  get heldTokens(): number {
    let n = 0;
    for (const lease of this.held) n += lease.tokens;
    return n;
  }

  /** Resolves once no lease request or give-back is in flight (every refill fetched ahead has landed, every give-back is counted, or failed). */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Leases kept (bounded by `maxLeases`). */
  get size(): number {
    return this.leases.size;
  }

  /**
   * Gives every lease back and stops the timer; resolves when Redis has them (or failed to). Lease
   * requests still in flight land first and what they granted goes back too; takes after it (a
   * replica still draining, or the rules a reload replaced) cost one round trip each, as without
   * leases, so nothing is held once it has resolved. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return this.settled();
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    do {
      await Promise.all([...this.held].map((lease) => this.giveBack(lease)));
      await this.settled();
    } while (this.held.size > 0);
  }

  /** One token for one take, with no lease (after {@link close}); `fallback` decides when Redis fails. */
  private unleased(bucket: LeasedBucket, fallback: () => TakeResult): Promise<TakeResult> {
    return leaseTokens(this.options.link, bucket.key, bucket, 1, 0, this.options.timeoutMs).then(
      (answer): TakeResult => (answer.granted > 0 ? OK : { ok: false, retryAfterMs: answer.retryAfterMs }),
      fallback,
    );
  }

  /** Serves one token from the lease if it has one, and refills it ahead when it runs low. */
  private serve(lease: Lease): boolean {
    if (lease.tokens < 1) return false;
    lease.tokens--;
    if (lease.tokens === 0) this.held.delete(lease);
    if (lease.roomy && !this.closed && lease.fetching === undefined && lease.tokens <= lowWater(lease.size)) this.fetch(lease).catch(() => undefined);
    return true;
  }

  private async wait(lease: Lease, fallback: () => TakeResult): Promise<TakeResult> {
    try {
      // Each pass either answers or waits on a request that granted tokens someone else served first.
      for (;;) {
        if (lease.fetching === undefined && (!lease.roomy || this.closed)) return await this.single(lease);
        const answer = await (lease.fetching ?? this.fetch(lease));
        if (this.serve(lease)) return OK;
        if (answer.granted === 0) return { ok: false, retryAfterMs: answer.retryAfterMs };
      }
    } catch {
      return fallback();
    }
  }

  /** The bucket is nearly empty: one token for this take alone, as without leases (concurrent takes go in parallel). */
  private async single(lease: Lease): Promise<TakeResult> {
    const { bucket } = lease;
    const answer = await leaseTokens(this.options.link, bucket.key, bucket, 1, this.reserve(bucket), this.options.timeoutMs);
    lease.roomy = answer.roomy;
    return answer.granted > 0 ? OK : { ok: false, retryAfterMs: answer.retryAfterMs };
  }

  /** Requests the lease's refill: the one request in flight for it, whoever waits. */
  private fetch(lease: Lease): Promise<LeaseAnswer> {
    const { bucket } = lease;
    const want = Math.max(1, Math.min(lease.size, bucket.cap) - lease.tokens);
    const askedAt = this.options.now();
    const fetching: Promise<LeaseAnswer> = leaseTokens(this.options.link, bucket.key, bucket, want, this.reserve(bucket), this.options.timeoutMs).then(
      (answer) => {
        lease.fetching = undefined;
        this.inFlight.delete(fetching);
        this.granted(lease, answer, want, askedAt);
        return answer;
      },
      (err: unknown) => {
        lease.fetching = undefined;
        this.inFlight.delete(fetching);
        throw err;
      },
    );
    lease.fetching = fetching;
    this.inFlight.add(fetching);
    return fetching;
  }

  private granted(lease: Lease, answer: LeaseAnswer, want: number, askedAt: number): void {
    lease.roomy = answer.roomy;
    if (answer.granted === 0) return;
    this.options.link.counters.leasedTokens += answer.granted;
    // Drained to the low-water mark within half a lease's life: the demand outruns the lease.
    if (answer.granted === want && lease.grantedAt !== undefined && askedAt - lease.grantedAt < this.options.leaseMs / 2) {
      lease.size = Math.min(lease.bucket.cap, lease.size * 2);
    }
    const now = this.options.now();
    lease.tokens += answer.granted;
    lease.grantedAt = now;
    lease.expiresAt = now + this.options.leaseMs;
    this.held.add(lease);
    this.arm();
  }

  /** A bucket under this is nearly empty: every replica's full lease would not fit in it. */
  private reserve(bucket: LeasedBucket): number {
    return this.options.replicas * bucket.cap;
  }

  /**
   * Puts a lease's unused tokens back in its bucket, and halves its size. Nobody waits for it (the
   * promise is for sweeps and close); the tokens are lost if Redis is out of reach.
   */
  private giveBack(lease: Lease): Promise<void> {
    const count = lease.tokens;
    lease.tokens = 0;
    lease.size = Math.max(Math.min(FIRST_SIZE, lease.bucket.cap), Math.floor(lease.size / 2));
    this.held.delete(lease);
    if (count === 0 || !this.options.link.ready) return Promise.resolve();
    const { counters } = this.options.link;
    const given: Promise<void> = giveBackTokens(this.options.link, lease.bucket.key, lease.bucket, count, this.options.timeoutMs).then(
      () => void (counters.returnedTokens += count),
      () => undefined,
    );
    this.inFlight.add(given);
    void given.then(() => this.inFlight.delete(given));
    return given;
  }

  /** While leases hold tokens, a sweep every `leaseMs` (the timer never keeps the process alive). */
  private arm(): void {
    if (this.timer !== undefined || this.closed || this.held.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.sweep();
      this.arm();
    }, this.options.leaseMs);
    this.timer.unref();
  }
}
