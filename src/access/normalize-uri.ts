// The canonical form URIs are compared in by policy, and the URIs refused outright. Pure.

/** Longest URI accepted, in characters: bounds the cost of matching it against the rules. */
export const MAX_URI_LENGTH = 16_384;

/** A URI in canonical form, or why it is refused. */
export type NormalizedUri = { readonly ok: true; readonly uri: string } | { readonly ok: false; readonly reason: string };

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
/** C0 controls, DEL, C1 controls, LINE SEPARATOR, PARAGRAPH SEPARATOR. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const MALFORMED_ESCAPE = /%(?![0-9A-Fa-f]{2})/;
const ESCAPE = /%[0-9A-Fa-f]{2}/g;
/** Escapes refused before the query: `/`, `\`, `.`, NUL. */
const FORBIDDEN_ESCAPE = /%(?:2[fFeE]|5[cC]|00)/;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The canonical form of `uri` for policy matching, or the reason it is refused.
 *
 * Canonical form: the scheme and the host lower-cased; in the path, percent-escapes decoded except
 * those of `%`, `?` and `#` (which stay escaped, hex upper-cased), so `%73ecret`, `%7Ecret` or
 * `caf%C3%A9` compare as the characters an upstream would read; then dot segments removed
 * (RFC 3986 §5.2.4) when the path is hierarchical (starts with `/`). Userinfo, port, query and
 * fragment are kept as they are. A trailing slash is kept: `file:///a` and `file:///a/` differ
 * (globs cover both with `file:///a/**`).
 *
 * Refused: longer than {@link MAX_URI_LENGTH}; no scheme; raw control characters (C0, DEL, C1,
 * U+2028, U+2029), a raw backslash or a lone surrogate anywhere; a `%` not followed by two hex
 * digits; before the query, an escaped `/`, `\`, `.` or NUL in any case (`%2f %5C %2E %00`); in the
 * path, an escaped control character, a double escape (`%252e`), escapes that are not UTF-8, an
 * empty segment (`a//b`: file systems and many web servers read it as `a/b`, so it would slip past
 * a rule written for `a/b`), and a `.` or `..` segment in a path that is not hierarchical
 * (`memo:a/../b`).
 *
 * @example normalizeUri('FILE:///handbook/../secrets') // { ok: true, uri: 'file:///secrets' }
 * @example normalizeUri('file:///handbook/%2e%2e/secrets') // { ok: false, reason: ... }
 */
export function normalizeUri(uri: string): NormalizedUri {
  return isPlainCanonical(uri) ? { ok: true, uri } : normalize(uri);
}

/** {@link normalizeUri} without the fast path (the reference the fast path is tested against). */
export function normalizeUriFull(uri: string): NormalizedUri {
  return normalize(uri);
}

