// A 2026-07-28 upstream's subscriptions/listen stream, kept in line with the set of URIs the relay holds.

/** What an open listen stream offers (SDK 2.x `McpSubscription`). */
export interface ListenStream {
  close(): Promise<void>;
  /** Settles when the stream ends: `local` (we closed it), `graceful` or `remote` (the upstream did, or the connection dropped). */
  readonly closed?: Promise<'local' | 'graceful' | 'remote'>;
}

/** Options of {@link ListenFilter}. */
export interface ListenFilterOptions {
  /**
   * Called with the URIs of a stream the upstream ended, once a new stream holds them again:
   * anything may have changed in between (the caller reports them as updated).
   */
  onReopened?: (uris: string[]) => void;
  /** Delays between attempts to reopen a lost stream, doubling. Default: 100 ms up to 5 s. */
  retry?: { initialMs: number; maxMs: number };
  /**
   * Keep a stream open even with no URI held (it also carries the upstream's list changes, see
   * `start()`). Default: false (no URI, no stream).
   */
  always?: boolean;
}

/**
 * One listen stream per upstream connection, whose filter is the set of URIs held. A listen filter
 * cannot be changed in place, so a change opens a stream with the new set and only then closes the
 * old one: no update falls between them. Changes that arrive while a stream is being opened are
 * folded into the next one, so a burst of subscriptions costs one reopening, not one each.
 */
export class ListenFilter {
  private readonly uris = new Set<string>();
  private stream: ListenStream | undefined;
  private running: Promise<void> | undefined;
  private dirty = false;
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly open: (uris: string[]) => Promise<ListenStream>,
    private readonly options: ListenFilterOptions = {},
  ) {}

  /** Opens the stream when one is wanted without any URI (`always`); retried with backoff while it fails. */
  start(): void {
    if (!this.options.always || this.closed) return;
    const initial = this.options.retry?.initialMs ?? 100;
    this.reconcile().catch(() => {
      this.retryTimer = setTimeout(() => this.reopen(initial * 2), initial);
      this.retryTimer.unref();
    });
  }

  /** Adds `uri`; resolves once a stream that includes it is acknowledged (rejects if that failed). */
  add(uri: string): Promise<void> {
    if (this.uris.has(uri) && !this.dirty && this.running === undefined) return Promise.resolve();
    this.uris.add(uri);
    return this.reconcile();
  }

  /** Removes `uri`; resolves once the stream without it is in place (or none is left). */
  remove(uri: string): Promise<void> {
    if (!this.uris.delete(uri)) return Promise.resolve();
    return this.reconcile();
  }

  /** Closes the stream (best effort) and forgets every URI. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.uris.clear();
    const stream = this.stream;
    this.stream = undefined;
    await stream?.close().catch(() => undefined);
  }

  private reconcile(): Promise<void> {
    this.dirty = true;
    if (this.running) return this.running.then(() => (this.dirty ? this.reconcile() : undefined));
    const run = (async () => {
      while (this.dirty && !this.closed) {
        this.dirty = false;
        const wanted = [...this.uris];
        const next = wanted.length > 0 || this.options.always ? await this.open(wanted) : undefined;
        const old = this.stream;
        this.stream = next;
        if (next) this.watch(next);
        await old?.close().catch(() => undefined);
      }
    })();
    this.running = run.finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /**
   * A stream the upstream ends (a restart of a stateless HTTP server, a dropped connection, a
   * graceful close) is reopened with the current set, retrying with backoff while it fails; its
   * URIs are then reported, since changes in the gap went unheard.
   */
  private watch(stream: ListenStream): void {
    void stream.closed?.then((why) => {
      if (why === 'local' || this.closed || this.stream !== stream) return;
      this.stream = undefined;
      this.reopen(this.options.retry?.initialMs ?? 100);
    });
  }

  private reopen(delayMs: number): void {
    if (this.closed || (this.uris.size === 0 && !this.options.always)) return;
    this.reconcile().then(
      () => {
        if (this.stream) this.options.onReopened?.([...this.uris]);
      },
      () => {
        const max = this.options.retry?.maxMs ?? 5_000;
        this.retryTimer = setTimeout(() => this.reopen(Math.min(delayMs * 2, max)), delayMs);
        this.retryTimer.unref();
      },
    );
  }
}
