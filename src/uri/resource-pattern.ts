// A policy rule's resource pattern: a glob over canonical upstream URIs, optionally namespaced. Pure.
import { compileGlob, globProblem, type Glob } from './glob.js';
import { canonicalFormProblem } from './normalize-uri.js';

/** A compiled resource pattern. */
export interface ResourcePattern {
  /** The server the pattern is limited to when it was written namespaced (`docs+file:///**`). */
  readonly server: string | undefined;
  /** The glob over the upstream's own URI, in canonical form (see `normalizeUri`). */
  readonly glob: Glob;
  /**
   * True when the pattern has a literal `?` (written `\?`) or `#`: it is matched against the whole
   * URI. Otherwise it is matched against the URI without its query and fragment (see
   * {@link withoutQuery}), so `file:///secrets/*.md` also covers `file:///secrets/a.md?raw`.
   */
  readonly wholeUri: boolean;
}

/** A canonical URI (or prefix) up to its query or fragment; canonical paths never hold a raw `?` or `#`. */
export function withoutQuery(uri: string): string {
  const end = uri.search(/[?#]/);
  return end < 0 ? uri : uri.slice(0, end);
}

/**
 * Why `pattern` cannot be a resource pattern, or undefined when it can: not a glob (see
 * `compileGlob`), or literal text that is not in the canonical form URIs are compared in
 * (`FILE:///x`, `file:///a/../b`, `file:///%7Ex`), so it could never match.
 */
export function resourcePatternProblem(pattern: string): string | undefined {
  const problem = globProblem(pattern);
  if (problem !== undefined) return problem;
  // Wildcards stand in as `x`; a namespaced pattern (`docs+file:...`) reads as the scheme `docs+file`.
  const example = compileGlob(pattern.normalize('NFC')).example('x');
  // A pattern that starts with a wildcard may cover the scheme too (`**`, `*/x`): check it under one.
  const startsWild = /^(?:\*|\?)/.test(pattern) && !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(example);
  return canonicalFormProblem(startsWild ? `x:${example}` : example);
}

/**
 * The server a pattern names with its `<server-id>+` prefix, if that id is one of `serverIds`. A
 * `+` escaped as `\+` never names a server (`git\+ssh://**` matches upstream URIs `git+ssh://…`).
 */
export function patternServer(pattern: string, serverIds: ReadonlySet<string>): string | undefined {
  const plus = pattern.indexOf('+');
  const head = pattern.slice(0, plus);
  return plus > 0 && serverIds.has(head) ? head : undefined;
}

/**
 * Compiles a resource pattern. One that starts with `<server-id>+` (an id in `serverIds`) matches
 * only that server's URIs, on the rest of the pattern; any other matches every server's. One with
 * no literal `?` or `#` ignores the URI's query and fragment (see {@link ResourcePattern.wholeUri}).
 * Throws `GlobSyntaxError` for an invalid glob (validate with {@link resourcePatternProblem} first).
 *
 * @example compileResourcePattern('docs+file:///**', new Set(['docs'])).server // 'docs'
 */
export function compileResourcePattern(pattern: string, serverIds: ReadonlySet<string>): ResourcePattern {
  const server = patternServer(pattern, serverIds);
  const source = server === undefined ? pattern : pattern.slice(server.length + 1);
  return { server, glob: compileGlob(source.normalize('NFC')), wholeUri: /\\\?|#/.test(source) };
}
