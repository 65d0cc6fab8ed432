// The one canonical form of a URI (decided on and forwarded upstream), and the spellings refused outright. Pure.

/** Longest URI accepted, in characters: bounds the cost of matching it against the rules. */
export const MAX_URI_LENGTH = 16_384;

/** A URI in canonical form, or why it is refused. */
export type NormalizedUri = { readonly ok: true; readonly uri: string } | { readonly ok: false; readonly reason: string };

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
/** C0 controls, DEL, C1 controls, LINE SEPARATOR, PARAGRAPH SEPARATOR. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const MALFORMED_ESCAPE = /%(?![0-9A-Fa-f]{2})/;
const DOUBLE_ESCAPE = /%25[0-9A-Fa-f]{2}/i;
const ESCAPE = /%[0-9A-Fa-f]{2}/g;
/** Escapes refused before the query: `/`, `\`, NUL (a reader that decodes them sees other segments). */
const FORBIDDEN_ESCAPE = /%(?:2[fF]|5[cC]|00)/;
/** A `.` or `..` between separators a reader may split a query or fragment on (`/`, `\`, `?`, `#`, `&`, `=`, `;`). */
const DOT_COMPONENT = /(?:^|[/\\?#&=;])\.{1,2}(?=$|[/\\?#&=;])/;
const NON_ASCII = /[^\x00-\x7f]/;
const UNRESERVED_ESCAPE = /%(?:[46][1-9A-Fa-f]|[57][0-9Aa]|3[0-9]|2[dDeE]|5[fF]|7[eE])/g;
const UTF8 = new TextDecoder('utf-8', { fatal: true });
const DEFAULT_PORT: Readonly<Record<string, string>> = { http: '80', https: '443' };

/**
 * The canonical form of a URI sent by a client, or why it is refused (then it is answered exactly
 * as a missing resource). The same string is what policy decides on, what the cache is keyed by,
 * what the audit log names as `upstreamUri`, and what is sent upstream.
 *
 * Canonical form (RFC 3986 §6.2.2 plus scheme rules), in this order:
 * - the whole text in Unicode NFC;
 * - the scheme lower-cased; in an authority, escapes of unreserved characters decoded and the host
 *   (not the userinfo) lower-cased;
 * - in the path, percent-escapes decoded except those of `%`, `?` and `#` (kept, hex upper-cased),
 *   so `%73ecret`, `%7Ecret` and `caf%C3%A9` are the characters an upstream would read (then NFC
 *   again);
 * - in the query and fragment, escapes of unreserved characters decoded, the others upper-cased;
 * - `file`: an empty or `localhost` authority (any case, escaped or not) becomes `file:///`, and
 *   `file:/x` and `file:x` (no authority) become `file:///x`, as a WHATWG reader takes them;
 * - `http`, `https`: the default port (and an empty one) removed, an empty path becomes `/`.
 *
 * Refused (a spelling whose meaning depends on the reader): longer than {@link MAX_URI_LENGTH};
 * no scheme; raw control characters (C0, DEL, C1, U+2028, U+2029), a backslash or a lone
 * surrogate anywhere; trailing white space; a `%` not followed by two hex digits, or a double
 * escape (`%252e`), anywhere; before the query, an escaped `/`, `\` or NUL; in the path, an escaped
 * control character, escapes that are not UTF-8, an empty segment (`a//b`), and a `.` or `..`
 * segment, escaped or not; in the query or fragment, a `.` or `..` between `/ \ ? # & = ;`,
 * escaped or not (`?/../..`); on `file:`, an authority other than empty or `localhost`; on
 * `http(s):`, no authority (`http:h/x`), an empty or non-ASCII host, or a port that is not a number.
 *
 * @example normalizeUri('FILE://LocalHost/handbook/%61.md') // { ok: true, uri: 'file:///handbook/a.md' }
 * @example normalizeUri('file:///handbook/%2e%2e/secrets') // { ok: false, reason: ... }
 */
export function normalizeUri(uri: string): NormalizedUri {
  return isPlainCanonical(uri) ? { ok: true, uri } : normalize(uri, false);
}

/** {@link normalizeUri} without the fast path (the reference the fast path is tested against). */
export function normalizeUriFull(uri: string): NormalizedUri {
  return normalize(uri, false);
}

/**
 * The canonical form policy decides an upstream-issued URI on (one an upstream listed, or named in
 * a read's contents or an update): as {@link normalizeUri}, except that dot segments in the path
 * are resolved (RFC 3986 §5.2.4) instead of refused, and those in the query and fragment are left
 * as they are. Such a URI is forwarded exactly as issued; this form only decides on it.
 *
 * @example normalizeListedUri('file:///public/../secrets/k') // { ok: true, uri: 'file:///secrets/k' }
 */
export function normalizeListedUri(uri: string): NormalizedUri {
  return isPlainCanonical(uri) ? { ok: true, uri } : normalize(uri, true);
}

const PLAIN_HOST = /^[a-z0-9.-]+(?::[1-9][0-9]{0,3})?$/;

/**
 * True when `uri` is already in canonical form and the full pass would return it unchanged: the
 * common case (a listing's URIs), decided in one scan instead of the full pass. A URI this cannot
 * vouch for takes the full pass; a test checks the two agree.
 *
 * The scan (every listed URI goes through it, so it is one pass over the characters, not a regex
 * per rule): a lower-case scheme (`[a-z][a-z0-9+.-]*`) up to the first `:`; after it printable
 * ASCII only, without `%`, `\` or space (nothing to decode or refuse); no `.` or `..` component
 * between the separators a reader may split on (`/`, `?`, `#`, `&`, `=`, `;`: {@link DOT_COMPONENT});
 * and where the query or fragment begins. Then the authority and path rules, on those parts only.
 */
export function isPlainCanonical(uri: string): boolean {
  const n = uri.length;
  if (n === 0 || n > MAX_URI_LENGTH) return false;
  let c = uri.charCodeAt(0);
  if (c < 0x61 || c > 0x7a) return false;
  let colon = 1;
  for (; colon < n; colon++) {
    c = uri.charCodeAt(colon);
    if (c === 0x3a) break;
    if (!((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2e || c === 0x2d)) return false;
  }
  if (colon === n) return false;
  let end = n; // where the query or fragment begins (or the end)
  let component = colon + 1; // where the current component begins
  let upper = false; // an upper-case letter after the scheme (then the host is looked at)
  for (let i = colon + 1; i <= n; i++) {
    c = i === n ? -1 : uri.charCodeAt(i);
    if (c !== -1 && (c < 0x21 || c > 0x7e || c === 0x25 || c === 0x5c)) return false;
    if (c >= 0x41 && c <= 0x5a) upper = true;
    if (c === -1 || c === 0x2f || c === 0x3f || c === 0x23 || c === 0x26 || c === 0x3d || c === 0x3b) {
      const length = i - component;
      if (length === 1 && uri.charCodeAt(component) === 0x2e) return false;
      if (length === 2 && uri.charCodeAt(component) === 0x2e && uri.charCodeAt(component + 1) === 0x2e) return false;
      if (end === n && (c === 0x3f || c === 0x23)) end = i;
      component = i + 1;
    }
  }
  // The hierarchical part is [colon + 1, end); its path [path, end). Indices, not slices: this runs for every listed URI.
  const file = colon === 4 && uri.startsWith('file');
  const https = colon === 5 && uri.startsWith('https');
  const http = colon === 4 && uri.startsWith('http');
  let path = colon + 1;
  if (end - path >= 2 && uri.charCodeAt(path) === 0x2f && uri.charCodeAt(path + 1) === 0x2f) {
    const from = path + 2;
    const found = uri.indexOf('/', from);
    const slash = found < 0 || found >= end ? -1 : found;
    path = slash < 0 ? end : slash; // no slash: the path is empty
    if (file && path > from) return false;
    if (http || https) {
      const authority = uri.slice(from, path);
      if (!PLAIN_HOST.test(authority) || path === end || authority.endsWith(https ? ':443' : ':80')) return false;
    } else if (upper) {
      const authority = uri.slice(from, path);
      const host = authority.slice(authority.lastIndexOf('@') + 1);
      if (host !== host.toLowerCase()) return false;
    }
  } else if (file || http || https) {
    return false;
  }
  if (file && path === end) return false;
  const doubled = uri.indexOf('//', path);
  return doubled < 0 || doubled + 2 > end;
}

/**
 * The canonical form of a URI template's literal prefix (the text before its first `{`), for
 * deciding what an upstream's template can produce: like {@link normalizeListedUri}, after dropping
 * what the rest of the template could still change (a trailing incomplete `%` escape, a trailing
 * `.` or `..` segment). A prefix that has not reached its `:` yet, or a `file:` prefix that has not
 * reached its path, is only lower-cased.
 */
export function normalizeUriPrefix(prefix: string): NormalizedUri {
  let cut = prefix.replace(/%[0-9A-Fa-f]?$/, '');
  if (!SCHEME.test(cut)) {
    if (/^(?:[A-Za-z][A-Za-z0-9+.-]*)?$/.test(cut)) return { ok: true, uri: cut.toLowerCase() };
    return { ok: false, reason: 'no scheme' };
  }
  if (/^(?:file|https?):\/{0,2}$/i.test(cut)) return { ok: true, uri: cut.toLowerCase() };
  cut = cut.replace(/([/:])\.\.?$/, '$1');
  return normalize(cut, true, true);
}

/**
 * Why `text` is not in canonical form (as a reason for a config error), or undefined when it is:
 * a glob's literal text must be, or it could never match a canonical URI. Text is taken in NFC
 * (patterns are compiled in NFC, so an NFD pattern matches the same URIs).
 */
export function canonicalFormProblem(text: string): string | undefined {
  const nfc = text.normalize('NFC');
  const result = normalize(nfc, true);
  if (!result.ok) return result.reason;
  if (result.uri === nfc) {
    const strict = normalize(nfc, false);
    return strict.ok ? undefined : `${strict.reason} (such a URI is refused, so this never matches)`;
  }
  const scheme = SCHEME.exec(nfc)![1]!;
  if (scheme !== scheme.toLowerCase()) return 'write the scheme in lower case (URIs are compared with it lower-cased)';
  const rest = nfc.slice(scheme.length + 1);
  if (scheme.toLowerCase() === 'file' && !rest.startsWith('///'))
    return 'write file URIs as file:///path (an empty or localhost authority, file:/path and file:path are compared as file:///path)';
  if (rest.startsWith('//')) {
    const authority = /^[^/?#]*/.exec(rest.slice(2))![0];
    if (authority !== lowerHost(authority)) return 'write the host in lower case (URIs are compared with it lower-cased)';
    if (/^https?$/i.test(scheme) && /:\d*$/.test(authority)) return 'leave out the default port (URIs are compared without it)';
  }
  const path = /^[^?#]*/.exec(rest)![0];
  if (/\/\.\.?(?:\/|$)/.test(path)) return 'a "." or ".." segment never matches (URIs are compared with dot segments resolved)';
  if (/^https?$/i.test(scheme) && /^\/\/[^/?#]*$/.test(path)) return 'end the host with "/" (URIs are compared with an empty path as "/")';
  return 'write percent-escaped characters in the path as themselves (URIs are compared with them decoded, except %25, %3F and %23, in upper-case hex)';
}

function refuse(reason: string): NormalizedUri {
  return { ok: false, reason };
}

/**
 * The full pass; `listed` resolves dot segments in the path (raw ones: an escaped one is refused)
 * and leaves the query's alone; `prefix` leaves an empty http(s) path empty.
 */
function normalize(input: string, listed: boolean, prefix = false): NormalizedUri {
  if (input.length > MAX_URI_LENGTH) return refuse(`longer than ${MAX_URI_LENGTH} characters`);
  if (CONTROL.test(input)) return refuse('a control character');
  if (input.includes('\\')) return refuse('a backslash');
  if (LONE_SURROGATE.test(input)) return refuse('a lone surrogate');
  if (MALFORMED_ESCAPE.test(input)) return refuse('a "%" not followed by two hex digits');
  if (DOUBLE_ESCAPE.test(input)) return refuse('a double percent-escape');
  if (/\s$/.test(input)) return refuse('trailing white space');
  const uri = NON_ASCII.test(input) ? input.normalize('NFC') : input;
  const scheme = SCHEME.exec(uri);
  if (!scheme) return refuse('no scheme');
  const name = scheme[1]!.toLowerCase();
  const rest = uri.slice(scheme[0].length);
  let end = rest.search(/[?#]/);
  if (end < 0) end = rest.length;
  const hierarchy = rest.slice(0, end);
  const tail = rest.slice(end);
  if (FORBIDDEN_ESCAPE.test(hierarchy)) return refuse('an escaped "/", "\\" or NUL before the query');
  let authority: string | undefined;
  let path = hierarchy;
  if (hierarchy.startsWith('//')) {
    const slash = hierarchy.indexOf('/', 2);
    authority = lowerHost(decodeUnreserved(hierarchy.slice(2, slash < 0 ? hierarchy.length : slash)));
    path = slash < 0 ? '' : hierarchy.slice(slash);
  }
  if (name === 'file') {
    if (authority !== undefined && authority !== '' && authority !== 'localhost') return refuse('a file authority other than localhost');
    authority = '';
    if (!path.startsWith('/')) path = `/${path}`; // file:x and file: are file:///x and file:///
  } else if (name === 'http' || name === 'https') {
    if (authority === undefined) return refuse('an http(s) URI without "//" and a host');
    const host = httpAuthority(authority, DEFAULT_PORT[name]!);
    if (host === undefined) return refuse('an http(s) host that is empty, not ASCII, escaped, or with a port that is not a number');
    authority = host;
    if (path === '' && !prefix) path = '/';
  }
  if (path.includes('%') && path.split('/').some((s) => s.includes('%') && /^(?:\.|%2[eE]){1,2}$/.test(s))) return refuse('an escaped dot segment ("%2e")');
  const decoded = decodePath(path);
  if (!decoded.ok) return decoded;
  path = NON_ASCII.test(decoded.uri) ? decoded.uri.normalize('NFC') : decoded.uri;
  if (path.includes('//')) return refuse('an empty path segment ("//")');
  const hasDot = path.split('/').some((s) => s === '.' || s === '..');
  if (hasDot) {
    if (!listed || !path.startsWith('/')) return refuse('a dot segment ("." or "..") in the path');
    path = removeDotSegments(path);
  }
  const after = tail === '' ? '' : normalizeEscapes(tail);
  if (!listed && after !== '' && DOT_COMPONENT.test(decodeForCheck(after))) return refuse('a "." or ".." in the query or fragment');
  const out = `${name}:${authority === undefined ? '' : `//${authority}`}${path}${after}`;
  if (/\s$/.test(out)) return refuse('trailing white space');
  return { ok: true, uri: out };
}

/** Lower-cases the host (and port) of an authority; userinfo keeps its case. */
function lowerHost(authority: string): string {
  const at = authority.lastIndexOf('@');
  return authority.slice(0, at + 1) + authority.slice(at + 1).toLowerCase();
}

/** An http(s) authority with its default or empty port removed; undefined when the host is empty, escaped or not ASCII, or the port not a number. */
function httpAuthority(authority: string, defaultPort: string): string | undefined {
  const at = authority.lastIndexOf('@');
  const userinfo = authority.slice(0, at + 1);
  const hostPort = authority.slice(at + 1);
  const close = hostPort.startsWith('[') ? hostPort.indexOf(']') : -1;
  const colon = hostPort.indexOf(':', close + 1);
  const host = colon < 0 ? hostPort : hostPort.slice(0, colon);
  let port = colon < 0 ? '' : hostPort.slice(colon + 1);
  if (host === '' || host.includes('%') || NON_ASCII.test(host) || /\s/.test(host)) return undefined;
  if (port !== '' && !/^[0-9]{1,5}$/.test(port)) return undefined;
  if (port !== '') port = String(Number(port));
  if (Number(port) > 65535) return undefined;
  return userinfo + host + (port === '' || port === defaultPort ? '' : `:${port}`);
}

/** Decodes escapes of unreserved characters (RFC 3986 §2.3). */
function decodeUnreserved(text: string): string {
  return text.includes('%') ? text.replace(UNRESERVED_ESCAPE, (m) => String.fromCharCode(parseInt(m.slice(1), 16))) : text;
}

/** Escapes of unreserved characters decoded, the others upper-cased. */
function normalizeEscapes(text: string): string {
  return text.includes('%') ? decodeUnreserved(text).replace(ESCAPE, (m) => m.toUpperCase()) : text;
}

/** Every escape decoded byte for byte (as Latin-1): only to look for dot components a decoding reader would see. */
function decodeForCheck(text: string): string {
  return text.includes('%') ? text.replace(ESCAPE, (m) => String.fromCharCode(parseInt(m.slice(1), 16))) : text;
}

/** Decodes a path's escapes except `%`, `?`, `#` (kept, upper-cased); refuses controls and non-UTF-8. */
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
