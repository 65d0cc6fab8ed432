// An SSE response read as it arrives (a GET stream or a 2026 listen): its JSON-RPC messages, waits on them, and its end.

/** One SSE response read as it arrives: its JSON-RPC messages, and when it ends. */
export class Stream {
  readonly messages: Record<string, unknown>[] = [];
  readonly ended: Promise<void>;
  private listeners = new Set<() => void>();
  /** `onData` sees each event's data as sent, before it is parsed (a raw client's carrier reads it so). */
  constructor(
    readonly response: Response,
    private readonly onData?: (data: string) => void,
  ) {
    this.ended = this.read();
  }
  private async read(): Promise<void> {
    const reader = this.response.body!.getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffered += decoder.decode(value, { stream: true });
        let cut: number;
        while ((cut = buffered.indexOf('\n\n')) >= 0) {
          const event = buffered.slice(0, cut);
          buffered = buffered.slice(cut + 2);
          const data = event
            .split('\n')
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('\n');
          if (data) {
            this.onData?.(data);
            this.messages.push(JSON.parse(data) as Record<string, unknown>);
          }
          for (const l of this.listeners) l();
        }
      }
    } catch {
      // aborted or reset: ended all the same
    }
  }
  /** Updates of `uri` received so far. */
  updates(uri: string): number {
    return this.messages.filter((m) => m.method === 'notifications/resources/updated' && (m.params as { uri?: string }).uri === uri).length;
  }
  /** Resolves once `count` updates of `uri` have arrived. */
  untilUpdates(uri: string, count: number): Promise<void> {
    return this.until(() => this.updates(uri) >= count);
  }
  /** Resolves once a message matching `match` has arrived (or, without a message, once `match()` holds). */
  until(match: (m: Record<string, unknown>) => boolean): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (!this.messages.some(match) && !match({})) return;
        this.listeners.delete(check);
        resolve();
      };
      this.listeners.add(check);
      check();
    });
  }
  close(): void {
    void this.response.body?.cancel().catch(() => undefined);
  }
}
