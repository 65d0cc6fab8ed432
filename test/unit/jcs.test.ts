// RFC 8785 canonical JSON: the RFC's own examples (sorting, strings, Appendix B numbers) and its edges.
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../src/audit/jcs.js';

/** The IEEE 754 double whose bit pattern is `hex` (RFC 8785 Appendix B lists numbers this way). */
function double(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

describe('canonicalize (RFC 8785)', () => {
  it('sorts keys by UTF-16 code units (RFC 8785 §3.2.3), not by code points', () => {
    const input = JSON.parse(
      '{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control","\\u00f6":"Latin Small Letter O With Diaeresis"}',
    ) as unknown;
    // (Object.keys would list the integer-like "1" first, so the keys are read from the text.)
    const keys = [...canonicalize(input).matchAll(/"((?:[^"\\]|\\.)*)":/g)].map((m) => JSON.parse(`"${m[1]}"`) as string);
    // U+1F600 (surrogates D83D DE00) sorts before U+FB33 in UTF-16 order; code-point order would swap them.
    expect(keys).toEqual(['\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33']);
    expect(canonicalize(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","ö":"Latin Small Letter O With Diaeresis","€":"Euro Sign","😀":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it('reproduces the RFC 8785 §3.2.2 example (numbers, strings, literals)', () => {
    const input = JSON.parse(
      '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}',
    ) as unknown;
    expect(canonicalize(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it.each([
    ['0000000000000000', '0'],
    ['8000000000000000', '0'], // -0
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ])('Appendix B: the double 0x%s is %s', (hex, expected) => {
    expect(canonicalize(double(hex))).toBe(expected);
    expect(canonicalize([double(hex)])).toBe(`[${expected}]`);
  });

  it.each([
    ['NaN', double('7fffffffffffffff')],
    ['Infinity', double('7ff0000000000000')],
    ['-Infinity', -Infinity],
  ])('refuses %s (Appendix B: error)', (_name, n) => {
    expect(() => canonicalize({ n })).toThrow(TypeError);
  });

  it('escapes only what RFC 8785 requires: the two-character escapes, other C0 controls as lowercase \\u00xx', () => {
    expect(canonicalize('\b\t\n\f\r"\\')).toBe('"\\b\\t\\n\\f\\r\\"\\\\"');
    expect(canonicalize('\u0000\u001f\u000b')).toBe('"\\u0000\\u001f\\u000b"');
    // "/" , DEL, U+2028 and non-ASCII go as they are.
    expect(canonicalize('/\u007f\u2028é😀')).toBe('"/\u007f\u2028é😀"');
  });

  it('escapes a lone surrogate as JSON.stringify does, so every string JSON.parse accepts canonicalises stably', () => {
    const lone = JSON.parse('"a\\ud800b"') as string;
    expect(canonicalize(lone)).toBe('"a\\ud800b"');
    expect(canonicalize(JSON.parse(canonicalize(lone)))).toBe('"a\\ud800b"');
  });

  it('writes no whitespace, keeps array order, sorts nested objects, and leaves out undefined properties as JSON.stringify does', () => {
    const value = { z: [3, { b: 1, a: [] }, 'x'], a: { d: null, c: {} }, u: undefined, m: false };
    expect(canonicalize(value)).toBe('{"a":{"c":{},"d":null},"m":false,"z":[3,{"a":[],"b":1},"x"]}');
    expect(canonicalize(JSON.parse(JSON.stringify(value)))).toBe(canonicalize(value));
  });

  it('sorts keys that differ only past a common prefix, and the empty key first', () => {
    expect(canonicalize({ ab: 1, a: 2, '': 3, B: 4 })).toBe('{"":3,"B":4,"a":2,"ab":1}');
  });

  it.each([
    ['undefined', undefined],
    ['a bigint', 1n],
    ['a function', () => 1],
    ['a symbol', Symbol('s')],
    ['undefined in an array', [undefined]],
  ])('refuses %s', (_name, value) => {
    expect(() => canonicalize(value)).toThrow(TypeError);
  });
});
