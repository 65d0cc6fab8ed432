// Client names of tools and prompts: the direct form, short forms, prefixes, and routing back to the server.
import { describe, expect, it } from 'vitest';
import { CLIENT_NAME_PATTERN, createNameCodec, namePrefixOf, prefixCollisions } from '../../src/uri/names.js';
import { prng } from '../helpers/prng.js';

describe('tool and prompt names', () => {
  const names = createNameCodec(['github', 'docs.v2', 'local'], 'local', 64);

  it('namespaces as <id>__<name> with "." in ids as "-", and keeps an unprefixed server names', () => {
    expect(names.encode('github', 'create_issue')).toBe('github__create_issue');
    expect(names.encode('docs.v2', 'search')).toBe('docs-v2__search');
    expect(names.encode('local', 'any.thing/at all')).toBe('any.thing/at all');
    expect(names.serverOf('github__create_issue')).toBe('github');
    expect(names.serverOf('docs-v2__search')).toBe('docs.v2');
    expect(names.serverOf('plain')).toBe('local');
    expect(names.serverOf('nobody__x')).toBe('local');
    expect(createNameCodec(['github'], undefined, 64).serverOf('plain')).toBeUndefined();
  });

  it('gives a name too long, or with characters clients refuse, a readable short form that fits and routes back', () => {
    const long = 'x'.repeat(100);
    const short = names.encode('github', long);
    expect(short).toMatch(/^github__x+_[0-9a-f]{8}$/);
    expect(short.length).toBe(64);
    expect(names.encode('github', 'files.read')).toMatch(/^github__files-read_[0-9a-f]{8}$/);
    expect(names.encode('github', 'files.read')).not.toBe(names.encode('github', 'files-read'));
    expect(names.serverOf(short)).toBe('github');
  });

  it('random names and ids: every prefixed name fits the pattern whenever the upstream name does, is unique per (server, name), and routes back', () => {
    const random = prng(7);
    const chars = 'abcdefghijklmnopqrstuvwxyzABC0123456789_-./ ';
    const ids = Array.from({ length: 20 }, (_, i) => `s${i}${'.a'.repeat(Math.floor(random() * 30))}`.slice(0, 63));
    expect(prefixCollisions(ids, 64)).toEqual([]);
    const codec = createNameCodec(ids, undefined, 64);
    const seen = new Map<string, string>();
    for (let i = 0; i < 3000; i++) {
      const id = ids[Math.floor(random() * ids.length)]!;
      const name = Array.from({ length: 1 + Math.floor(random() * 90) }, () => chars[Math.floor(random() * chars.length)]).join('');
      const encoded = codec.encode(id, name);
      expect(encoded).toMatch(CLIENT_NAME_PATTERN);
      expect(codec.serverOf(encoded)).toBe(id);
      const key = `${id}\u0000${name}`;
      const before = seen.get(encoded);
      if (before !== undefined) expect(before).toBe(key);
      seen.set(encoded, key);
    }
  });

  it('shortens a long server id and reports ids whose prefixes collide', () => {
    const id = `a${'b'.repeat(62)}`;
    expect(namePrefixOf(id, 64).length).toBeLessThanOrEqual(64 - 2 - 8 - 2);
    expect(prefixCollisions(['a.b', 'a-b', 'c'], 64)).toEqual([['a.b', 'a-b']]);
  });
});
