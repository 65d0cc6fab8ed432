// Whether a request's Content-Type is JSON: exactly `application/json`, parameters allowed. Pure.

/**
 * True when `header` is the media type `application/json` (case-insensitive, surrounding spaces
 * allowed), with or without parameters (`; charset=utf-8`). Anything else is false: another type
 * that merely mentions it (`text/plain; x=application/json`, `application/json-seq`,
 * `application/jsonx`), a missing or empty header, or several values (joined duplicates).
 *
 * @example isJsonContentType('application/json; charset=utf-8') // true
 * @example isJsonContentType('text/plain; x=application/json') // false
 */
export function isJsonContentType(header: string | readonly string[] | undefined): boolean {
  if (header === undefined) return false;
  if (typeof header !== 'string') return header.length === 1 && isJsonContentType(header[0]);
  if (header.includes(',')) return false;
  return header.split(';', 1)[0]!.trim().toLowerCase() === 'application/json';
}
