// The requests a fast lane answers itself, by id: each one's cancellation, and a client's notifications/cancelled applied to it.
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { LazyAbort } from '../cancel.js';

type Id = string | number;

const CANCELLED = 'notifications/cancelled';

/** The signal of a lane caller's bridge downstream: never read for a caller that can be asked nothing. */
export const NEVER_ABORTED: AbortSignal = new AbortController().signal;

/**
 * The requests one lane has in flight. {@link start} gives each its cancellation; {@link end} forgets
 * it once answered (only if it is still the one under that id); {@link cancel} applies a client's
 * `notifications/cancelled` to the request it names, if the lane holds it (the notification goes on to
 * the SDK either way).
 */
export class LaneRequests {
  private readonly inFlight = new Map<Id, LazyAbort>();

  /** A request the lane answers: its cancellation, kept under `id`. */
  start(id: Id): LazyAbort {
    const cancel = new LazyAbort();
    this.inFlight.set(id, cancel);
    return cancel;
  }

  /** The request under `id` was answered (or failed): forgotten, unless a newer one took the id. */
  end(id: Id, cancel: LazyAbort): void {
    if (this.inFlight.get(id) === cancel) this.inFlight.delete(id);
  }

  /** Aborts the lane's request that a `notifications/cancelled` names; anything else is left alone. */
  cancel(message: JSONRPCMessage): void {
    if (this.inFlight.size === 0 || (message as { method?: unknown }).method !== CANCELLED) return;
    const params = (message as { params?: { requestId?: unknown; reason?: unknown } }).params;
    const id = params?.requestId;
    const cancel = typeof id === 'string' || typeof id === 'number' ? this.inFlight.get(id) : undefined;
    if (!cancel) return;
    this.inFlight.delete(id as Id);
    cancel.abort(params?.reason);
  }
}

/**
 * `start()`, a synchronous throw turned into a rejection: a lane answers it like any failure (as the
 * SDK's dispatch does), never throws it into the transport.
 */
export function started<T>(start: () => Promise<T>): Promise<T> {
  try {
    return start();
  } catch (err) {
    return Promise.reject(err);
  }
}
