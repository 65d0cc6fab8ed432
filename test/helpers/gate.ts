// Test synchronisation without sleeps: a latch to release, a counter to await, and a bound on any wait.

/** A promise plus its resolver. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

export { counter, type Counter } from './counter.mjs';

/** How long a test waits for an event before failing with a readable message. */
export const EVENT_TIMEOUT_MS = 10_000;

/** Rejects with a readable message when `p` has not settled within `ms` (a bound on an event wait, never a sleep). */
export async function within<T>(p: Promise<T>, what: string, ms = EVENT_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
