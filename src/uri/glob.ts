// Globs over URIs compiled once into an NFA and run on a state set: linear in the URI, never backtracks. Pure.

/** Longest glob accepted, in characters: bounds the per-character cost of a match. */
export const MAX_GLOB_LENGTH = 1024;

/** Characters a backslash may escape in a glob (to match them literally). */
const ESCAPABLE = new Set(['*', '?', '[', ']', '{', '}', '+']);
/** Characters reserved for future syntax (character classes, alternatives): escape them to match them. */
const RESERVED = new Set(['[', ']', '{', '}']);

const SLASH = 0x2f;

// Token kinds. State i of the automaton means "tokens [0, i) consumed"; state n (the last) accepts.
const LIT = 0; // one given character
const ONE = 1; // `?`: one character other than `/`
const STAR = 2; // `*`: any run of characters other than `/`, possibly empty
const GLOBSTAR = 3; // `**`: any run of characters, possibly empty

/** A glob that is not valid; `message` says why, for a config error. */
export class GlobSyntaxError extends Error {
  override readonly name = 'GlobSyntaxError';
}

/** Counts the automaton's work, for tests that check a match stays linear. */
export interface GlobWork {
  /** Active states stepped, summed over every character consumed. */
  steps: number;
}

/**
 * A compiled glob. Syntax: `*` matches any run of characters within one `/`-separated segment
 * (possibly empty), `**` any run of characters across segments (possibly empty), `?` one character
 * other than `/`; `\` before one of `* ? [ ] { } +` matches that character literally; `[ ] { }`
 * are otherwise reserved; `***` is an error; everything else matches itself. A `**` that is a whole
 * segment also matches zero segments: `a/**\/b` matches `a/b`, and a trailing `/**` matches the
 * path without it, so `dir/**` matches `dir`, `dir/` and everything below. Matching is anchored
 * (the whole string), by code point, case-sensitive, with no special case for names starting with `.`.
 *
 * Every operation runs in O(length of input × length of glob) time: the automaton is simulated on a
 * set of states, never by backtracking.
 */
export interface Glob {
  /** The glob as written. */
  readonly source: string;
  /** True when the glob matches all of `input`. */
  matches(input: string, work?: GlobWork): boolean;
  /** True when some string starting with `prefix` matches (`prefix` itself counts). */
  matchesSomeWithPrefix(prefix: string): boolean;
  /**
   * True when every string starting with `prefix` matches. Sound, not complete: true only when,
   * after `prefix`, the automaton can sit in a `**` from which it accepts without consuming
   * anything more (e.g. `file:///a/**` after `file:///a/b`); a glob that covers every continuation
   * some other way (`*` followed by `**`...) may still answer false.
   */
  matchesEveryWithPrefix(prefix: string): boolean;
  /**
   * The glob with every wildcard replaced by `fill` and escapes resolved: one string it matches
   * when `fill` is one character other than `/`. Used to check that a glob is written in the form
   * the strings it is matched against are in.
   */
  example(fill: string): string;
}

/**
 * Compiles `pattern` (see {@link Glob} for the syntax). Throws {@link GlobSyntaxError} when it is
 * empty, longer than {@link MAX_GLOB_LENGTH}, has `***`, a reserved character or a dangling `\`.
 *
 * @example compileGlob('file:///handbook/**').matches('file:///handbook/a/b.md') // true
 * @example compileGlob('memo:*').matches('memo:a/b') // false: `*` stays within one segment
 */
export function compileGlob(pattern: string): Glob {
  return new NfaGlob(pattern, tokenize(pattern));
}

/** The problem with `pattern` as a glob, or undefined when it compiles. */
export function globProblem(pattern: string): string | undefined {
  try {
    tokenize(pattern);
    return undefined;
  } catch (err) {
    if (err instanceof GlobSyntaxError) return err.message;
    throw err;
  }
}

interface Tokens {
  kinds: number[];
  /** The code point of each LIT token (0 for the others). */
  chars: number[];
}

function tokenize(pattern: string): Tokens {
  if (pattern.length === 0) throw new GlobSyntaxError('a glob must not be empty');
  if (pattern.length > MAX_GLOB_LENGTH) throw new GlobSyntaxError(`a glob must not be longer than ${MAX_GLOB_LENGTH} characters`);
  const kinds: number[] = [];
  const chars: number[] = [];
  const points = Array.from(pattern);
  for (let i = 0; i < points.length; i++) {
    const c = points[i]!;
    if (c === '\\') {
      const next = points[i + 1];
      if (next === undefined || !ESCAPABLE.has(next)) {
        throw new GlobSyntaxError(`"\\" must be followed by one of ${[...ESCAPABLE].join(' ')} (a URI never contains a backslash)`);
      }
      kinds.push(LIT);
      chars.push(next.codePointAt(0)!);
      i++;
    } else if (c === '*') {
      let run = 1;
      while (points[i + run] === '*') run++;
      if (run > 2) throw new GlobSyntaxError('"***" is not a glob: use "*" (within a segment) or "**" (across segments)');
      kinds.push(run === 2 ? GLOBSTAR : STAR);
      chars.push(0);
      i += run - 1;
    } else if (c === '?') {
      kinds.push(ONE);
      chars.push(0);
    } else if (RESERVED.has(c)) {
      throw new GlobSyntaxError(`"${c}" is reserved (no character classes or alternatives); write "\\${c}" to match it literally`);
    } else {
      kinds.push(LIT);
      chars.push(c.codePointAt(0)!);
    }
  }
  return { kinds, chars };
}

