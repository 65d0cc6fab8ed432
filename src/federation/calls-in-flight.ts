// Tool calls and prompt gets in flight per upstream: where an upstream's log message during a call goes.
import type { SignalSource } from '../cancel.js';
import type { CallRelay } from './relay.js';

/** What the caller of one call hears besides its answer. */
export interface CallContext {
  /** Aborts when the caller cancels. */
  signal?: SignalSource | undefined;
  /** Who the call is for (fair share of the upstream's slots). */
  principal?: string | undefined;
  /** The upstream's progress, relayed (the caller asked with a progress token). */
  onProgress?: ((progress: { progress: number; total?: number; message?: string }) => void) | undefined;
  /** An upstream `notifications/message` sent while this call was the only one in flight to it. */
  onMessage?: ((params: Record<string, unknown>) => void) | undefined;
  /**
   * How the call reaches its upstream: the era bridge's relay for this request, so that what the
   * upstream asks back during the call (elicitation, sampling, roots, `input_required`) reaches this
   * caller in its era. Default: straight upstream (its requests for input are declined).
   */
  relay?: CallRelay | undefined;
  /** Reserved `_meta` keys the upstream call carries for this caller (its log level). Default: none. */
  meta?: Record<string, unknown> | undefined;
}

/**
 * The calls in flight to each upstream. A `notifications/message` carries no request id, so it is
 * relayed only when exactly one call to its upstream is in flight (it can only be about that one);
 * with several, or none, it goes to the log only: never to a caller it may not be about.
 */
export class CallsInFlight {
  private readonly byServer = new Map<string, Set<CallContext>>();

  /**
   * Runs `call` with `relay` registered as in flight to `server`, until its promise settles (one
   * `.then` on it, not an async frame: this is on every call's path).
   */
  during<T>(server: string, relay: CallContext, call: () => Promise<T>): Promise<T> {
    let set = this.byServer.get(server);
    if (!set) this.byServer.set(server, (set = new Set()));
    const inFlight = set;
    inFlight.add(relay);
    const done = (): void => {
      inFlight.delete(relay);
      if (inFlight.size === 0 && this.byServer.get(server) === inFlight) this.byServer.delete(server);
    };
    let pending: Promise<T>;
    try {
      pending = call();
    } catch (err) {
      done();

      return Promise.reject(err);
    }
    return pending.then(
      (value) => (done(), value),
      (err: unknown) => {
        done();
        throw err;
      },
    );
  }

  /** An upstream's `notifications/message`: to the one caller it can be about; false when none. */
  message(server: string, params: Record<string, unknown> | undefined): boolean {
    const set = this.byServer.get(server);
    if (!set || set.size !== 1 || !params) return false;
    const [only] = set;
    if (!only?.onMessage) return false;
    only.onMessage(params);
    return true;
  }
}
