// One tools/call or prompts/get with its caller's progress and messages relayed, answered only after what it relayed has been handed to the transport.
import type { SignalSource } from '../cancel.js';
import type { CallContext } from '../federation/calls-in-flight.js';

/** What one relayed call needs from the request being served. */
export interface RelayedRequest {
  /** Aborts when the caller cancels. */
  signal: SignalSource;
  principal: string;
  /** The caller's progress token, when it asked for progress. */
  progressToken: unknown;
  /** Sends one notification to the caller, tied to this request. */
  notify(notification: { method: string; params: Record<string, unknown> }): Promise<void>;
  /** The bridge's relay for this request (what the upstream asks back reaches this caller). */
  relay: CallContext['relay'];
  /** Reserved `_meta` keys the upstream call carries for this caller. */
  meta: CallContext['meta'];
}

/**
 * Runs `call` with the caller's progress and messages relayed, and resolves only once every relayed
 * notification has been handed to the transport: one sent just before the result would otherwise be
 * overtaken by it (and lost on an HTTP stream the result closes). Not an async function, and nothing
 * made for what is never relayed: this is on every call's path.
 */
export function relayedCall<T>(request: RelayedRequest, call: (context: CallContext) => Promise<T>): Promise<T> {
  const token = request.progressToken;
  let sending: Set<Promise<unknown>> | undefined; // made at the first relayed notification
  const notify = (method: string, params: Record<string, unknown>) => {
    const sent = request.notify({ method, params }).catch(() => undefined);
    const pending = (sending ??= new Set());
    pending.add(sent);
    void sent.then(() => pending.delete(sent));
  };
  let result: Promise<T>;
  try {
    result = call({
      signal: request.signal,
      principal: request.principal,
      relay: request.relay,
      meta: request.meta,
      onProgress:
        typeof token === 'string' || typeof token === 'number'
          ? (p: { progress: number; total?: number; message?: string }) => notify('notifications/progress', { ...p, progressToken: token })
          : undefined,
      onMessage: (params: Record<string, unknown>) => notify('notifications/message', params),
    });
  } catch (err) {
    return Promise.reject(err);
  }
  return result.then((value) => (sending === undefined ? value : afterRelayed(sending, value)));
}

/** `value`, once every notification relayed before it has been handed to the transport and one more turn has passed. */
async function afterRelayed<T>(sending: Set<Promise<unknown>>, value: T): Promise<T> {
  if (sending.size > 0) await Promise.all(sending);
  // A client on SDK 1.x/2.x drops a progress notification it reads in the same chunk as the response
  // (its notification handlers run a microtask late; the response removes the progress handler at
  // once): after relaying any, the answer waits one turn of the event loop, so it is written apart.
  await new Promise<void>((resolve) => setImmediate(resolve));
  return value;
}
