// A request id as its sender spelled it: the raw lexeme of a numeric id, and the ids a connection has in flight. Pure.
import type { ReadableId } from './envelope.js';
import { stringifyMessage } from './shared-json.js';

const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \
const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const COLON = 0x3a; // :
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * The text of the top-level `"id"` member of the JSON object `text` when its value is a number
 * (the last one when the key repeats, as `JSON.parse` keeps the last); undefined otherwise. Walks
 * the top level only, skipping strings and nested values without recursion. Call it for messages
 * whose parsed id is a number: `JSON.parse` turns `1e2`, `1.50` and `12345678901234567890` into
 * numbers that serialise differently, and a reply must echo the id as sent.
 *
 * @example numericIdLexeme('{"jsonrpc":"2.0","id":1e2,"method":"ping"}') // '1e2'
 */
export function numericIdLexeme(text: string): string | undefined {
  // Fast path, native searches only: when `"id"` occurs once and no key can be spelled with a
  // `\u` escape, that occurrence is the top-level key (quotes inside strings are escaped, so the
  // only other way to see `"id"` is a string ending in an escaped quote, which makes two).
  const at = text.indexOf('"id"');
  if (at !== -1 && !text.includes('"id"', at + 4) && !text.includes('\\u')) return valueAt(text, at + 4);
  return scanTopLevel(text);
}

/** The number lexeme after the `:` that follows position `i`, or undefined. */
function valueAt(text: string, i: number): string | undefined {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== COLON) return undefined;
  i++;
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  NUMBER.lastIndex = i;
  return NUMBER.exec(text)?.[0];
}

/** {@link numericIdLexeme} by walking the top level, for texts the fast path cannot decide. */
function scanTopLevel(text: string): string | undefined {
  const n = text.length;
  let depth = 0;
  let found: string | undefined;
  let keyIsId = false;
  let expectKey = false;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i;
      let escaped = false;
      for (i++; i < n; i++) {
        const s = text.charCodeAt(i);
        if (s === BACKSLASH) {
          escaped = true;
          i++;
        } else if (s === QUOTE) break;
      }
      if (depth === 1 && expectKey) {
        const raw = text.slice(start, i + 1);
        keyIsId = raw === '"id"' || (escaped && safeParse(raw) === 'id');
        expectKey = false;
      }
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth++;
      if (depth === 1) expectKey = true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    } else if (depth === 1) {
      if (c === 0x2c /* , */) expectKey = true;
      else if (c === COLON && keyIsId) {
        keyIsId = false;
        let j = i + 1;
        while (j < n && isSpace(text.charCodeAt(j))) j++;
        NUMBER.lastIndex = j;
        const m = NUMBER.exec(text);
        found = m ? m[0] : undefined;
        if (m) i = j + m[0].length - 1;
      } else if (c === COLON) keyIsId = false;
    }
  }
  return found;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function safeParse(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * The request ids a client has in flight on one connection, each with its raw spelling when that
 * is not what `JSON.stringify` would write. A request is admitted by id value, so a second one
 * with the id of a request still in flight can be refused (its answer could not be told apart);
 * the answer to an admitted request releases its id and carries the id as it was sent.
 */
export class RequestIds {
  private readonly open = new Map<string | number, string | undefined>();

  /** Ids in flight. */
  get size(): number {
    return this.open.size;
  }

  /** True when a request with this id is in flight. */
  has(id: string | number): boolean {
    return this.open.has(id);
  }

  /**
   * An incoming message with a method and id `id`, parsed from `text`. Returns false (nothing
   * recorded) when `id` is already in flight. An id that is neither a string nor a finite number
   * is not recorded (it is answered with id null) and returns true.
   */
  admit(id: unknown, text: string): boolean {
    if (typeof id === 'string') {
      if (this.open.has(id)) return false;
      this.open.set(id, undefined);
      return true;
    }
    if (typeof id !== 'number' || !Number.isFinite(id)) return true;
    if (this.open.has(id)) return false;
    const lexeme = numericIdLexeme(text);
    this.open.set(id, lexeme === undefined || lexeme === String(id) ? undefined : lexeme);
    return true;
  }

  /** The request was cancelled by its client (no answer will follow): its id is free again. */
  release(id: unknown): void {
    if (typeof id === 'string' || typeof id === 'number') this.open.delete(id);
  }

  /**
   * JSON text of an outgoing message. An answer (no method) to an id in flight releases it and
   * writes the id as it was sent.
   */
  serialise(message: { id?: unknown; method?: unknown }): string {
    const id = message.id;
    if (message.method !== undefined || (typeof id !== 'string' && typeof id !== 'number') || !this.open.has(id)) return JSON.stringify(message);
    const lexeme = this.open.get(id);
    this.open.delete(id);
    return lexeme === undefined ? stringifyMessage(message) : withRawId(message, lexeme);
  }
}

/**
 * The JSON text to answer `id` with: a number as `text` (the message it came in) spells it, a
 * string as JSON, null as `null`.
 *
 * @example spelledId(100, '{"id":1e2}') // '1e2'
 */
export function spelledId(id: ReadableId, text: string): string {
  if (typeof id === 'number') return numericIdLexeme(text) ?? String(id);
  return JSON.stringify(id);
}

/** `message` as JSON with its `id` written as `lexeme` (a JSON number as sent), first. */
export function withRawId(message: object, lexeme: string): string {
  const { id: _id, ...rest } = message as { id?: unknown };
  const body = stringifyMessage(rest);
  return body === '{}' ? `{"id":${lexeme}}` : `{"id":${lexeme},${body.slice(1)}`;
}
