// One upstream's request queue: bounded concurrency (p-queue), a fair share per key, and deadlines that count the wait.
import PQueue from 'p-queue';

/** A task that could not start at once. */
interface Waiter {
  key: string;
  deadline: number;
  /** Runs the task and settles the caller's promise with it, unless the waiter is already done. */
  run: () => Promise<void>;
  /** Rejects the caller's promise (the deadline passed, or the queue was cleared) and marks the waiter done. */
  fail: (err?: unknown) => void;
  /** Started (it settles through its task) or expired (already rejected): either way, done waiting. */
  done: boolean;
}

/** Options of {@link FairQueue}. */
export interface FairQueueOptions {
  /** Monotonic milliseconds for deadlines. Default: performance.now. */
  now?: () => number;
}

/**
 * Runs tasks with at most `concurrency` at once (p-queue), admits at most half of that per key (at
 * least one), and rejects a task still waiting at its deadline without ever starting it. With
 * `concurrency` 4, forty reads of a hung URI hold two slots and wait behind each other, while a
 * read of any other URI still finds a slot; and each of the forty is answered by its own deadline,
 * not after the ones ahead of it have timed out.
 *
 * Deadlines cost one timer per queue, not one per task: tasks wait in arrival order, and callers
 * give deadlines in that order (now + a fixed timeout), so the head of the line expires first.
 */
export class FairQueue {
  private readonly queue: PQueue;
  private readonly perKey: number;
  private readonly now: () => number;
  /** Tasks of each key admitted to p-queue (waiting there or running). */
  private readonly admitted = new Map<string, number>();
  /** Per key, waiters beyond its share, oldest first. */
  private readonly overShare = new Map<string, Waiter[]>();
  /** Every waiter, oldest (earliest deadline) first; done ones are dropped lazily. */
  private readonly line: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;

  constructor(
    readonly concurrency: number,
    options: FairQueueOptions = {},
  ) {
    this.queue = new PQueue({ concurrency });
    this.perKey = Math.max(1, Math.floor(concurrency / 2));
    this.now = options.now ?? (() => performance.now());
  }

  /**
   * Runs `task` when its key's share and a slot allow. If it has not started by `deadline` (on the
   * queue's clock), the returned promise rejects with `expired()` and the task never runs.
   */
  run<T>(key: string, task: () => Promise<T>, deadline: number, expired: () => unknown): Promise<T> {
    const count = this.admitted.get(key) ?? 0;
    if (count < this.perKey && this.queue.pending + this.queue.size < this.concurrency) {
      this.admitted.set(key, count + 1);
      return this.queue.add(task).finally(() => this.release(key));
    }
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter = {
        key,
        deadline,
        done: false,
        run: async () => {
          if (waiter.done) return; // expired while queued: its slot passes straight on
          waiter.done = true;
          this.prune();
          try {
            resolve(await task());
          } catch (err) {
            reject(err);
          }
        },
        fail: (err = expired()) => {
          waiter.done = true;
          reject(err);
        },
      };
      this.line.push(waiter);
      this.armTimer(deadline);
      if (count < this.perKey) {
        this.admitted.set(key, count + 1);
        this.submit(waiter);
      } else {
        let waiting = this.overShare.get(key);
        if (!waiting) this.overShare.set(key, (waiting = []));
        waiting.push(waiter);
      }
    });
  }

  /** Tasks still waiting to start (for diagnostics and tests). */
  get waiting(): number {
    return this.line.filter((w) => !w.done).length;
  }

  /** Entries the line holds, waiting or not yet trimmed (a bounded number: see `prune`). */
  get lineLength(): number {
    return this.line.length;
  }

  /** True when a task for `key` added now would not start at once. */
  wouldWait(key: string): boolean {
    return (this.admitted.get(key) ?? 0) >= this.perKey || this.queue.pending + this.queue.size >= this.concurrency;
  }

  /** Rejects every task that has not started with `error`, and stops the timer. */
  clear(error: unknown): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    this.queue.clear();
    for (const w of this.line.splice(0)) if (!w.done) w.fail(error);
    this.overShare.clear();
  }

  /** Puts an admitted waiter into p-queue: it runs its task in the slot p-queue gives it, unless it expired meanwhile. */
  private submit(waiter: Waiter): void {
    void this.queue.add(waiter.run).finally(() => this.release(waiter.key));
  }

  private release(key: string): void {
    const waiting = this.overShare.get(key);
    while (waiting && waiting.length > 0) {
      const next = waiting.shift()!;
      if (next.done) continue;
      if (waiting.length === 0) this.overShare.delete(key);
      this.submit(next); // keeps the key's admitted count: one left, one enters
      return;
    }
    if (waiting) this.overShare.delete(key);
    const count = (this.admitted.get(key) ?? 1) - 1;
    if (count <= 0) this.admitted.delete(key);
    else this.admitted.set(key, count);
  }

  /** Drops started and expired waiters from the head of the line, so it holds only what still waits. */
  private prune(): void {
    const line = this.line;
    while (line.length > 0 && line[0]!.done) line.shift();
  }

  private armTimer(deadline: number): void {
    if (this.timer !== undefined && this.timerAt <= deadline) return;
    clearTimeout(this.timer);
    this.timerAt = deadline;
    this.timer = setTimeout(() => this.expireDue(), Math.max(0, deadline - this.now()));
    this.timer.unref?.();
  }

  /** Rejects every waiter whose deadline has passed, then re-arms for the next one. */
  private expireDue(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.now();
    while (this.line.length > 0) {
      const head = this.line[0]!;
      if (head.done) {
        this.line.shift();
        continue;
      }
      if (head.deadline > now) return this.armTimer(head.deadline);
      this.line.shift();
      head.fail();
    }
  }
}
