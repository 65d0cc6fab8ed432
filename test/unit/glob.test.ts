// Glob automaton: semantics table, syntax errors, prefix questions, fuzz against a reference matcher, linear work.
import { describe, expect, it } from 'vitest';
import { compileGlob, globProblem, GlobSyntaxError, MAX_GLOB_LENGTH, type GlobWork } from '../../src/uri/glob.js';
import { prng } from '../helpers/prng.js';

describe('glob semantics', () => {
  it.each([
    // `**` across segments, `*` within one, `?` one character other than `/`
    ['file:///handbook/**', 'file:///handbook/a.md', true],
    ['file:///handbook/**', 'file:///handbook/a/b/c.md', true],
    ['file:///handbook/**', 'file:///handbookx/a.md', false],
    ['file:///handbook/*', 'file:///handbook/a.md', true],
    ['file:///handbook/*', 'file:///handbook/a/b.md', false],
    ['file:///handbook/*.md', 'file:///handbook/.md', true],
    ['file:///handbook/?.md', 'file:///handbook/a.md', true],
    ['file:///handbook/?.md', 'file:///handbook/ab.md', false],
    ['file:///a?b', 'file:///a/b', false],
    ['file:///a?b', 'file:///a?b', true],
    // trailing slashes: `dir/**` covers `dir`, `dir/` and below; `dir/*` covers `dir/`
    ['file:///handbook/**', 'file:///handbook', true],
    ['file:///handbook/**', 'file:///handbook/', true],
    ['file:///handbook/*', 'file:///handbook/', true],
    ['file:///handbook/*', 'file:///handbook', false],
    ['file:///handbook', 'file:///handbook/', false],
    ['file:///handbook/', 'file:///handbook', false],
    // a whole-segment `**` matches zero segments
    ['file:///a/**/b.md', 'file:///a/b.md', true],
    ['file:///a/**/b.md', 'file:///a/x/y/b.md', true],
    ['file:///a/**/b.md', 'file:///ab.md', false],
    ['file:///a**/b.md', 'file:///a/b.md', true],
    ['file:///a**/b.md', 'file:///ab.md', false],
    // opaque URIs: segments are still separated by `/`
    ['memo:**', 'memo:abc', true],
    ['memo:**', 'memo:a/b', true],
    ['memo:**', 'memo:', true],
    ['memo:*', 'memo:abc', true],
    ['memo:*', 'memo:a/b', false],
    ['memo:**', 'memox:abc', false],
    ['*:**', 'anything:at/all', true],
    // anchored, case-sensitive, code points
    ['file:///a', 'file:///ab', false],
    ['file:///a', 'xfile:///a', false],
    ['file:///A', 'file:///a', false],
    ['file:///?', 'file:///😀', true],
    ['file:///??', 'file:///😀', false],
    ['file:///caf?', 'file:///café', true],
    // escapes
    ['file:///\\*', 'file:///*', true],
    ['file:///\\*', 'file:///a', false],
    ['file:///\\?', 'file:///a', false],
    ['file:///\\[x\\]', 'file:///[x]', true],
    ['git\\+ssh://**', 'git+ssh://h/r', true],
  ])('%j matches %j: %s', (pattern, input, expected) => {
    expect(compileGlob(pattern).matches(input)).toBe(expected);
    expect(compileGlob(pattern).matches(input, { steps: 0 })).toBe(expected); // the automaton, not the literal fast path
  });

  it.each([
    ['', 'must not be empty'],
    ['a***', '"***" is not a glob'],
    ['file:///[ab]', '"[" is reserved'],
    ['file:///{a,b}', '"{" is reserved'],
    ['file:///a]', '"]" is reserved'],
    ['file:///a\\', '"\\" must be followed by one of'],
    ['file:///a\\b', '"\\" must be followed by one of'],
    ['file:///a\\\\', '"\\" must be followed by one of'],
    ['x'.repeat(MAX_GLOB_LENGTH + 1), `longer than ${MAX_GLOB_LENGTH}`],
  ])('%j is refused: %s', (pattern, problem) => {
    expect(globProblem(pattern)).toContain(problem);
    expect(() => compileGlob(pattern)).toThrow(GlobSyntaxError);
  });

  it('accepts the longest glob allowed', () => {
    expect(globProblem('x'.repeat(MAX_GLOB_LENGTH))).toBeUndefined();
  });

  it.each([
    ['file:///a/**', 'file:///a/x'],
    ['file:///a/*.md', 'file:///a/x.md'],
    ['file:///a/?\\*\\+', 'file:///a/x*+'],
  ])('example(%j) is %j', (pattern, example) => {
    expect(compileGlob(pattern).example('x')).toBe(example);
  });
});