/** Printable ASCII after a lower-case scheme, without `%` or `\`: nothing to decode or refuse. */
const PLAIN = /^[a-z][a-z0-9+.-]*:[\x21-\x24\x26-\x5b\x5d-\x7e]*$/;
const QUERY_OR_FRAGMENT = /[?#]/;
const DOT_SEGMENT = /(?:^|\/)\.\.?(?:\/|$)/;

/**
 * True when `uri` is already in canonical form and `normalize` would return it unchanged: the
 * common case (a listing's URIs), decided with three regex tests instead of the full pass. A URI
 * this cannot vouch for takes the full pass; a test checks the two agree.
 */
export function isPlainCanonical(uri: string): boolean {
  if (uri.length > MAX_URI_LENGTH || !PLAIN.test(uri)) return false;
  const rest = uri.slice(uri.indexOf(':') + 1);
  const end = rest.search(QUERY_OR_FRAGMENT);
  const hierarchy = end < 0 ? rest : rest.slice(0, end);
  let path = hierarchy;
  if (hierarchy.startsWith('//')) {
    const slash = hierarchy.indexOf('/', 2);
    const authority = slash < 0 ? hierarchy.slice(2) : hierarchy.slice(2, slash);
    if (authority.slice(authority.lastIndexOf('@') + 1) !== authority.slice(authority.lastIndexOf('@') + 1).toLowerCase()) return false;
    path = slash < 0 ? '' : hierarchy.slice(slash);
  }
  return !path.includes('//') && !DOT_SEGMENT.test(path);
}

/**
 * The canonical form of a URI template's literal prefix (the text before its first `{`): like
 * {@link normalizeUri}, after dropping what the rest of the template could still change (a
 * trailing incomplete `%` escape, a trailing `.` or `..` segment). A prefix that has not reached
 * its `:` yet is only lower-cased.
 */
export function normalizeUriPrefix(prefix: string): NormalizedUri {
  let cut = prefix.replace(/%[0-9A-Fa-f]?$/, '');
  if (!SCHEME.test(cut)) {
    if (/^(?:[A-Za-z][A-Za-z0-9+.-]*)?$/.test(cut)) return { ok: true, uri: cut.toLowerCase() };
    return { ok: false, reason: 'no scheme' };
  }
  cut = cut.replace(/([/:])\.\.?$/, '$1');
  return normalize(cut);
}

/**
 * Why `text` is not in canonical form (as a reason for a config error), or undefined when it is:
 * a glob's literal text must be, or it could never match a canonical URI.
 */
export function canonicalFormProblem(text: string): string | undefined {
  const result = normalize(text);
  if (!result.ok) return result.reason;
  if (result.uri === text) return undefined;
  const scheme = SCHEME.exec(text)![1]!;
  if (scheme !== scheme.toLowerCase()) return 'write the scheme in lower case (URIs are compared with it lower-cased)';
  const rest = text.slice(scheme.length + 1);
  if (rest.startsWith('//')) {
    const authority = /^[^/?#]*/.exec(rest.slice(2))![0];
    if (authority !== lowerHost(authority)) return 'write the host in lower case (URIs are compared with it lower-cased)';
  }
  const path = /^[^?#]*/.exec(rest)![0];
  if (/\/\.\.?(?:\/|$)/.test(path)) return 'a "." or ".." segment never matches (URIs are compared with dot segments resolved)';
  return 'write percent-escaped characters in the path as themselves (URIs are compared with them decoded, except %25, %3F and %23, in upper-case hex)';
}

function refuse(reason: string): NormalizedUri {
  return { ok: false, reason };
}

function normalize(uri: string): NormalizedUri {
  if (uri.length > MAX_URI_LENGTH) return refuse(`longer than ${MAX_URI_LENGTH} characters`);
  if (CONTROL.test(uri)) return refuse('a control character');
  if (uri.includes('\\')) return refuse('a backslash');
  if (LONE_SURROGATE.test(uri)) return refuse('a lone surrogate');
  if (MALFORMED_ESCAPE.test(uri)) return refuse('a "%" not followed by two hex digits');
  const scheme = SCHEME.exec(uri);
  if (!scheme) return refuse('no scheme');
  const rest = uri.slice(scheme[0].length);
  let end = rest.search(/[?#]/);
  if (end < 0) end = rest.length;
  const hierarchy = rest.slice(0, end);
  if (FORBIDDEN_ESCAPE.test(hierarchy)) return refuse('an escaped "/", "\\", "." or NUL before the query');
  let authority: string | undefined;
  let path = hierarchy;
  if (hierarchy.startsWith('//')) {
    const slash = hierarchy.indexOf('/', 2);
    authority = lowerHost(hierarchy.slice(2, slash < 0 ? hierarchy.length : slash));
    path = slash < 0 ? '' : hierarchy.slice(slash);
  }
  const decoded = decodePath(path);
  if (!decoded.ok) return decoded;
  path = decoded.uri;
  if (path.includes('//')) return refuse('an empty path segment ("//")');
  if (path.startsWith('/')) path = removeDotSegments(path);
  else if (path.split('/').some((s) => s === '.' || s === '..')) return refuse('a dot segment in a path that is not hierarchical');
  return { ok: true, uri: `${scheme[1]!.toLowerCase()}:${authority === undefined ? '' : `//${authority}`}${path}${rest.slice(end)}` };
}

/** Lower-cases the host (and port) of an authority; userinfo keeps its case. */
function lowerHost(authority: string): string {
  const at = authority.lastIndexOf('@');
  return authority.slice(0, at + 1) + authority.slice(at + 1).toLowerCase();
}

/** Decodes a path's escapes except `%`, `?`, `#` (kept, upper-cased); refuses controls, double escapes and non-UTF-8. */
function decodePath(path: string): NormalizedUri {
  if (!path.includes('%')) return { ok: true, uri: path };
  let out = '';
  let last = 0;
  let bytes: number[] = [];
  let runEnd = -1;
  /** Decodes the pending run of escaped bytes; a string starting with "!" is a refusal. */
  const flush = (): string => {
    if (bytes.length === 0) return '';
    let text: string;
    try {
      text = UTF8.decode(Uint8Array.from(bytes));
    } catch {
      return '!percent-escapes that are not UTF-8 text';
    }
    bytes = [];
    return CONTROL.test(text) ? '!an escaped control character in the path' : text;
  };
  for (const m of path.matchAll(ESCAPE)) {
    const at = m.index;
    if (at !== runEnd) {
      const text = flush();
      if (text.startsWith('!')) return refuse(text.slice(1));
      out += text + path.slice(last, at);
    }
    const byte = parseInt(m[0].slice(1), 16);
    runEnd = at + 3;
    last = runEnd;
    if (byte < 0x20 || byte === 0x7f) return refuse('an escaped control character in the path');
    if (byte === 0x25 && /^[0-9A-Fa-f]{2}/.test(path.slice(runEnd))) return refuse('a double percent-escape in the path');
    if (byte === 0x25 || byte === 0x3f || byte === 0x23) {
      const text = flush();
      if (text.startsWith('!')) return refuse(text.slice(1));
      out += text + m[0].toUpperCase();
    } else {
      bytes.push(byte);
    }
  }
  const text = flush();
  if (text.startsWith('!')) return refuse(text.slice(1));
  return { ok: true, uri: out + text + path.slice(last) };
}

/** RFC 3986 §5.2.4 on a path that starts with `/` and has no empty segment. */
function removeDotSegments(path: string): string {
  if (!path.includes('.')) return path;
  const segments = path.slice(1).split('/');
  const out: string[] = [];
  segments.forEach((segment, i) => {
    const isLast = i === segments.length - 1;
    if (segment === '.' || segment === '..') {
      if (segment === '..') out.pop();
      if (isLast) out.push('');
    } else {
      out.push(segment);
    }
  });
  return `/${out.join('/')}`;
}
