// URI canonical form for policy: what is rewritten, what is refused, template prefixes, and pattern checks.
import { describe, expect, it } from 'vitest';
import { canonicalFormProblem, MAX_URI_LENGTH, normalizeListedUri, normalizeUri, normalizeUriPrefix } from '../../src/uri/normalize-uri.js';

const canonical = (uri: string) => {
  const r = normalizeUri(uri);
  if (!r.ok) throw new Error(`refused ${uri}: ${r.reason}`);
  return r.uri;
};
const reason = (uri: string) => {
  const r = normalizeUri(uri);
  if (r.ok) throw new Error(`accepted ${uri} as ${r.uri}`);
  return r.reason;
};

describe('normalizeUri: canonical form', () => {
  it.each([
    // already canonical: unchanged
    ['file:///handbook/a.md', 'file:///handbook/a.md'],
    ['file:///handbook/', 'file:///handbook/'],
    ['file:///handbook', 'file:///handbook'],
    ['memo:abc', 'memo:abc'],
    ['memory://knowledge-graph', 'memory://knowledge-graph'],
    ['https://h.example/a?b=%2F..%2e.#frag/.x', 'https://h.example/a?b=%2F....#frag/.x'],
    // scheme and host lower-cased; userinfo, path, query kept
    ['FILE:///Handbook/A.md', 'file:///Handbook/A.md'],
    ['HtTpS://User@Docs.EXAMPLE:8443/A?Q=B', 'https://User@docs.example:8443/A?Q=B'],
    ['https://[FE80::1]/a', 'https://[fe80::1]/a'],
    // dots that are not dot segments
    ['file:///a/..b/.c', 'file:///a/..b/.c'],
    ['file:///a/b.%2e', 'file:///a/b..'],
    ['https://h/a?v=1.2&w=..x', 'https://h/a?v=1.2&w=..x'],
    // file: an empty or localhost authority, file:/x and file:x are file:///x
    ['file://localhost/secrets/k', 'file:///secrets/k'],
    ['file://LOCALHOST/secrets/k', 'file:///secrets/k'],
    ['file://%6cocalhost/secrets/k', 'file:///secrets/k'],
    ['file://LocalHost', 'file:///'],
    ['file://', 'file:///'],
    ['file:/secrets/k', 'file:///secrets/k'],
    ['file:secrets/k', 'file:///secrets/k'],
    ['FILE:', 'file:///'],
    // http(s): default and empty ports removed, empty path is /
    ['http://h:80/a', 'http://h/a'],
    ['http://h:/a', 'http://h/a'],
    ['http://h:080/a', 'http://h/a'],
    ['https://h:443', 'https://h/'],
    ['https://h:80/a', 'https://h:80/a'],
    ['http://H.Example', 'http://h.example/'],
    ['http://h?q', 'http://h/?q'],
    // unreserved escapes decoded and the others upper-cased in the query and fragment
    ['https://h/a?q=%7e%2f%c3%a9#%61', 'https://h/a?q=~%2F%C3%A9#a'],
    // NFC, raw or escaped
    ['file:///privé/a', 'file:///privé/a'],
    ['file:///prive%CC%81/a', 'file:///privé/a'],
    ['memo:x?é', 'memo:x?é'],
    // percent-escapes in the path decoded, except %, ? and # (upper-cased)
    ['file:///%73ecrets/a', 'file:///secrets/a'],
    ['file:///a%7eb', 'file:///a~b'],
    ['file:///caf%C3%A9', 'file:///café'],
    ['file:///My%20Documents/a.md', 'file:///My Documents/a.md'],
    ['file:///a%2bb', 'file:///a+b'],
    ['file:///100%25', 'file:///100%25'],
    ['file:///a%3fb%23c', 'file:///a%3Fb%23c'],
    ['file:///%e2%82%ac%3f', 'file:///€%3F'],
  ])('%j → %j', (uri, expected) => {
    expect(canonical(uri)).toBe(expected);
    expect(canonical(expected)).toBe(expected); // idempotent
  });
});

