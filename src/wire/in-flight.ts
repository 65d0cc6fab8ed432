// Requests a client has in flight on one connection, with backpressure: past the bound, reading pauses until answers go out.

/**
 * Counts a connection's requests from arrival to answer (or to the client's own cancel, after which
 * the SDK sends nothing). When `max` are in flight, `pause()` stops reading the client's input;
 * once half of them are answered, `resume()` reads on. A client that pipelines requests faster than
 * the upstreams answer thus waits in its own pipe (the OS bounds it) instead of in our memory.
 * Ids are counted per value, so a client that reuses one id cannot hide requests behind it.
 */
export class InFlightGate {
  private readonly ids = new Map<string | number, number>();
  private count = 0;
  private paused = false;

  constructor(
    private readonly max: number,
    private readonly pause: () => void,
    private readonly resume: () => void,
  ) {}

  /** Requests in flight now. */
  get size(): number {
    return this.count;
  }

  /** A request with this id arrived. */
  opened(id: string | number): void {
    this.ids.set(id, (this.ids.get(id) ?? 0) + 1);
    if (++this.count >= this.max && !this.paused) {
      this.paused = true;
      this.pause();
    }
  }

  /** A request with this id was answered or cancelled; unknown ids (already settled) are ignored. */
  closed(id: unknown): void {
    if (typeof id !== 'string' && typeof id !== 'number') return;
    const n = this.ids.get(id);
    if (n === undefined) return;
    if (n <= 1) this.ids.delete(id);
    else this.ids.set(id, n - 1);
    this.count--;
    if (this.paused && this.count <= this.max / 2) {
      this.paused = false;
      this.resume();
    }
  }
}
