// JSON depth: agrees with a recursive reference on generated documents, ignores brackets in strings, survives any depth.
import { describe, expect, it } from 'vitest';
import { exceedsDepth } from '../../src/wire/json-depth.js';

function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (typeof value === 'object' && value !== null) return 1 + Math.max(0, ...Object.values(value).map(depthOf));
  return 0;
}

/** A seeded generator of nested JSON values with awkward strings. */
function generate(seed: number): unknown {
  let s = seed;
  const rand = () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const strings = ['[', ']', '{', '}', '\\"[', '\\\\', '"', 'plain', '[[[[', '}}}}'];
  let nodes = 0;
  const make = (budget: number): unknown => {
    const r = rand();
    if (budget <= 0 || r < 0.2 || ++nodes > 200) return r < 0.1 ? strings[Math.floor(rand() * strings.length)] : Math.floor(rand() * 100);
    if (r < 0.6) return Array.from({ length: 1 + Math.floor(rand() * 2) }, () => make(budget - 1));
    return Object.fromEntries(Array.from({ length: 1 + Math.floor(rand() * 2) }, (_, i) => [`k${i}${strings[i % strings.length]}`, make(budget - 1)]));
  };
  return make(Math.floor(rand() * 40));
}

describe('exceedsDepth', () => {
  it('agrees with a recursive reference on 2000 generated documents, at every bound around their depth', () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const value = generate(seed);
      const text = JSON.stringify(value);
      const d = depthOf(value);
      for (const max of [0, 1, Math.max(0, d - 1), d, d + 1]) expect(exceedsDepth(text, max), `seed ${seed} max ${max}`).toBe(d > max);
    }
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    expect(exceedsDepth(`{"a":"${'['.repeat(100)}\\"${'{'.repeat(100)}"}`, 1)).toBe(false);
    expect(exceedsDepth(`[${'"\\\\",'.repeat(10)}[[1]]]`, 2)).toBe(true);
  });

  it('long lines with few brackets are within bounds; with many, the exact scan decides', () => {
    const items = (n: number) => Array.from({ length: n }, (_, i) => ({ uri: `x://r/${i}`, a: { b: [i] }, s: 'y'.repeat(50) }));
    // 3 opening brackets per item, plus 3 for the envelope.
    const page = (n: number) => JSON.stringify({ jsonrpc: '2.0', id: 1, result: { resources: items(n) } });
    expect(exceedsDepth(page(100), 303)).toBe(false); // at most `max` brackets in all: no scan needed
    expect(exceedsDepth(page(100), 302)).toBe(false); // one too many to bound by counting: scanned, depth 6
    expect(exceedsDepth(page(100), 5)).toBe(true);
    expect(exceedsDepth(page(100), 6)).toBe(false);
    // Brackets inside strings count towards the bound but not towards the depth.
    const inStrings = JSON.stringify({ a: ['{['.repeat(5000)], b: 'x'.repeat(10_000) });
    expect(exceedsDepth(inStrings, 1000)).toBe(false);
    expect(exceedsDepth(`[${inStrings},${'['.repeat(1000)}${']'.repeat(1000)}]`, 1000)).toBe(true);
    expect(exceedsDepth(`[${inStrings},${'['.repeat(999)}${']'.repeat(999)}]`, 1000)).toBe(false);
  });

  it('handles a million levels without recursion', () => {
    const n = 1_000_000;
    expect(exceedsDepth('['.repeat(n) + ']'.repeat(n), 1000)).toBe(true);
  });
});