describe('prefix questions (templates)', () => {
  it.each([
    // pattern, prefix, some continuation matches, every continuation matches
    ['file:///handbook/**', 'file:///handbook/', true, true],
    ['file:///handbook/**', 'file:///handbook/a/b', true, true],
    ['file:///handbook/**', 'file:///hand', true, false],
    ['file:///handbook/**', 'file:///handbook', true, false],
    ['file:///handbook/**', 'file:///other/', false, false],
    ['file:///handbook/*', 'file:///handbook/', true, false],
    ['file:///handbook/**.md', 'file:///handbook/', true, false],
    ['file:///**', 'file:///', true, true],
    ['file:///**', '', true, false],
    ['**', '', true, true],
    ['memo:**', 'memo:', true, true],
    ['memo:*', 'memo:', true, false],
    ['file:///a/**/b/**', 'file:///a/x/b/', true, true],
    ['file:///a/**/b/**', 'file:///a/x/', true, false],
    ['file:///a', 'file:///a', true, false],
    ['file:///a', 'file:///ab', false, false],
  ])('%j after %j: some %s, every %s', (pattern, prefix, some, every) => {
    const glob = compileGlob(pattern);
    expect(glob.matchesSomeWithPrefix(prefix)).toBe(some);
    expect(glob.matchesEveryWithPrefix(prefix)).toBe(every);
  });
});

// ---- Fuzz: the automaton against a memoised recursive matcher over independently parsed tokens.

type RefToken = { kind: 'lit'; c: string } | { kind: 'one' } | { kind: 'star' } | { kind: 'globstar' };

/** The glob's tokens, parsed with no shared code; undefined for what must be refused. */
function refTokens(pattern: string): RefToken[] | undefined {
  const cps = Array.from(pattern);
  const out: RefToken[] = [];
  for (let i = 0; i < cps.length; i++) {
    const c = cps[i]!;
    if (c === '\\') {
      const next = cps[++i];
      if (next === undefined || !'*?[]{}+'.includes(next)) return undefined;
      out.push({ kind: 'lit', c: next });
    } else if (c === '*') {
      if (cps[i + 1] === '*') {
        if (cps[i + 2] === '*') return undefined;
        out.push({ kind: 'globstar' });
        i++;
      } else out.push({ kind: 'star' });
    } else if (c === '?') out.push({ kind: 'one' });
    else if ('[]{}'.includes(c)) return undefined;
    else out.push({ kind: 'lit', c });
  }
  return out.length > 0 ? out : undefined;
}

/**
 * Whether `tokens` match all of `input` (or, with `prefixOnly`, some string starting with it),
 * by memoised recursion on (token, position): the definition written out, not simulated.
 */
function refMatch(tokens: RefToken[], input: string, prefixOnly = false): boolean {
  const s = Array.from(input);
  const n = tokens.length;
  const memo = new Map<number, boolean>();
  const isSlash = (i: number) => {
    const t = tokens[i];
    return t !== undefined && t.kind === 'lit' && t.c === '/';
  };
  const go = (i: number, k: number): boolean => {
    const key = i * (s.length + 1) + k;
    const hit = memo.get(key);
    if (hit !== undefined) return hit;
    let r: boolean;
    if (k === s.length && prefixOnly) r = true;
    else if (i === n) r = k === s.length;
    else {
      const t = tokens[i]!;
      const c = s[k];
      switch (t.kind) {
        case 'lit':
          r = c === t.c && go(i + 1, k + 1);
          // `…/**` at the end: the slash and the `**` may match nothing.
          if (!r && t.c === '/' && tokens[i + 1]?.kind === 'globstar' && i + 2 === n) r = go(n, k);
          break;
        case 'one':
          r = c !== undefined && c !== '/' && go(i + 1, k + 1);
          break;
        case 'star':
          r = go(i + 1, k) || (c !== undefined && c !== '/' && go(i, k + 1));
          break;
        case 'globstar':
          r = go(i + 1, k) || (c !== undefined && go(i, k + 1)) || (i > 0 && isSlash(i - 1) && isSlash(i + 1) && go(i + 2, k));
          break;
      }
    }
    memo.set(key, r);
    return r;
  };
  return go(0, 0);
}

const SEED = Number(process.env.FUZZ_SEED ?? 20_260_728);
const PAIRS = 12_000;

