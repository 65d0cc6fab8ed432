// A request's abort signal made only when something waits on it (a cache hit never does): the signal, or how to make it.

/** An `AbortSignal`, or a function that makes it on first ask (and gives the same one after). */
export type SignalSource = AbortSignal | (() => AbortSignal);

/** The signal `source` stands for (made now when it is a function). */
export function signalOf(source: SignalSource | undefined): AbortSignal | undefined {
  return typeof source === 'function' ? source() : source;
}

/**
 * One request's cancellation, with its `AbortController` made only when a signal is asked for:
 * on the hot path most requests are answered without anyone listening (a cache hit). Aborted
 * before then, the signal it makes is already aborted with the same reason.
 *
 * @example const cancel = new LazyAbort(); gate.read(caller, uri, cancel.signal); … cancel.abort(reason);
 */
export class LazyAbort {
  private controller: AbortController | undefined;
  private why: unknown;
  /** Whether {@link abort} was called. */
  aborted = false;

  /** The request's signal (a {@link SignalSource}: made on first call). */
  readonly signal = (): AbortSignal => {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.why);
    }
    return this.controller.signal;
  };

  /** Aborts the request (once; later calls do nothing). */
  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.why = reason;
    this.controller?.abort(reason);
  }
}
