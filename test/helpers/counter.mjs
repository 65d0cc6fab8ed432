// A counter a test can await (`until(n)`), in plain JavaScript so spawned fixtures share it with the TypeScript tests.

/** Resolves `until(n)` once `hit()` has been called n times. */
export function counter() {
  let count = 0;
  const waiters = [];
  return {
    get count() {
      return count;
    },
    hit() {
      count++;
      for (const w of waiters.filter((w) => count >= w.n)) w.resolve();
    },
    until(n) {
      if (count >= n) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
  };
}