describe('normalizeUri: refused outright', () => {
  it.each([
    // encoded separators and dots, any case, anywhere before the query
    ['file:///handbook/%2e%2e/secrets', 'an escaped'],
    ['file:///handbook/%2E%2E/secrets', 'an escaped'],
    ['file:///handbook/%2e./secrets', 'an escaped'],
    ['file:///handbook/.%2E/secrets', 'an escaped'],
    ['file:///%2e/secrets', 'an escaped'],
    ['file:///handbook%2f..%2fsecrets', 'an escaped'],
    ['file:///handbook%2F..%2Fsecrets', 'an escaped'],
    ['file:///handbook/..%5csecrets', 'an escaped'],
    ['file:///handbook/..%5Csecrets', 'an escaped'],
    ['file:///handbook/a.md%00.txt', 'an escaped'],
    ['memo:a%2fb', 'an escaped'],
    ['https://h%2f/a', 'an escaped'],
    // dot segments, raw, anywhere (the path, the query, the fragment; escaped there too)
    ['file:///handbook/../secrets', 'a dot segment'],
    ['file:///handbook/./a.md', 'a dot segment'],
    ['file:///a/b/..', 'a dot segment'],
    ['file:///..', 'a dot segment'],
    ['mid:/a/../b', 'a dot segment'],
    ['file:..', 'a dot segment'],
    ['file:///public/x?/../../secrets/key.txt', 'in the query or fragment'],
    ['file:///public/x#/../../secrets/key.txt', 'in the query or fragment'],
    ['file:///public/x?..', 'in the query or fragment'],
    ['file:///public/x?a=../b', 'in the query or fragment'],
    ['file:///public/x?%2e%2e/secrets', 'in the query or fragment'],
    ['file:///public/x?a%2F..%2Fb', 'in the query or fragment'],
    ['file:///public/x?a%5c..%5cb', 'in the query or fragment'],
    ['file:///public/x#.', 'in the query or fragment'],
    // file: any other authority
    ['file://evil/secrets/k', 'a file authority'],
    ['file://localhost:80/secrets/k', 'a file authority'],
    ['file://u@localhost/secrets/k', 'a file authority'],
    ['file://127.0.0.1/secrets/k', 'a file authority'],
    ['file://%2e/secrets/k', 'a file authority'],
    // http(s) without an authority, with an empty, escaped or non-ASCII host, or a port that is not one
    ['http:h/secrets', 'without "//"'],
    ['https:/h/secrets', 'without "//"'],
    ['http:///secrets', 'http(s) host'],
    ['http://h%C3%A9/x', 'http(s) host'],
    ['http://\uff48/x', 'http(s) host'],
    ['http://h:8o/x', 'http(s) host'],
    ['http://h:99999/x', 'http(s) host'],
    // white space a WHATWG reader would strip
    ['file:///secrets/k ', 'trailing white space'],
    ['file:///secrets/k%20', 'trailing white space'],
    // raw control characters, anywhere
    ['file:///handbook/a\u0000.md', 'a control character'],
    ['file:///handbook/a\n.md', 'a control character'],
    ['file:///handbook/a\t.md', 'a control character'],
    ['file:///handbook/a\u007f.md', 'a control character'],
    ['file:///handbook/a\u0085.md', 'a control character'],
    ['file:///handbook/a\u2028.md', 'a control character'],
    ['file:///handbook/a\u2029.md', 'a control character'],
    ['file:///a?q=\r\n', 'a control character'],
    // escaped controls in the path, including C1 and U+2028 as UTF-8
    ['file:///a%0a', 'an escaped control character'],
    ['file:///a%1F', 'an escaped control character'],
    ['file:///a%7f', 'an escaped control character'],
    ['file:///a%C2%85', 'an escaped control character'],
    ['file:///a%E2%80%A8', 'an escaped control character'],
    // backslashes, raw
    ['file:///handbook\\..\\secrets', 'a backslash'],
    ['file:///handbook/..\\secrets', 'a backslash'],
    ['file:///a?x=\\', 'a backslash'],
    // malformed or double escapes, non-UTF-8 escapes
    ['file:///a%', 'not followed by two hex digits'],
    ['file:///a%g1', 'not followed by two hex digits'],
    ['file:///a?x=%', 'not followed by two hex digits'],
    ['file:///a?x=%252e', 'a double percent-escape'],
    ['file:///handbook/%252e%252e/secrets', 'a double percent-escape'],
    ['file:///a%ff', 'not UTF-8 text'],
    ['file:///a%C3', 'not UTF-8 text'],
    ['file:///a%ED%A0%80', 'not UTF-8 text'],
    // empty segments (file systems read a//b as a/b)
    ['file:////secrets/x', 'an empty path segment'],
    ['file:///handbook//../secrets', 'an empty path segment'],
    ['file:///a//b', 'an empty path segment'],
    // dot segments in a path that is not hierarchical
    ['memo:a/../b', 'a dot segment'],
    ['memo:..', 'a dot segment'],
    // no scheme, lone surrogates, too long
    ['/handbook/a.md', 'no scheme'],
    ['handbook', 'no scheme'],
    ['', 'no scheme'],
    ['1http://x', 'no scheme'],
    ['file:///a\ud800', 'a lone surrogate'],
    ['file:///a\udc00b', 'a lone surrogate'],
    [`file:///${'a'.repeat(MAX_URI_LENGTH)}`, 'longer than'],
  ])('%j: %s', (uri, why) => {
    expect(reason(uri)).toContain(why);
  });

  it('accepts a URI of the longest length allowed, and surrogate pairs', () => {
    const uri = `file:///${'a'.repeat(MAX_URI_LENGTH - 8)}`;
    expect(canonical(uri)).toBe(uri);
    expect(canonical('file:///😀')).toBe('file:///😀');
  });
});

