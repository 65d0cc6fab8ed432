// A 2026-07-28 upstream's subscriptions/listen stream, kept in line with the set of URIs the relay holds.

/** What an open listen stream offers (SDK 2.x `McpSubscription`). */
export interface ListenStream {
  close(): Promise<void>;
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

  constructor(private readonly open: (uris: string[]) => Promise<ListenStream>) {}

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
        const next = wanted.length > 0 ? await this.open(wanted) : undefined;
        const old = this.stream;
        this.stream = next;
        await old?.close().catch(() => undefined);
      }
    })();
    this.running = run.finally(() => {
      this.running = undefined;
    });
    return this.running;
  }
}
