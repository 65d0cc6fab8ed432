// A copy of a plain object with fields added or replaced: fast on Node 20, and safe for any JSON input. Pure leaf.

/**
 * `{ ...base, ...fields }`, made the fast way where that is safe. On Node 20 (V8 11.3) a spread that
 * adds a key `base` lacks takes a slow path (about 1 µs, against some 60 ns for `Object.assign`),
 * and the hot paths add `_meta`, `server` or cache fields to what they relay. `Object.assign` would
 * turn an own `"__proto__"` key of JSON input into the copy's prototype (and drop the field), so a
 * `base` holding one is copied with the spread. `fields` must be the gateway's own object.
 *
 * @example withFields(params, { _meta: meta })
 */
export function withFields<T extends object, U extends object>(base: T | undefined, fields: U): T & U {
  if (base !== undefined && Object.hasOwn(base, '__proto__')) return { ...base, ...fields };
  return Object.assign({}, base, fields);
}
