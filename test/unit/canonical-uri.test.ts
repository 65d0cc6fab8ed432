// The canonical form means one file to every reader: four upstream URI parsers agree on it; the fast path and the issued-URI record stay within bounds.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import { isPlainCanonical, normalizeUri, normalizeUriFull } from '../../src/uri/normalize-uri.js';
import { IssuedUris } from '../../src/federation/issued-uris.js';
import { createUriCodec } from '../../src/federation/uri.js';
import { hostileSpellings } from '../helpers/hostile-uris.js';

const TEMPLATE = new UriTemplate('file:///{+path}');
/** The four ways upstreams read a file URI (as in test/fixtures/uri-styles.mjs); null: no file. */
const readers: Record<string, (uri: string) => string | null> = {
  whatwg: (uri) => fileURLToPath(new URL(uri)),
  strip: (uri) => path.posix.normalize(decodeURIComponent(uri.replace(/^file:(\/\/[^/]*)?/i, ''))),
  template: (uri) => {
    const match = TEMPLATE.match(uri);
    return match ? path.join('/', decodeURIComponent(String(match.path))) : null;
  },
};
const read = (reader: (uri: string) => string | null, uri: string): string | null => {
  try {
    return reader(uri);
  } catch {
    return null;
  }
};

/**
 * True when a reader took the canonical file URI `c` for its own path (or for nothing): a reader
 * that keeps the query or fragment as part of the path still reads under that path, never above it.
 */
function readsAsCanonical(c: string, got: string | null): boolean {
  if (got === null) return true;
  const end = c.search(/[?#]/);
  const filePath = decodeURIComponent(c.slice('file://'.length, end < 0 ? c.length : end).replace(/%(?![0-9A-F]{2})/g, '%25'));
  const nfc = got.normalize('NFC');
  return nfc === filePath || nfc === `${filePath}/` || nfc.startsWith(`${filePath}?`) || nfc.startsWith(`${filePath}#`);
}

function generator(seed: number) {
  const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const heads = [
    'file:///',
    'FILE:///',
    'file://localhost/',
    'file://LocalHost/',
    'file://%6cocalhost/',
    'file:/',
    'file:',
    'file://evil/',
    'file:////',
    'file://',
  ];
  const segments = [
    'public',
    'secrets',
    '%73ecrets',
    'priv\u00e9',
    'prive\u0301',
    'priv%C3%A9',
    '.',
    '..',
    '%2e',
    '%2E%2e',
    '.%2e',
    'a.txt',
    '',
    'x%2fy',
    'b%20c',
    'a\\b',
    '%252e',
    '%3F',
    '%23',
    '~',
    '%7E',
    'a b',
    'x%25y',
  ];
  const tails = ['', '', '', '?x=1', '?/../..', '?%2e%2e', '#/../secrets', '#f', '?a=%2F'];
  return () => pick(heads) + Array.from({ length: 1 + Math.floor(rand() * 4) }, () => pick(segments)).join('/') + pick(tails);
}

describe('the canonical form is read alike by every reader', () => {
  it('for every accepted spelling, each reader resolves its canonical form to the canonical path (or to nothing)', () => {
    const next = generator(Number(process.env.FUZZ_SEED ?? 3));
    let accepted = 0;
    for (let i = 0; i < 20_000; i++) {
      const uri = next();
      const canonical = normalizeUri(uri);
      if (!canonical.ok) continue;
      accepted++;
      const c = canonical.uri;
      expect(c.startsWith('file:///'), c).toBe(true);
      for (const [name, reader] of Object.entries(readers)) {
        const got = read(reader, c);
        expect(readsAsCanonical(c, got), `${name}: ${uri} -> ${c} -> ${got}`).toBe(true);
      }
    }
    expect(accepted).toBeGreaterThan(2000);
  });

  it('every hostile spelling of the e2e corpus is refused or canonicalised to a URI every reader takes for the same path', () => {
    for (const spelling of hostileSpellings()) {
      const canonical = normalizeUri(spelling);
      if (!canonical.ok) continue;
      for (const [name, reader] of Object.entries(readers)) {
        const got = read(reader, canonical.uri);
        expect(readsAsCanonical(canonical.uri, got), `${name}: ${spelling} -> ${canonical.uri} -> ${got}`).toBe(true);
      }
    }
  });

  it('is idempotent: the canonical form of a canonical form is itself', () => {
    const next = generator(11);
    for (let i = 0; i < 10_000; i++) {
      const canonical = normalizeUri(next());
      if (canonical.ok) expect(normalizeUri(canonical.uri)).toEqual(canonical);
    }
  });
});

describe('the plain-URI fast path (scheme rules)', () => {
  it('vouches only for URIs the full pass leaves unchanged (30,000 random URIs with authorities, ports and queries)', () => {
    let seed = Number(process.env.FUZZ_SEED ?? 9);
    const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const parts = [
      'file:',
      'http:',
      'https:',
      'HTTP:',
      'memo:',
      '//',
      '/',
      'localhost',
      'h.example',
      ':80',
      ':443',
      ':8080',
      ':',
      ':0',
      ':99999',
      'a',
      '.',
      '..',
      '?',
      '#',
      '&',
      '=',
      ';',
      '@',
      'B',
      '%2e',
      ' ',
      '~',
    ];
    let vouched = 0;
    for (let i = 0; i < 30_000; i++) {
      const uri = Array.from({ length: 1 + Math.floor(rand() * 9) }, () => parts[Math.floor(rand() * parts.length)]).join('');
      if (!isPlainCanonical(uri)) continue;
      vouched++;
      expect(normalizeUriFull(uri), uri).toEqual({ ok: true, uri });
    }
    expect(vouched).toBeGreaterThan(1000);
  });
});

describe('IssuedUris', () => {
  it('records only what keep picks, per server, forwards decode, and forgets a server', () => {
    const issued = new IssuedUris({ keep: (uri) => !isPlainCanonical(uri) });
    const codec = issued.recording(createUriCodec(['a', 'b']));
    expect(codec.encode('a', 'file:///x/../y')).toBe('a+file:///x/../y');
    expect(codec.encode('a', 'file:///plain')).toBe('a+file:///plain');
    expect(issued.has('a', 'file:///x/../y')).toBe(true);
    expect(issued.has('b', 'file:///x/../y')).toBe(false); // one server never speaks for another
    expect(issued.has('a', 'file:///plain')).toBe(false); // canonical: needs no record
    expect(codec.decode('a+file:///q')).toEqual({ server: 'a', uri: 'file:///q' });
    issued.forget('a');
    expect(issued.has('a', 'file:///x/../y')).toBe(false);
    issued.close();
    issued.close();
  });

  it('is bounded per server in entries and characters, least recently issued first out', () => {
    const issued = new IssuedUris({ maxPerServer: 100, maxCharsPerServer: 5_000 });
    for (let i = 0; i < 10_000; i++) issued.record('a', `FILE:///${i}`);
    expect(issued.sizeOf('a')).toBe(100);
    expect(issued.has('a', 'FILE:///9999')).toBe(true);
    expect(issued.has('a', 'FILE:///0')).toBe(false);
    for (let i = 0; i < 50; i++) issued.record('b', `FILE:///${'x'.repeat(1000)}${i}`);
    expect(issued.sizeOf('b')).toBeLessThanOrEqual(5);
    expect(issued.sizeOf('a')).toBe(100); // another server's flood does not evict a's
  });
});
