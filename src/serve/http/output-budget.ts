// Answer bytes queued for one principal that its clients have not read: refused past the bound, and a connection that does not read is closed.
import type { ServerResponse } from 'node:http';

/** Options of {@link OutputBudget}. */
export interface OutputBudgetOptions {
  /** Bound on one principal's unread bytes (`wire.maxQueuedBytesPerPrincipal`). */
  max: number;
  /** Called when a response is closed because its write took its principal past the bound. */
  onClose?: (principal: string, queued: number) => void;
}

/**
 * Tracks every HTTP response of each principal and the bytes written to it that its client has
 * not taken yet (`writableLength`: Node's buffers, the kernel's excluded). A principal at the bound
 * is `full`: the endpoint refuses its new requests (429, backpressure). A write that takes the
 * principal past the bound closes that response, unless it is the principal's only response with
 * bytes queued (one answer always goes; its size is bounded by the upstream's `maxResponseBytes`).
 * Memory held for a principal's unread answers thus stays within `max` plus one answer, however
 * many connections it opens and leaves unread.
 */
export class OutputBudget {
  private readonly open = new Map<string, Set<ServerResponse>>();

  constructor(private readonly options: OutputBudgetOptions) {}

  /** Follows `res` for `principal` until it closes. */
  track(principal: string, res: ServerResponse): void {
    let set = this.open.get(principal);
    if (!set) this.open.set(principal, (set = new Set()));
    set.add(res);
    res.once('close', () => {
      set.delete(res);
      if (set.size === 0 && this.open.get(principal) === set) this.open.delete(principal);
    });
    const check = () => this.check(principal, res);
    // eslint-disable-next-line @typescript-eslint/unbound-method -- applied below with the response's own `this`
    const write = res.write;
    // eslint-disable-next-line @typescript-eslint/unbound-method -- as above
    const end = res.end;
    res.write = function (this: ServerResponse, ...args: unknown[]) {
      const r = (write as (...a: unknown[]) => boolean).apply(this, args);
      check();
      return r;
    } as ServerResponse['write'];
    res.end = function (this: ServerResponse, ...args: unknown[]) {
      const r = (end as (...a: unknown[]) => ServerResponse).apply(this, args);
      check();
      return r;
    } as ServerResponse['end'];
  }

  /** Bytes written to `principal`'s open responses that its clients have not read. */
  queued(principal: string): number {
    let n = 0;
    for (const res of this.open.get(principal) ?? []) n += res.writableLength;
    return n;
  }

  /** True when `principal` has `max` bytes or more unread: its new requests wait (429). */
  full(principal: string): boolean {
    return this.queued(principal) >= this.options.max;
  }

  private check(principal: string, res: ServerResponse): void {
    if (res.destroyed) return;
    const mine = res.writableLength;
    const queued = this.queued(principal);
    if (queued <= this.options.max || queued === mine) return;
    this.options.onClose?.(principal, queued);
    res.destroy();
  }
}
