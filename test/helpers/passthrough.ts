// A Standard Schema that accepts any value: an SDK v2 client's `request` with it returns the result exactly as the gateway sent it (no client-side parsing, no typed helper).

/** Passes every value through unchanged. */
export const PASS = { '~standard': { version: 1, vendor: 'test', validate: (value: unknown) => ({ value }) } };
