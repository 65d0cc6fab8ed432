// JSON-RPC 2.0 envelope classification of a parsed message, by shape, with the reason a bad one is refused. Pure.

/** A JSON-RPC id as the proxy echoes it: a string or a number as sent; null when unreadable. */
export type ReadableId = string | number | null;

/** What a parsed message is. Valid kinds are shared constants (nothing is allocated per message); read id and method from the message. */
export type Envelope =
  | { readonly kind: 'request' }
  | { readonly kind: 'notification' }
  | { readonly kind: 'response' }
  /**
   * Not a valid envelope. `id` is the id to answer with (null when none is readable); `answer` is
   * false for what looks like a response, which is never answered (answering responses can loop).
   */
  | { kind: 'invalid'; id: ReadableId; reason: string; answer: boolean };

const REQUEST: Envelope = Object.freeze({ kind: 'request' });
const NOTIFICATION: Envelope = Object.freeze({ kind: 'notification' });
const RESPONSE: Envelope = Object.freeze({ kind: 'response' });

/** A JSON object: not null, not an array. */
export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** How many enumerable keys `value` has, counted without allocating a key array (the lanes' exact-shape checks). */
export function keyCount(value: object): number {
  let n = 0;
  for (const _ in value) n++;
  return n;
}

/** A valid id: a string, or an integer (JSON-RPC discourages fractions; MCP forbids null). */
const isValidId = (v: unknown): v is string | number => typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v));

/** The id to put in an error reply: any string or finite number as sent, else null. */
export function readableId(v: unknown): ReadableId {
  return typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)) ? v : null;
}

/**
 * Classifies one parsed message. Requests and notifications need `jsonrpc: "2.0"`, a string
 * `method` and, when present, object `params` (MCP never uses by-position params); requests need a
 * string or integer id. Responses need a valid id and exactly one of an object `result` or an
 * `error` object with a numeric code and string message. A JSON array (a batch) is invalid: MCP
 * 2025-11-25 removed batching.
 *
 * @example classify({ jsonrpc: '2.0', id: 1.5, method: 'ping' }) // { kind: 'invalid', id: 1.5, answer: true, ... }
 */
export function classify(message: unknown): Envelope {
  if (!isPlainObject(message)) {
    const reason = Array.isArray(message) ? 'batches are not supported' : 'a message must be a JSON object';
    return { kind: 'invalid', id: null, reason, answer: true };
  }
  const m = message;
  const hasMethod = 'method' in m;
  const looksLikeResponse = !hasMethod && ('result' in m || 'error' in m);
  const invalid = (reason: string): Envelope => ({ kind: 'invalid', id: readableId(m.id), reason, answer: !looksLikeResponse });
  if (m.jsonrpc !== '2.0') return invalid('"jsonrpc" must be "2.0"');
  if (looksLikeResponse) {
    if (!isValidId(m.id)) return invalid('"id" must be a string or an integer');
    if ('result' in m && 'error' in m) return invalid('a response has "result" or "error", not both');
    if ('result' in m) return isPlainObject(m.result) ? RESPONSE : invalid('"result" must be an object');
    const e = m.error;
    if (isPlainObject(e) && typeof e.code === 'number' && typeof e.message === 'string') return RESPONSE;
    return invalid('"error" must be an object with a numeric "code" and a string "message"');
  }
  if (!hasMethod) return invalid('"method" is missing');
  if (typeof m.method !== 'string') return invalid('"method" must be a string');
  if ('result' in m || 'error' in m) return invalid('a request has no "result" or "error"');
  if (m.params !== undefined && !isPlainObject(m.params)) return invalid('"params" must be an object');
  if (!('id' in m)) return NOTIFICATION;
  if (!isValidId(m.id)) return invalid('"id" must be a string or an integer');
  return REQUEST;
}
