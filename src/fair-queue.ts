// One upstream's request queue: bounded concurrency (p-queue) with a fair share per key, so one hot or hung URI cannot starve the rest.
import PQueue from 'p-queue';

interface KeyState {
  /** Tasks of this key admitted to the shared queue (waiting there or running). */
  admitted: number;
  /** Tasks of this key waiting for admission, oldest first. */
  waiting: (() => void)[];
}

/**
 * Runs tasks with at most `concurrency` at once (p-queue), and admits at most half of that per key
 * (at least one): with `concurrency` 4, forty reads of a hung URI hold two slots and queue the rest
 * behind each other, while a read of any other URI still finds a slot. An aborted `signal` removes a
 * task that has not started; a running task is the caller's to cancel.
 */
export class FairQueue {
  private readonly queue: PQueue;
  private readonly perKey: number;
  private readonly keys = new Map<string, KeyState>();

  constructor(readonly concurrency: number) {
    this.queue = new PQueue({ concurrency });
    this.perKey = Math.max(1, Math.floor(concurrency / 2));
  }

  /** True when a task for `key` added now would not start at once. */
  wouldWait(key: string): boolean {
    return (this.keys.get(key)?.admitted ?? 0) >= this.perKey || this.queue.pending + this.queue.size >= this.concurrency;
  }

  /** Runs `task` when its key's share and a slot allow; rejects with the signal's reason if aborted before it starts. */
  async run<T>(key: string, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const admission = this.admit(key, signal);
    if (admission) await admission;
    try {
      return await this.queue.add(task, signal ? { signal } : {});
    } finally {
      this.release(key);
    }
  }

  /** Drops every task that has not started (they never settle; used when the upstream closes). */
  clear(): void {
    this.queue.clear();
  }

  private admit(key: string, signal: AbortSignal | undefined): Promise<void> | undefined {
    let state = this.keys.get(key);
    if (!state) this.keys.set(key, (state = { admitted: 0, waiting: [] }));
    if (state.admitted < this.perKey) {
      state.admitted++;
      return undefined;
    }
    signal?.throwIfAborted();
    const s = state;
    return new Promise<void>((resolve, reject) => {
      const start = () => {
        signal?.removeEventListener('abort', onAbort);
        s.admitted++;
        resolve();
      };
      const onAbort = () => {
        const i = s.waiting.indexOf(start);
        if (i >= 0) s.waiting.splice(i, 1);
        if (s.admitted === 0 && s.waiting.length === 0) this.keys.delete(key);
        reject(signal!.reason);
      };
      s.waiting.push(start);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private release(key: string): void {
    const state = this.keys.get(key);
    if (!state) return;
    state.admitted--;
    const next = state.waiting.shift();
    if (next) next();
    else if (state.admitted === 0) this.keys.delete(key);
  }
}
