// Changes seen within a window, so one change heard by several replicas (or heard twice by one) is delivered once.

/** Options of {@link RecentChanges}. */
export interface RecentChangesOptions {
  /** The window in ms: a change of the same key within it is a repeat. */
  windowMs: number;
  /** Monotonic ms clock. Default: performance.now. */
  now?: () => number;
  /** Most keys remembered; past it the oldest are forgotten (a repeat of them is then delivered again). Default: 10000. */
  max?: number;
}

/**
 * Remembers when each key (a server id and URI) last changed. `fresh(key)` is true for the first
 * change of a key in `windowMs`, false for a repeat within it (the window does not slide: a change
 * every `windowMs / 2` is delivered every other time). Bounded by `max` keys.
 *
 * @example
 * const recent = new RecentChanges({ windowMs: 500 });
 * recent.fresh('docs\0file:///a'); // true; again within 500 ms: false
 */
export class RecentChanges {
  private readonly seen = new Map<string, number>();
  private readonly now: () => number;
  private readonly max: number;

  constructor(private readonly options: RecentChangesOptions) {
    this.now = options.now ?? (() => performance.now());
    this.max = options.max ?? 10_000;
  }

  /** True (and remembered) when `key` has not changed within the window; false for a repeat. */
  fresh(key: string): boolean {
    const now = this.now();
    const at = this.seen.get(key);
    if (at !== undefined && now - at < this.options.windowMs) return false;
    this.seen.delete(key); // re-inserted last: the map stays in time order
    this.seen.set(key, now);
    this.prune(now);
    return true;
  }

  private prune(now: number): void {
    for (const [key, at] of this.seen) {
      if (this.seen.size <= this.max && now - at < this.options.windowMs) break;
      this.seen.delete(key);
    }
  }
}
