// A request's cancellation without an AbortSignal until someone needs one: the hot path's reads and calls are answered with none made. Pure leaf.

/**
 * One request's cancellation. Its `AbortController` is made only when a real `AbortSignal` is asked
 * for ({@link signal}); the fast paths listen with {@link onAbort} instead, which costs an array slot.
 * Aborted before a signal is asked for, the signal it then makes is already aborted with the same reason.
 *
 * @example const cancel = new LazyAbort(); gate.read(caller, uri, cancel); … cancel.abort(reason);
 */
export class LazyAbort {
  private controller: AbortController | undefined;
  private listeners: (() => void)[] | undefined;
  /** Whether {@link abort} was called. */
  aborted = false;
  /** What {@link abort} was called with. */
  reason: unknown;

  /** The request's signal, made on first call. */
  signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** Throws the reason when aborted (as `AbortSignal.throwIfAborted`). */
  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  /** Calls `listener` once when the request is aborted (at once, if it was). Returns what removes it. */
  onAbort(listener: () => void): () => void {
    if (this.aborted) {
      listener();
      return NOTHING;
    }
    (this.listeners ??= []).push(listener);
    return () => {
      const at = this.listeners?.indexOf(listener) ?? -1;
      if (at !== -1) this.listeners?.splice(at, 1);
    };
  }

  /** Aborts the request (once; later calls do nothing): the signal, if made, then the listeners. */
  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners) for (const l of listeners) l();
  }
}

const NOTHING = (): void => undefined;

/** An `AbortSignal`, or a {@link LazyAbort} that makes one only when asked. */
export type SignalSource = AbortSignal | LazyAbort;

/** The `AbortSignal` that `source` stands for (made now for a {@link LazyAbort}). */
export function signalOf(source: SignalSource | undefined): AbortSignal | undefined {
  return source instanceof LazyAbort ? source.signal() : source;
}

/** Calls `listener` once when `source` aborts (at once, if it has); returns what removes it. */
export function onAbort(source: SignalSource, listener: () => void): () => void {
  if (source instanceof LazyAbort) return source.onAbort(listener);
  if (source.aborted) {
    listener();
    return NOTHING;
  }
  source.addEventListener('abort', listener, { once: true });
  return () => source.removeEventListener('abort', listener);
}
