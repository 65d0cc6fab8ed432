// withoutHopFields: the same copy as the spread-and-delete version it replaced, on fuzzed results, never the upstream's object changed.
import { describe, expect, it } from 'vitest';
import { prng } from '../helpers/prng.js';
import { withoutHopFields } from '../../src/protocol.js';

const HOP = ['ttlMs', 'cacheScope', 'resultType'];
const PREFIX = 'io.modelcontextprotocol/';

/** The implementation before the change (spread, then delete), kept as the reference. */
function reference<T extends Record<string, unknown>>(result: T): T {
  const meta = result._meta as Record<string, unknown> | undefined;
  const metaKeys = meta ? Object.keys(meta).filter((k) => k.startsWith(PREFIX)) : [];
  if (metaKeys.length === 0 && !HOP.some((f) => f in result)) return result;
  const copy: Record<string, unknown> = { ...result };
  for (const f of HOP) delete copy[f];
  if (meta && metaKeys.length > 0) {
    const rest = { ...meta };
    for (const k of metaKeys) delete rest[k];
    if (Object.keys(rest).length > 0) copy._meta = rest;
    else delete copy._meta;
  }
  return copy as T;
}

const KEYS = ['contents', 'content', 'isError', '_meta', '__proto__', 'ttlMs', 'cacheScope', 'resultType', 'x', 'constructor'];
const META_KEYS = [`${PREFIX}serverInfo`, `${PREFIX}other`, 'progressToken', 'trace', '__proto__', 'io.modelcontextprotocol', 'x'];

function fuzzedResult(next: () => number): Record<string, unknown> {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const parts: string[] = [];
  const count = Math.floor(next() * 6);
  for (let i = 0; i < count; i++) {
    const key = pick(KEYS);
    let value: string;
    if (key === '_meta') {
      const shape = next();
      if (shape < 0.1) value = 'null';
      else if (shape < 0.2) value = '"text"';
      else if (shape < 0.3) value = '[1,2]';
      else {
        const meta: string[] = [];
        const n = Math.floor(next() * 4);
        for (let j = 0; j < n; j++) meta.push(`${JSON.stringify(pick(META_KEYS))}:${JSON.stringify(next() < 0.5 ? { name: 'n' } : 'v')}`);
        value = `{${meta.join(',')}}`;
      }
    } else value = JSON.stringify(pick([1, 'a', true, null, [], { uri: 'x://1' }]));
    parts.push(`${JSON.stringify(key)}:${value}`);
  }
  // Parsed from JSON, as an upstream's result is: an own "__proto__" key stays a plain field.
  return JSON.parse(`{${parts.join(',')}}`) as Record<string, unknown>;
}

describe('withoutHopFields', () => {
  it('drops the hop fields and the reserved _meta keys, keeps everything else in order, and returns the result itself when there is nothing to drop', () => {
    const upstream = { resultType: 'complete', contents: [], ttlMs: 5, _meta: { [`${PREFIX}serverInfo`]: { name: 'u' }, trace: 't' }, cacheScope: 'public' };
    const before = JSON.stringify(upstream);
    const out = withoutHopFields(upstream);
    expect(JSON.stringify(out)).toBe('{"contents":[],"_meta":{"trace":"t"}}');
    expect(JSON.stringify(upstream)).toBe(before); // the upstream's object is never changed
    expect(out).not.toBe(upstream);
    const plain = { contents: [], _meta: { trace: 't' } };
    expect(withoutHopFields(plain)).toBe(plain);
    expect(JSON.stringify(withoutHopFields({ contents: [], _meta: { [`${PREFIX}serverInfo`]: {} } }))).toBe('{"contents":[]}');
  });

  it('keeps an own "__proto__" field a field (never the copy\'s prototype), in the result and in _meta', () => {
    const result = JSON.parse(`{"__proto__":{"polluted":true},"ttlMs":1,"_meta":{"__proto__":{"p":1},"${PREFIX}x":1}}`) as Record<string, unknown>;
    const out = withoutHopFields(result);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect((out as { polluted?: unknown }).polluted).toBeUndefined();
    expect(JSON.stringify(out)).toBe('{"__proto__":{"polluted":true},"_meta":{"__proto__":{"p":1}}}');
  });

  it('copies what the spread copied: own enumerable symbols', () => {
    const tag = Symbol('tag');
    const result = { contents: [], ttlMs: 1, [tag]: 'kept' };
    expect((withoutHopFields(result) as Record<symbol, unknown>)[tag]).toBe('kept');
  });

  it('equals the spread-and-delete version byte for byte on 20 000 fuzzed results', () => {
    for (const seed of [1, 2, 3, 4]) {
      const next = prng(seed);
      for (let i = 0; i < 5000; i++) {
        const result = fuzzedResult(next);
        const before = JSON.stringify(result);
        const ours = withoutHopFields(result);
        const theirs = reference(JSON.parse(before) as Record<string, unknown>);
        expect(JSON.stringify(ours), `seed ${seed}, case ${i}: ${before}`).toBe(JSON.stringify(theirs));
        expect(ours === result, `seed ${seed}, case ${i}: the result itself`).toBe(reference(result) === result);
        expect(JSON.stringify(result)).toBe(before);
      }
    }
  });
});
