// withFields: the fast copy keeps what a spread keeps, a hostile "__proto__" key included.
import { describe, expect, it } from 'vitest';
import { withFields } from '../../src/copy.js';

describe('withFields', () => {
  it('is { ...base, ...fields }: fields added and replaced, symbols kept, base untouched', () => {
    const sym = Symbol('s');
    const base = { a: 1, b: 2, [sym]: 'hint' };
    const copy = withFields(base, { b: 3, c: 4 });
    expect(copy).toEqual({ a: 1, b: 3, c: 4, [sym]: 'hint' });
    expect(base).toEqual({ a: 1, b: 2, [sym]: 'hint' });
    expect(withFields(undefined, { c: 4 })).toEqual({ c: 4 });
  });

  it('a JSON "__proto__" key stays an own field of the copy, and the prototype stays Object.prototype', () => {
    const hostile = JSON.parse('{"name":"t","__proto__":{"isError":true,"polluted":1}}') as Record<string, unknown>;
    const copy = withFields(hostile, { _meta: { k: 1 } });
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect((copy as { isError?: unknown }).isError).toBeUndefined();
    expect(JSON.parse(JSON.stringify(copy))).toEqual(JSON.parse('{"name":"t","__proto__":{"isError":true,"polluted":1},"_meta":{"k":1}}'));
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });
});
