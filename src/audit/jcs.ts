// RFC 8785 JSON Canonicalization Scheme (JCS) for JSON values: the bytes the audit hash chain is over. Pure.

/**
 * Serialises a JSON value canonically (RFC 8785): object keys sorted by UTF-16 code units, no
 * whitespace, strings escaped as RFC 8785 requires (`"`, `\`, `\b \f \n \r \t`, other U+0000–U+001F
 * as lowercase `\u00xx`, everything else as is), numbers in ECMAScript Number-to-String form
 * (`1e+21`, `0.000001`, `-0` → `0`).
 *
 * Made for values that came from `JSON.parse` or are built like them. Like `JSON.stringify`, an
 * object property whose value is `undefined` is left out, so `canonicalize(v)` equals
 * `canonicalize(JSON.parse(JSON.stringify(v)))`. Throws a `TypeError` for what JSON cannot hold:
 * non-finite numbers, bigints, functions, symbols, and `undefined` outside an object property.
 * One deliberate leniency: a lone surrogate in a string (which RFC 8785 rejects) is escaped as
 * `\udxxx`, as `JSON.stringify` does, so a string `JSON.parse` accepted always canonicalises.
 *
 * @example canonicalize({ b: [1e21, -0], a: 'é' }) // '{"a":"é","b":[1e+21,0]}'
 */
export function canonicalize(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`JCS: ${value} is not a JSON number`);
      return JSON.stringify(value); // ECMAScript Number::toString; -0 becomes "0"
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) return `[${value.map(canonicalize).join(',')}]`;
      const obj = value as Record<string, unknown>;
      // Array.prototype.sort without a comparator orders strings by UTF-16 code units, as RFC 8785 asks.
      const keys = Object.keys(obj).sort();
      let out = '{';
      for (const key of keys) {
        const v = obj[key];
        if (v === undefined) continue;
        if (out.length > 1) out += ',';
        out += `${JSON.stringify(key)}:${canonicalize(v)}`;
      }
      return `${out}}`;
    }
    default:
      throw new TypeError(`JCS: a ${typeof value} is not a JSON value`);
  }
}
