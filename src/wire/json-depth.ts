// Nesting depth of JSON text, measured without recursion so hostile input cannot overflow the stack. Pure.

const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/** Default bound on nesting depth for every message from a client or an upstream. */
export const DEFAULT_MAX_DEPTH = 1000;

/**
 * True when the JSON `text` nests objects/arrays deeper than `max` levels. V8's `JSON.parse`
 * handles any depth, but `JSON.stringify` (which the SDK calls on messages it cannot place) and
 * every recursive walk overflow the stack a few thousand levels down, so depth is checked before
 * a parsed message goes anywhere. Brackets inside strings do not count.
 *
 * A line shorter than `2 * max` characters cannot be that deep (each level needs an opening and a
 * closing bracket), so ordinary messages cost one comparison. Nor can a line with at most `max`
 * opening brackets in all (strings included): counting them with `indexOf` is native and an order
 * of magnitude cheaper than the exact scan below (5 vs 85 us for a 22 KB page of 100 resources),
 * which runs only when the count exceeds `max`.
 *
 * @example exceedsDepth('[[[1]]]', 2) // true
 */
export function exceedsDepth(text: string, max: number): boolean {
  if (text.length <= 2 * max || opensAtMost(text, max)) return false;
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Skip the string: find its closing quote, stepping over escapes.
      for (i++; i < n; i++) {
        const s = text.charCodeAt(i);
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > max) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}

/** True when `text` holds at most `max` `{` and `[` characters (inside strings too): an upper bound on its depth. */
function opensAtMost(text: string, max: number): boolean {
  let n = 0;
  for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) if (++n > max) return false;
  for (let i = text.indexOf('['); i !== -1; i = text.indexOf('[', i + 1)) if (++n > max) return false;
  return true;
}
