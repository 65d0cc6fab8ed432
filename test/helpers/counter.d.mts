// Types of counter.mjs.

/** A count of events that a test can await. */
export interface Counter {
  readonly count: number;
  hit(): void;
  /** Resolves once `hit()` has been called `n` times in all. */
  until(n: number): Promise<void>;
}

/** Resolves `until(n)` once `hit()` has been called n times. */
export function counter(): Counter;