describe('normalizeListedUri (the form upstream-issued URIs are decided on)', () => {
  it.each([
    ['file:///handbook/../secrets', 'file:///secrets'],
    ['file:///handbook/./a.md', 'file:///handbook/a.md'],
    ['file:///a/b/c/./../../g', 'file:///a/g'],
    ['file:///a/b/..', 'file:///a/'],
    ['file:///a/b/.', 'file:///a/b/'],
    ['file:///..', 'file:///'],
    ['file:///../../etc/passwd', 'file:///etc/passwd'],
    ['https://h/a/../b?x=../y', 'https://h/b?x=../y'],
    ['mid:/a/../b', 'mid:/b'],
    ['FILE://localhost/a/../b', 'file:///b'],
    ['file:///plain', 'file:///plain'],
  ])('%j → %j', (uri, expected) => {
    expect(normalizeListedUri(uri)).toEqual({ ok: true, uri: expected });
  });

  it.each(['file:///a/%2e%2e/b', 'file://evil/a', 'memo:a/../b', 'file:///a\\b'])('%j is refused (decided on its exact text)', (uri) => {
    expect(normalizeListedUri(uri).ok).toBe(false);
  });
});

describe('normalizeUriPrefix (template literal prefixes)', () => {
  it.each([
    ['file:///handbook/', 'file:///handbook/'],
    ['FILE:///handbook/', 'file:///handbook/'],
    ['HTTPS://Docs.Example', 'https://docs.example'],
    ['file:', 'file:'],
    ['file:/', 'file:/'],
    ['FILE://', 'file://'],
    ['file://localhost/a/', 'file:///a/'],
    ['file:///handbook/../secrets/', 'file:///secrets/'],
    ['file:///handbook/..', 'file:///handbook/'],
    ['file:///handbook/.', 'file:///handbook/'],
    ['file:///handbook/%7', 'file:///handbook/'],
    ['file:///handbook/%', 'file:///handbook/'],
    ['file:///%73', 'file:///s'],
    ['memo:', 'memo:'],
    ['memo:..', 'memo:'],
    ['FIL', 'fil'],
    ['', ''],
  ])('%j → %j', (prefix, expected) => {
    expect(normalizeUriPrefix(prefix)).toEqual({ ok: true, uri: expected });
  });

  it.each(['file:///handbook/%2e%2e/', 'file:///a\u2028', '/rel/', 'file:///a//'])('%j is refused', (prefix) => {
    expect(normalizeUriPrefix(prefix).ok).toBe(false);
  });
});

describe('canonicalFormProblem (glob literals)', () => {
  it.each(['file:///handbook/x', 'memo:x', 'docs+file:///x', 'https://x.example.com/x', 'file:///café/x', 'file:///a%25'])('%j is canonical', (text) => {
    expect(canonicalFormProblem(text)).toBeUndefined();
  });

  it.each([
    ['FILE:///x', 'write the scheme in lower case'],
    ['Docs+file:///x', 'write the scheme in lower case'],
    ['https://X.Example.com/x', 'write the host in lower case'],
    ['file:///handbook/../x', 'a "." or ".." segment never matches'],
    ['file:///handbook/./x', 'a "." or ".." segment never matches'],
    ['file:///a/x/..', 'a "." or ".." segment never matches'],
    ['file:///%7Ex', 'write percent-escaped characters in the path as themselves'],
    ['file:///a%3fx', 'write percent-escaped characters in the path as themselves'],
    ['file:///a%2fx', 'an escaped'],
    ['file:///a\\x', 'a backslash'],
    ['file:///a//x', 'an empty path segment'],
  ])('%j: %s', (text, problem) => {
    expect(canonicalFormProblem(text)).toContain(problem);
  });
});

describe('the plain-URI fast path', () => {
  it('vouches only for URIs the full pass leaves unchanged (20,000 random URIs)', async () => {
    const { isPlainCanonical, normalizeUriFull } = await import('../../src/uri/normalize-uri.js');
    let seed = Number(process.env.FUZZ_SEED ?? 7);
    const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const parts = [
      'file:',
      'FILE:',
      'memo:',
      'x+y:',
      '//',
      '/',
      'a',
      'B',
      '.',
      '..',
      '%2e',
      '%41',
      '%',
      '\\\\',
      '?',
      '#',
      '@',
      'Host',
      'h',
      '\\u0001',
      '~',
      '-',
      ':',
    ];
    let vouched = 0;
    for (let i = 0; i < 20_000; i++) {
      const uri = Array.from({ length: 1 + Math.floor(rand() * 8) }, () => parts[Math.floor(rand() * parts.length)]).join('');
      if (!isPlainCanonical(uri)) continue;
      vouched++;
      expect(normalizeUriFull(uri), uri).toEqual({ ok: true, uri });
    }
    expect(vouched).toBeGreaterThan(500);
  });
});
