// One upstream's request queue: bounded concurrency, a fair share per key, round-robin across principals, deadlines that count the wait.

/** A task that could not start at once. */
interface Waiter {
  key: string;
  principal: string;
  deadline: number;
  /** Runs the task and settles the caller's promise with it. */
  start: () => void;
  /** Rejects the caller's promise (the deadline passed, or the queue was cleared) and marks the waiter done. */
  fail: (err?: unknown) => void;
  /** Started or expired: either way, done waiting. */
  done: boolean;
}

/** Options of {@link FairQueue}. */
export interface FairQueueOptions {
  /** Monotonic milliseconds for deadlines. Default: performance.now. */
  now?: () => number;
}

/** Principal of tasks that name none (one shared principal: the old behaviour). */
const NOBODY = '';

/**
 * Runs tasks with at most `concurrency` at once, and:
 *
 * - admits at most half of the slots per key (at least one): with `concurrency` 4, forty reads of a
 *   hung URI hold two slots and wait behind each other, while a read of any other URI still finds one;
 * - admits at most `concurrency - reserve` per principal, `reserve` being an eighth of the slots
 *   (none below 8), so with the default 16 one principal's slow reads leave two slots to the others;
 * - hands each freed slot to the next principal in round-robin order that has an eligible waiter,
 *   so one principal's queue, however long, never makes another's task wait for more than the
 *   next freed slot;
 * - rejects a task still waiting at its deadline without ever starting it: each of the forty is
 *   answered by its own deadline, not after the ones ahead of it have timed out.
 *
 * Deadlines cost one timer per queue, not one per task: tasks wait in arrival order, and callers
 * give deadlines in that order (now + a fixed timeout), so the head of the line expires first.
 */
export class FairQueue {
  private readonly perKey: number;
  private readonly perPrincipal: number;
  private readonly now: () => number;
  private running = 0;
  private readonly runningByKey = new Map<string, number>();
  private readonly runningByPrincipal = new Map<string, number>();
  /** Per principal (in round-robin order: the one served last moves to the end), per key, waiters oldest first. */
  private readonly queues = new Map<string, Map<string, Waiter[]>>();
  /** Every waiter, oldest (earliest deadline) first; done ones are dropped lazily. */
  private readonly line: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;

  constructor(
    readonly concurrency: number,
    options: FairQueueOptions = {},
  ) {
    this.perKey = Math.max(1, Math.floor(concurrency / 2));
    this.perPrincipal = concurrency - (concurrency >= 8 ? Math.floor(concurrency / 8) : 0);
    this.now = options.now ?? (() => performance.now());
  }

  /**
   * Runs `task` when a slot, its key's share and its principal's share allow. If it has not started
   * by `deadline` (on the queue's clock), the returned promise rejects with `expired()` and the task
   * never runs. `principal` is who the task is for (default: one shared principal).
   */
  run<T>(key: string, task: () => Promise<T>, deadline: number, expired: () => unknown, principal: string = NOBODY): Promise<T> {
    // Below the concurrency and the shares nothing waits: the task runs at once, with no waiter, timer or closure kept for it.
    if (this.canStart(key, principal)) {
      this.take(key, principal);
      let result: Promise<T>;
      try {
        result = task();
      } catch (err) {
        result = Promise.reject(err);
      }
      return result.finally(() => this.release(key, principal));
    }
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter = {
        key,
        principal,
        deadline,
        done: false,
        start: () => {
          waiter.done = true;
          this.take(key, principal);
          let result: Promise<T>;
          try {
            result = task();
          } catch (err) {
            result = Promise.reject(err);
          }
          void result.then(resolve, reject).finally(() => this.release(key, principal));
        },
        fail: (err = expired()) => {
          if (waiter.done) return;
          waiter.done = true;
          reject(err);
        },
      };
      this.line.push(waiter);
      this.armTimer(deadline);
      let byKey = this.queues.get(principal);
      if (!byKey) this.queues.set(principal, (byKey = new Map<string, Waiter[]>()));
      let queue = byKey.get(key);
      if (!queue) byKey.set(key, (queue = []));
      queue.push(waiter);
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

  /** True when a task for `key` (and `principal`) added now would not start at once. */
  wouldWait(key: string, principal: string = NOBODY): boolean {
    return !this.canStart(key, principal);
  }

  /** Rejects every task that has not started with `error`, and stops the timer. */
  clear(error: unknown): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    for (const w of this.line.splice(0)) w.fail(error);
    this.queues.clear();
  }

  private canStart(key: string, principal: string): boolean {
    return (
      this.running < this.concurrency && (this.runningByKey.get(key) ?? 0) < this.perKey && (this.runningByPrincipal.get(principal) ?? 0) < this.perPrincipal
    );
  }

  private take(key: string, principal: string): void {
    this.running++;
    this.runningByKey.set(key, (this.runningByKey.get(key) ?? 0) + 1);
    this.runningByPrincipal.set(principal, (this.runningByPrincipal.get(principal) ?? 0) + 1);
  }

  private release(key: string, principal: string): void {
    this.running--;
    decrement(this.runningByKey, key);
    decrement(this.runningByPrincipal, principal);
    this.pump();
  }

  /** Starts waiters while slots are free: each time the first principal in turn with an eligible one, which then goes last. */
  private pump(): void {
    while (this.running < this.concurrency) {
      let next: Waiter | undefined;
      for (const [principal, byKey] of this.queues) {
        if ((this.runningByPrincipal.get(principal) ?? 0) >= this.perPrincipal) continue;
        next = this.eligible(byKey);
        if (byKey.size === 0) this.queues.delete(principal);
        if (!next) continue;
        if (this.queues.delete(principal)) this.queues.set(principal, byKey); // its turn is over
        break;
      }
      if (!next) return;
      next.start();
      this.prune();
    }
  }

  /** The oldest waiter of the first key (in arrival order) under its share, taken off its queue; done ones are dropped on the way. */
  private eligible(byKey: Map<string, Waiter[]>): Waiter | undefined {
    for (const [key, queue] of byKey) {
      while (queue.length > 0 && queue[0]!.done) queue.shift();
      if (queue.length === 0) {
        byKey.delete(key);
        continue;
      }
      if ((this.runningByKey.get(key) ?? 0) >= this.perKey) continue;
      const w = queue.shift()!;
      if (queue.length === 0) byKey.delete(key);
      return w;
    }
    return undefined;
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
    this.timer.unref();
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
      this.dropHead(head);
    }
  }

  /** An expired waiter usually heads its key's queue: drop it (and done ones behind it) at once, so a hung key holds no dead waiters. */
  private dropHead(w: Waiter): void {
    const byKey = this.queues.get(w.principal);
    const queue = byKey?.get(w.key);
    if (!byKey || !queue) return;
    while (queue.length > 0 && queue[0]!.done) queue.shift();
    if (queue.length === 0) byKey.delete(w.key);
    if (byKey.size === 0) this.queues.delete(w.principal);
  }
}

function decrement(map: Map<string, number>, key: string): void {
  const n = (map.get(key) ?? 1) - 1;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
}