describe(`glob fuzz (FUZZ_SEED=${SEED})`, () => {
  const random = prng(SEED);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const PATTERN_PIECES = ['a', 'b', '/', ':', '.', '*', '**', '?', '😀', '\\*', 'ab', '/**/', '/**'];
  const CHARS = ['a', 'b', '/', ':', '.', '*', 'é', '😀'];
  const randomString = (max: number, noSlash = false) => {
    let out = '';
    const len = Math.floor(random() * (max + 1));
    for (let i = 0; i < len; i++) {
      const c = pick(CHARS);
      out += noSlash && c === '/' ? 'a' : c;
    }
    return out;
  };
  /** A string built from the pattern's tokens, so that matches are common; sometimes mutated. */
  const instance = (tokens: RefToken[]) => {
    let out = '';
    for (const t of tokens) {
      if (t.kind === 'lit') out += random() < 0.05 ? pick(CHARS) : t.c;
      else if (t.kind === 'one') out += random() < 0.1 ? '/' : pick(['a', 'é', '😀', ':']);
      else out += randomString(4, t.kind === 'star' && random() < 0.9);
    }
    return out;
  };

  it(`agrees with the reference on ${PAIRS} pattern × input pairs, full and prefix matches`, () => {
    let pairs = 0;
    let matched = 0;
    let refused = 0;
    while (pairs < PAIRS) {
      let pattern = '';
      const pieces = 1 + Math.floor(random() * 8);
      for (let i = 0; i < pieces; i++) pattern += pick(PATTERN_PIECES);
      const tokens = refTokens(pattern);
      if (tokens === undefined) {
        expect(globProblem(pattern), pattern).toBeDefined();
        refused++;
        continue;
      }
      const glob = compileGlob(pattern);
      const input = random() < 0.6 ? instance(tokens) : randomString(12);
      const expected = refMatch(tokens, input);
      const context = `pattern ${JSON.stringify(pattern)} input ${JSON.stringify(input)} (FUZZ_SEED=${SEED})`;
      expect(glob.matches(input, { steps: 0 }), context).toBe(expected);
      expect(glob.matches(input), context).toBe(expected);
      // Prefix questions on a cut of the input.
      const cps = Array.from(input);
      const prefix = cps.slice(0, Math.floor(random() * (cps.length + 1))).join('');
      expect(glob.matchesSomeWithPrefix(prefix), `${context} prefix ${JSON.stringify(prefix)}`).toBe(refMatch(tokens, prefix, true));
      if (glob.matchesEveryWithPrefix(prefix)) {
        for (let j = 0; j < 3; j++) {
          const more = prefix + randomString(6);
          expect(refMatch(tokens, more), `${context}: every continuation of ${JSON.stringify(prefix)}, yet not ${JSON.stringify(more)}`).toBe(true);
        }
      }
      if (expected) matched++;
      pairs++;
    }
    // The generator must exercise both outcomes and the refusals, or the agreement proves little.
    expect(matched).toBeGreaterThan(PAIRS / 5);
    expect(PAIRS - matched).toBeGreaterThan(PAIRS / 5);
    expect(refused).toBeGreaterThan(0);
  });

  it('agrees with a plain regular expression on globs without whole-segment `**`', () => {
    const toRegex = (tokens: RefToken[]) =>
      new RegExp(
        `^${tokens
          .map((t) => (t.kind === 'lit' ? t.c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&') : t.kind === 'one' ? '[^/]' : t.kind === 'star' ? '[^/]*' : '[^]*'))
          .join('')}$`,
        'u',
      );
    let checked = 0;
    while (checked < 2000) {
      let pattern = '';
      for (let i = 0, n = 1 + Math.floor(random() * 6); i < n; i++) pattern += pick(['a', 'b', ':', '*', '**', '?', '😀', '\\*']);
      const tokens = refTokens(pattern);
      if (tokens === undefined) continue;
      const input = random() < 0.6 ? instance(tokens) : randomString(10);
      expect(compileGlob(pattern).matches(input), `${pattern} ${input}`).toBe(toRegex(tokens).test(input));
      checked++;
    }
  });
});

describe('linear work on adversarial input', () => {
  const steps = (pattern: string, input: string): { result: boolean; work: GlobWork } => {
    const work = { steps: 0 };
    return { result: compileGlob(pattern).matches(input, work), work };
  };

  it.each([
    ['**a**a**a**a**b', 'a'],
    ['*a*a*a*a*a*a*b', 'a'],
    ['file:///**/**/**/**/**/x', '/a'],
    ['memo:**a**a**a**a**a**a**a**a**b', 'a/'],
    ['?*?*?*?*?*?*c', 'ab'],
  ])('%j against 10,000 characters of %j: a bounded number of steps, growing linearly', (pattern, unit) => {
    const tokens = refTokens(pattern)!.length;
    const input = (n: number) => (pattern.startsWith('file') ? 'file://' : pattern.startsWith('memo') ? 'memo:' : '') + unit.repeat(n / unit.length);
    const short = steps(pattern, input(10_000));
    const long = steps(pattern, input(20_000));
    expect(short.result).toBe(false);
    expect(long.result).toBe(false);
    expect(short.work.steps).toBeGreaterThan(10_000);
    expect(short.work.steps).toBeLessThanOrEqual((tokens + 1) * input(10_000).length);
    // Twice the input, at most twice the work (plus the constant for the prefix): no super-linear term.
    expect(long.work.steps).toBeLessThanOrEqual(2 * short.work.steps + 2 * (tokens + 1) * 10);
  });

  it('a 10,000-character URI that does match is found in linear work too', () => {
    const { result, work } = steps('**a**a**a**a**b', `${'a'.repeat(10_000)}b`);
    expect(result).toBe(true);
    expect(work.steps).toBeLessThanOrEqual(16 * 10_001);
  });
});
