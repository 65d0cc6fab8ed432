// Upstream liveness: ping a connection that has been idle for `pingIntervalMs`; after `pingFailures` pings in a row go unanswered, it is dead.

/** Timers and the clock liveness runs on (injected in tests). */
export interface LivenessClock {
  /** Monotonic milliseconds. */
  now(): number;
  /** Calls `fn` after `ms`; returns the cancel function. */
  after(fn: () => void, ms: number): () => void;
}

/** The default clock: `performance.now` and unref'd timers (liveness never keeps the process alive). */
export const realLivenessClock: LivenessClock = {
  now: () => performance.now(),
  after(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return () => clearTimeout(t);
  },
};

/** Options of {@link Liveness}. */
export interface LivenessOptions {
  /** Idle time before a ping; 0 turns liveness off. */
  intervalMs: number;
  /** Consecutive unanswered pings that make the connection dead (at least 1). */
  failures: number;
  /** The upstream's request timeout: a ping waits at most this long (and at most `intervalMs / failures`). */
  timeoutMs: number;
  /** Sends one ping that gives up after `timeoutMs`; resolves when any answer came (an error answer too), rejects when none did. */
  ping(timeoutMs: number): Promise<void>;
  /** Called once, when the connection is taken for dead. */
  onDead(misses: number): void;
  clock?: LivenessClock;
}

/**
 * Watches one connection. Anything heard from the upstream counts as activity ({@link Liveness.heard},
 * one assignment); once nothing has been heard for `intervalMs` a ping goes out, and each unanswered
 * one is followed at once by the next, so a connection that went silent is declared dead within
 * about two intervals of its last sign of life (the idle interval, then `failures` pings of at most
 * `intervalMs / failures` each).
 *
 * @example
 * const live = new Liveness({ intervalMs: 30_000, failures: 2, timeoutMs: 30_000, ping: (ms) => client.ping({ timeout: ms }), onDead: () => recycle() });
 * live.start();
 */
export class Liveness {
  private last: number;
  private misses = 0;
  private cancel: (() => void) | undefined;
  private closed = false;
  private readonly clock: LivenessClock;
  private readonly pingTimeoutMs: number;

  constructor(private readonly options: LivenessOptions) {
    this.clock = options.clock ?? realLivenessClock;
    this.last = this.clock.now();
    const failures = Math.max(1, options.failures);
    this.pingTimeoutMs = Math.max(1, Math.min(options.timeoutMs, Math.floor(options.intervalMs / failures)));
  }

  /** Starts watching (no-op when `intervalMs` is 0). */
  start(): void {
    if (this.options.intervalMs > 0 && !this.closed) this.arm(this.options.intervalMs);
  }

  /** Something came from the upstream: the idle time starts again. */
  heard(): void {
    this.last = this.clock.now();
  }

  /** Stops watching. Idempotent. */
  close(): void {
    this.closed = true;
    this.cancel?.();
    this.cancel = undefined;
  }

  private arm(ms: number): void {
    this.cancel = this.clock.after(() => void this.tick(), ms);
  }

  private async tick(): Promise<void> {
    this.cancel = undefined;
    if (this.closed) return;
    const idle = this.clock.now() - this.last;
    if (idle < this.options.intervalMs && this.misses === 0) return this.arm(this.options.intervalMs - idle);
    let answered: boolean;
    try {
      await this.options.ping(this.pingTimeoutMs);
      answered = true;
    } catch {
      answered = false;
    }
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- close() may have run while the ping was awaited
    if (this.closed) return;
    if (answered) {
      this.misses = 0;
      this.heard();
      return this.arm(this.options.intervalMs);
    }
    this.misses++;
    if (this.misses >= Math.max(1, this.options.failures)) {
      this.close();
      return this.options.onDead(this.misses);
    }
    this.arm(0); // the next ping at once: a silent upstream is found within the interval
  }
}