class NfaGlob implements Glob {
  private readonly kinds: Uint8Array;
  private readonly chars: Uint32Array;
  /** Epsilon edges of each state, all pointing forward (to a higher state). */
  private readonly epsilon: number[][];
  /** Per state: a `**` from which the accepting state is reachable without consuming anything. */
  private readonly universal: Uint8Array;
  /** The string when the glob has no wildcard (matched by equality). */
  private readonly literal: string | undefined;
  /** The accepting state. */
  private readonly final: number;
  /**
   * The literal text every match starts with: the leading literal states, up to the first that
   * has an epsilon edge (so skipping them cannot skip an alternative), and how many states it is.
   */
  private readonly head: string;
  private readonly headStates: number;

  constructor(
    readonly source: string,
    tokens: Tokens,
  ) {
    const n = tokens.kinds.length;
    this.final = n;
    this.kinds = Uint8Array.from(tokens.kinds);
    this.chars = Uint32Array.from(tokens.chars);
    this.epsilon = Array.from({ length: n + 1 }, () => [] as number[]);
    const isSlash = (i: number) => this.kinds[i] === LIT && this.chars[i] === SLASH;
    for (let i = 0; i < n; i++) {
      const kind = this.kinds[i];
      if (kind !== STAR && kind !== GLOBSTAR) continue;
      this.epsilon[i]!.push(i + 1);
      if (kind !== GLOBSTAR || i === 0 || !isSlash(i - 1)) continue;
      if (i + 1 === n)
        this.epsilon[i - 1]!.push(n); // `x/**` also matches `x`
      else if (isSlash(i + 1)) this.epsilon[i]!.push(i + 2); // `x/**/y` also matches `x/y`
    }
    const reachesFinal = new Uint8Array(n + 1);
    reachesFinal[n] = 1;
    for (let i = n - 1; i >= 0; i--) if (this.epsilon[i]!.some((t) => reachesFinal[t] === 1)) reachesFinal[i] = 1;
    this.universal = this.kinds.map((k, i) => (k === GLOBSTAR && reachesFinal[i] === 1 ? 1 : 0));
    this.literal = tokens.kinds.every((k) => k === LIT) ? String.fromCodePoint(...tokens.chars) : undefined;
    let h = 0;
    while (h < n && this.kinds[h] === LIT && this.epsilon[h]!.length === 0) h++;
    this.headStates = h;
    this.head = String.fromCodePoint(...tokens.chars.slice(0, h));
  }

  matches(input: string, work?: GlobWork): boolean {
    if (this.literal !== undefined && work === undefined) return input === this.literal;
    const set = this.run(input, work);
    return set !== undefined && set[this.final] === 1;
  }

  matchesSomeWithPrefix(prefix: string): boolean {
    // Every live state can reach acceptance: a LIT or `?` can always be satisfied, a star skipped.
    return this.run(prefix) !== undefined;
  }

  matchesEveryWithPrefix(prefix: string): boolean {
    const set = this.run(prefix);
    if (set === undefined) return false;
    for (let i = 0; i < this.final; i++) if (set[i] === 1 && this.universal[i] === 1) return true;
    return false;
  }

  example(fill: string): string {
    let out = '';
    for (let i = 0; i < this.final; i++) out += this.kinds[i] === LIT ? String.fromCodePoint(this.chars[i]!) : fill;
    return out;
  }

  /** The set of states after consuming `input` (closed under epsilon), or undefined once it is empty. */
  private run(input: string, work?: GlobWork): Uint8Array | undefined {
    const size = this.final + 1;
    let current = new Uint8Array(size);
    let next = new Uint8Array(size);
    // The literal head is matched by one comparison; the automaton starts after it. (An input
    // shorter than the head, e.g. a template prefix, takes the automaton from the start.)
    let k = 0;
    if (this.headStates > 0 && input.length >= this.head.length) {
      if (!input.startsWith(this.head)) return undefined;
      current[this.headStates] = 1;
      k = this.head.length;
      if (work) work.steps += this.headStates;
    } else {
      current[0] = 1;
    }
    this.close(current);
    while (k < input.length) {
      const c = input.codePointAt(k)!;
      k += c > 0xffff ? 2 : 1;
      next.fill(0);
      let steps = 0;
      for (let i = 0; i < this.final; i++) {
        if (current[i] !== 1) continue;
        steps++;
        switch (this.kinds[i]) {
          case LIT:
            if (c === this.chars[i]) next[i + 1] = 1;
            break;
          case ONE:
            if (c !== SLASH) next[i + 1] = 1;
            break;
          case STAR:
            if (c !== SLASH) next[i] = 1;
            break;
          default:
            next[i] = 1;
        }
      }
      if (work) work.steps += steps;
      if (!this.close(next)) return undefined;
      [current, next] = [next, current];
    }
    return current;
  }

  /** Adds the epsilon successors of every state in `set`, in one ascending pass; true when non-empty. */
  private close(set: Uint8Array): boolean {
    let any = false;
    for (let i = 0; i <= this.final; i++) {
      if (set[i] !== 1) continue;
      any = true;
      for (const t of this.epsilon[i]!) set[t] = 1;
    }
    return any;
  }
}
