// Namespace codec: encode/decode round trips and every edge the issue names.
import { describe, expect, it } from 'vitest';
import { createUriCodec, decodeUri, encodeUri, isServerId } from '../../src/federation/uri.js';

const ids = new Set(['docs', 'git', 'mem', 'a.b-c']);

describe('uri codec', () => {
  it.each([
    ['docs', 'file:///a.md', 'docs+file:///a.md'],
    ['git', 'git+ssh://host/repo', 'git+git+ssh://host/repo'],
    ['mem', 'memo:x', 'mem+memo:x'],
    ['docs', 'file:///a%2Bb.md', 'docs+file:///a%2Bb.md'],
    ['docs', 'other+file:///secret', 'docs+other+file:///secret'],
    ['docs', 'file:///{path}', 'docs+file:///{path}'],
    ['a.b-c', 'x://y', 'a.b-c+x://y'],
  ])('encodes %s + %s and decodes it back', (server, uri, federated) => {
    expect(encodeUri(server, uri)).toBe(federated);
    expect(decodeUri(federated, ids)).toEqual({ server, uri });
  });

  it('splits at the first "+" only', () => {
    expect(decodeUri('git+ssh://h/r', ids)).toEqual({ server: 'git', uri: 'ssh://h/r' });
    expect(decodeUri('docs+a+b+c', ids)).toEqual({ server: 'docs', uri: 'a+b+c' });
  });

  it.each([
    ['file:///a.md', 'no namespace'],
    ['+file:///a.md', 'empty server id'],
    ['docs+', 'empty upstream uri'],
    ['nope+file:///a.md', 'unknown server id'],
    ['docs%2Bfile:///a.md', 'percent-encoded delimiter is not a delimiter'],
    ['DOCS+file:///a.md', 'ids are case-sensitive'],
    ['', 'empty'],
  ])('refuses %j (%s)', (federated) => {
    expect(decodeUri(federated, ids)).toBeUndefined();
  });

  it.each([
    ['docs', true],
    ['a', true],
    ['0x.y-z', true],
    ['a'.repeat(63), true],
    ['a'.repeat(64), false],
    ['Docs', false],
    ['a_b', false],
    ['a+b', false],
    ['-a', false],
    ['', false],
  ])('server id %j valid: %s', (id, ok) => {
    expect(isServerId(id)).toBe(ok);
  });

  describe('with an unprefixed server (prefix: false)', () => {
    const uris = createUriCodec(['docs', 'git', 'everything'], 'everything');

    it("encodes the unprefixed server's URIs unchanged and every other server's namespaced", () => {
      expect(uris.encode('everything', 'test://static-text')).toBe('test://static-text');
      expect(uris.encode('everything', 'test://template/{id}/data')).toBe('test://template/{id}/data');
      expect(uris.encode('docs', 'file:///a.md')).toBe('docs+file:///a.md');
    });

    it.each([
      ['docs+file:///a.md', 'docs', 'file:///a.md'],
      ['git+ssh://h/r', 'git', 'ssh://h/r'],
      ['test://static-text', 'everything', 'test://static-text'],
      ['nope+file:///a.md', 'everything', 'nope+file:///a.md'],
      ['DOCS+file:///a.md', 'everything', 'DOCS+file:///a.md'],
      ['docs+', 'everything', 'docs+'],
      ['+x', 'everything', '+x'],
      // It has no namespace, so its own id is not one: its URI `everything+x` round-trips.
      ['everything+x://y', 'everything', 'everything+x://y'],
    ])('decodes %j to %s as %j', (federated, server, uri) => {
      expect(uris.decode(federated)).toEqual({ server, uri });
    });

    it('routes a URI of the unprefixed server that starts with another id and "+" to that other server (documented ambiguity)', () => {
      // `everything` may list `docs+file:///a.md` as its own; a client reading it reaches `docs`,
      // never `everything`: a prefixed server always wins, so no upstream can speak for another.
      const listed = uris.encode('everything', 'docs+file:///a.md');
      expect(listed).toBe('docs+file:///a.md');
      expect(uris.decode(listed)).toEqual({ server: 'docs', uri: 'file:///a.md' });
    });

    it('round-trips every URI of every server except that one case', () => {
      for (const [server, uri] of [
        ['everything', 'test://a'],
        ['everything', 'svn+ssh://h/r'],
        ['docs', 'everything+x'],
        ['git', 'docs+file:///x'],
      ] as const) {
        expect(uris.decode(uris.encode(server, uri))).toEqual({ server, uri });
      }
    });

    it('refuses only the empty URI', () => {
      expect(uris.decode('')).toBeUndefined();
    });

    it('without an unprefixed server it is the plain codec', () => {
      const plain = createUriCodec(ids);
      expect(plain.unprefixed).toBeUndefined();
      for (const federated of ['file:///a.md', 'nope+x', 'docs+', 'docs+file:///a.md']) {
        expect(plain.decode(federated)).toEqual(decodeUri(federated, ids));
      }
      expect(plain.encode('docs', 'file:///a.md')).toBe(encodeUri('docs', 'file:///a.md'));
    });

    it('refuses an unprefixed id that is not one of the ids', () => {
      expect(() => createUriCodec(['docs'], 'other')).toThrow(/not one of the ids/);
    });
  });
});
