// Long-lived resources of a describe block, and several disposables disposed as one.
import { afterAll, beforeAll } from 'vitest';

/**
 * One long-lived resource per describe block: created in beforeAll, disposed in afterAll.
 * Returns a getter (the value exists only once beforeAll ran).
 */
export function suiteResource<T extends AsyncDisposable>(make: () => Promise<T>): () => T {
  let value: T | undefined;
  beforeAll(async () => {
    value = await make();
  });
  afterAll(async () => {
    await value?.[Symbol.asyncDispose]();
    value = undefined;
  });
  return () => {
    if (value === undefined) throw new Error('suite resource not started');
    return value;
  };
}

/** Several disposables as one, disposed in reverse order. */
export function disposeAll(...items: (AsyncDisposable | undefined)[]): AsyncDisposable {
  return {
    async [Symbol.asyncDispose]() {
      for (const item of items.reverse()) await item?.[Symbol.asyncDispose]();
    },
  };
}
