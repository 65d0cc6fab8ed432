// isPlainCanonical's one-pass scan decides exactly as the regex version it replaced (kept here as the reference), on random and hostile URIs.
import { describe, expect, it } from 'vitest';
import { isPlainCanonical, MAX_URI_LENGTH, normalizeUriFull } from '../../src/uri/normalize-uri.js';
import { hostileSpellings } from '../helpers/hostile-uris.js';

/** The regex version isPlainCanonical had before the one-pass scan, verbatim. */
const PLAIN = /^[a-z][a-z0-9+.-]*:[\x21-\x24\x26-\x5b\x5d-\x7e]*$/;
const QUERY_OR_FRAGMENT = /[?#]/;
const PLAIN_HOST = /^[a-z0-9.-]+(?::[1-9][0-9]{0,3})?$/;
const DOT_COMPONENT = /(?:^|[/\\?#&=;])\.{1,2}(?=$|[/\\?#&=;])/;
const DEFAULT_PORT: Readonly<Record<string, string>> = { http: '80', https: '443' };
function reference(uri: string): boolean {
  if (uri.length > MAX_URI_LENGTH || !PLAIN.test(uri)) return false;
  const colon = uri.indexOf(':');
  const scheme = uri.slice(0, colon);
  const rest = uri.slice(colon + 1);
  if (DOT_COMPONENT.test(rest)) return false;
  const end = rest.search(QUERY_OR_FRAGMENT);
  const hierarchy = end < 0 ? rest : rest.slice(0, end);
  let path = hierarchy;
  if (hierarchy.startsWith('//')) {
    const slash = hierarchy.indexOf('/', 2);
    const authority = slash < 0 ? hierarchy.slice(2) : hierarchy.slice(2, slash);
    path = slash < 0 ? '' : hierarchy.slice(slash);
    if (scheme === 'file' && authority !== '') return false;
    if (scheme === 'http' || scheme === 'https') {
      if (!PLAIN_HOST.test(authority) || path === '' || authority.endsWith(`:${DEFAULT_PORT[scheme]}`)) return false;
    } else {
      const host = authority.slice(authority.lastIndexOf('@') + 1);
      if (host !== host.toLowerCase()) return false;
    }
  } else if (scheme === 'file' || scheme === 'http' || scheme === 'https') {
    return false;
  }
  if (scheme === 'file' && path === '') return false;
  return !path.includes('//');
}

const PARTS = [
  'file:',
  'http:',
  'https:',
  'HTTP:',
  'httpx:',
  'fil:',
  'memo:',
  'a+b.c-d:',
  '9x:',
  ':',
  '//',
  '/',
  '///',
  'localhost',
  'LocalHost',
  'h.example',
  'user@',
  'User@H',
  '@',
  ':80',
  ':443',
  ':8080',
  ':0',
  ':99999',
  'a',
  'Z',
  '.',
  '..',
  '...',
  './',
  '../',
  '/.',
  '/..',
  '?',
  '#',
  '&',
  '=',
  ';',
  '%2e',
  '%',
  '\\',
  ' ',
  '~',
  '"',
  '\u007f',
  '\u0000',
  'é',
  '\u2028',
  '[',
  ']',
  '{',
  '}',
  '|',
  '^',
  '`',
];

describe('isPlainCanonical (one-pass scan)', () => {
  it('decides as the regex reference on 60,000 random URIs made of scheme, authority, dot and separator pieces', () => {
    let seed = Number(process.env.FUZZ_SEED ?? 18);
    const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    let vouched = 0;
    for (let i = 0; i < 60_000; i++) {
      const uri = Array.from({ length: 1 + Math.floor(rand() * 10) }, () => PARTS[Math.floor(rand() * PARTS.length)]).join('');
      const got = isPlainCanonical(uri);
      expect(got, JSON.stringify(uri)).toBe(reference(uri));
      if (got) {
        vouched++;
        expect(normalizeUriFull(uri), uri).toEqual({ ok: true, uri });
      }
    }
    expect(vouched).toBeGreaterThan(2000);
  });

  it('decides as the reference on every hostile spelling, on edge lengths, and on every single character after a scheme', () => {
    const cases = [...hostileSpellings(), '', 'a', 'a:', ':a', 'A:b', 'file:', 'file://', 'file:///', 'http://h', 'http://h/', 'https://h:443/', 'x://H/'];
    cases.push(`memo:${'a'.repeat(MAX_URI_LENGTH - 5)}`, `memo:${'a'.repeat(MAX_URI_LENGTH - 4)}`);
    for (let code = 0; code < 0x180; code++) cases.push(`memo:/a${String.fromCharCode(code)}b`, `memo://h${String.fromCharCode(code)}/p`);
    for (const uri of cases) expect(isPlainCanonical(uri), JSON.stringify(uri)).toBe(reference(uri));
  });
});
