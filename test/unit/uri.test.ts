// Namespace codec: encode/decode round trips and every edge the issue names.
import { describe, expect, it } from 'vitest';
import { decodeUri, encodeUri, isServerId } from '../../src/federation/uri.js';

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
});
