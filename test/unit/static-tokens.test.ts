// Static bearer tokens: hash lookup, every entry compared, roles, near misses.
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createStaticTokens, hashToken } from '../../src/serve/auth/static-tokens.js';

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const tokens = { alice: randomBytes(32).toString('base64url'), bob: randomBytes(32).toString('base64url'), carol: 'ünïcode-token-välue' };
const verify = createStaticTokens([
  { principal: 'alice', roles: ['eng', 'ops'], sha256: sha(tokens.alice) },
  { principal: 'bob', roles: [], sha256: sha(tokens.bob) },
  { principal: 'carol', roles: ['r'], sha256: sha(tokens.carol) },
]);

describe('static tokens', () => {
  it('hashToken is the lowercase hex SHA-256 of the UTF-8 bytes', () => {
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashToken(tokens.carol)).toBe(createHash('sha256').update(Buffer.from(tokens.carol, 'utf8')).digest('hex'));
  });

  it.each([
    ['alice', { principal: 'alice', roles: ['eng', 'ops'] }],
    ['bob', { principal: 'bob', roles: [] }],
    ['carol', { principal: 'carol', roles: ['r'] }],
  ] as const)('the token of %s (first, middle or last entry) yields its principal and roles', (who, identity) => {
    expect(verify(tokens[who])).toEqual(identity);
  });

  it.each([
    ['an unknown token', randomBytes(32).toString('base64url')],
    ['the empty string', ''],
    ['a prefix of a token', tokens.alice.slice(0, -1)],
    ['a token with a character more', `${tokens.alice}A`],
    ['a token in another case', tokens.bob.toUpperCase() === tokens.bob ? tokens.bob.toLowerCase() : tokens.bob.toUpperCase()],
    ['the hash itself', sha(tokens.alice)],
    ['the token with "Bearer "', `Bearer ${tokens.alice}`],
  ])('%s is refused', (_what, token) => {
    expect(verify(token)).toBeUndefined();
  });

  it('with no entries nothing is accepted', () => {
    expect(createStaticTokens([])(tokens.alice)).toBeUndefined();
  });

  it('hands out frozen roles that are not the config arrays', () => {
    const roles = ['eng'];
    const identity = createStaticTokens([{ principal: 'a', roles, sha256: sha('t'.repeat(20)) }])('t'.repeat(20));
    roles.push('admin');
    expect(identity).toEqual({ principal: 'a', roles: ['eng'] });
    expect(Object.isFrozen(identity?.roles)).toBe(true);
  });
});
