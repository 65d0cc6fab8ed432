// Whether an SDK object still has the internal methods a lane borrows (they are where SDK 2.4 has them). Pure.

/**
 * True when every one of `names` is a function on `value`: the check a lane makes before it borrows
 * SDK internals (a server's or client's protocol steps, a codec's functions), so that an SDK that
 * moved them leaves the lane closed instead of failing a request.
 *
 * @example if (!hasMethods<ServerInternals>(server, ['_wireCodec'])) return undefined;
 */
export function hasMethods<T>(value: unknown, names: readonly (keyof T & string)[]): value is T {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return false;
  const record = value as Record<string, unknown>;
  return names.every((name) => typeof record[name] === 'function');
}
