// A policy rule's resource pattern: a glob over canonical upstream URIs, optionally namespaced. Pure.
import { compileGlob, globProblem, type Glob } from './glob.js';
import { canonicalFormProblem } from './normalize-uri.js';

/** A compiled resource pattern. */
export interface ResourcePattern {
  /** The server the pattern is limited to when it was written namespaced (`docs+file:///**`). */
  readonly server: string | undefined;
  /** The glob over the upstream's own URI, in canonical form (see `normalizeUri`). */
  readonly glob: Glob;
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
  const example = compileGlob(pattern).example('x');
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
 * only that server's URIs, on the rest of the pattern; any other matches every server's.
 * Throws `GlobSyntaxError` for an invalid glob (validate with {@link resourcePatternProblem} first).
 *
 * @example compileResourcePattern('docs+file:///**', new Set(['docs'])).server // 'docs'
 */
export function compileResourcePattern(pattern: string, serverIds: ReadonlySet<string>): ResourcePattern {
  const server = patternServer(pattern, serverIds);
  return { server, glob: compileGlob(server === undefined ? pattern : pattern.slice(server.length + 1)) };
}
