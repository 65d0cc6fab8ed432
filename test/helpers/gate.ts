// Test synchronisation without sleeps: a latch to release, and a counter to await.

/** A promise plus its resolver. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves `until(n)` once `hit()` has been called n times. */
export function counter() {
  let count = 0;
  const waiters: { n: number; resolve: () => void }[] = [];
  return {
    get count() {
      return count;
    },
    hit() {
      count++;
      for (const w of waiters.filter((w) => count >= w.n)) w.resolve();
    },
    until(n: number): Promise<void> {
      if (count >= n) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
  };
}
