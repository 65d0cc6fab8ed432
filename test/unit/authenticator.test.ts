// The bearer check: header parsing, static tokens and JWTs together, WWW-Authenticate, and logs without tokens.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SignJWT, generateKeyPair } from 'jose';
import { AuthSchema } from '../../src/config/schema.js';
import { createLogger } from '../../src/logger.js';
import { MAX_AUTHORIZATION_LENGTH, createAuthenticator, wwwAuthenticate } from '../../src/serve/auth/authenticator.js';
import { hashToken } from '../../src/serve/auth/static-tokens.js';
import { AuthFailureLog } from '../../src/serve/auth/failure-log.js';

const NOW = new Date('2030-01-01T00:00:00Z');
const T = NOW.getTime() / 1000;
const SECRET = 'a-shared-secret-of-at-least-32-bytes!';
const aliceToken = randomBytes(32).toString('base64url');
const bobToken = randomBytes(32).toString('base64url');

const config = AuthSchema.parse({
  tokens: [
    { principal: 'alice', roles: ['eng'], sha256: hashToken(aliceToken) },
    { principal: 'bob', sha256: hashToken(bobToken) },
  ],
  jwt: { secret: SECRET, audience: 'mcp' },
});

const jwt = (claims: Record<string, unknown> = {}) =>
  new SignJWT({ sub: 'carol', roles: 'ops', aud: 'mcp', exp: T + 60, ...claims }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(SECRET));

/** An authenticator whose debug log is captured as parsed records and as raw text. */
function withLog(auth = config) {
  const lines: string[] = [];
  const logger = createLogger({ level: 'debug', destination: { write: (s: string) => void lines.push(s) } });
  const clock = { ms: 0 };
  const failures = new AuthFailureLog({ logger, now: () => clock.ms });
  const authenticator = createAuthenticator(auth, { logger, failures, now: () => NOW });
  return { authenticator, lines, clock, failures, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('authenticate', () => {
  const { authenticator } = withLog();

  it('a static token authenticates as its principal with its roles', async () => {
    expect(await authenticator.authenticate(`Bearer ${aliceToken}`)).toMatchObject({ ok: true, principal: 'alice', roles: ['eng'] });
    expect(await authenticator.authenticate(`Bearer ${bobToken}`)).toMatchObject({ ok: true, principal: 'bob', roles: [] });
  });

  it('a JWT authenticates next to the static tokens', async () => {
    expect(await authenticator.authenticate(`Bearer ${await jwt()}`)).toMatchObject({ ok: true, principal: 'carol', roles: ['ops'] });
  });

  it('the scheme is case-insensitive and one value in a list is fine', async () => {
    for (const h of [`bearer ${aliceToken}`, `BEARER ${aliceToken}`, `Bearer   ${aliceToken}`, [`Bearer ${aliceToken}`]]) {
      expect(await authenticator.authenticate(h)).toMatchObject({ ok: true, principal: 'alice' });
    }
  });

  it.each([
    ['absent', undefined],
    ['an empty list', []],
  ])('%s is missing', async (_what, header) => {
    expect(await authenticator.authenticate(header)).toEqual({ ok: false, reason: 'missing' });
  });

  it.each([
    ['empty', ''],
    ['"Bearer" alone', 'Bearer'],
    ['"Bearer " with no token', 'Bearer '],
    ['another scheme', `Basic ${Buffer.from('alice:pw').toString('base64')}`],
    ['the token without a scheme', aliceToken],
    ['"Bearer" glued to the token', `Bearer${aliceToken}`],
    ['a tab instead of a space', `Bearer\t${aliceToken}`],
    ['two tokens', `Bearer ${aliceToken} ${bobToken}`],
    ['two comma-joined credentials', `Bearer ${aliceToken}, Bearer ${bobToken}`],
    ['a token with a character outside b64token', `Bearer ${aliceToken}!`],
    ['duplicate headers, both valid', [`Bearer ${aliceToken}`, `Bearer ${aliceToken}`]],
    ['duplicate headers, one valid', [`Bearer ${aliceToken}`, 'Bearer nope']],
    ['an unknown token', `Bearer ${randomBytes(32).toString('base64url')}`],
    ['an oversized header', `Bearer ${aliceToken}${'A'.repeat(MAX_AUTHORIZATION_LENGTH)}`],
  ])('%s is invalid', async (_what, header) => {
    expect(await authenticator.authenticate(header)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('a header of exactly the length bound is still parsed', async () => {
    const padded = `Bearer ${'A'.repeat(MAX_AUTHORIZATION_LENGTH - 7)}`;
    expect(padded.length).toBe(MAX_AUTHORIZATION_LENGTH);
    const long = 'A'.repeat(MAX_AUTHORIZATION_LENGTH - 7);
    const auth = createAuthenticator(AuthSchema.parse({ tokens: [{ principal: 'long', token: long }] }));
    expect(await auth.authenticate(padded)).toMatchObject({ ok: true, principal: 'long' });
  });

  it.each([
    ['expired', { exp: T - 1 }],
    ['for another audience', { aud: 'other' }],
  ])('a JWT %s is invalid', async (_what, claims) => {
    expect(await authenticator.authenticate(`Bearer ${await jwt(claims)}`)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('with only static tokens, a JWT is invalid; with only a JWT, a static token is invalid', async () => {
    const tokensOnly = createAuthenticator(AuthSchema.parse({ tokens: [{ principal: 'alice', sha256: hashToken(aliceToken) }] }), { now: () => NOW });
    const jwtOnly = createAuthenticator(AuthSchema.parse({ jwt: { secret: SECRET, audience: 'mcp' } }), { now: () => NOW });
    expect(await tokensOnly.authenticate(`Bearer ${await jwt()}`)).toEqual({ ok: false, reason: 'invalid' });
    expect(await tokensOnly.authenticate(`Bearer ${aliceToken}`)).toMatchObject({ ok: true });
    expect(await jwtOnly.authenticate(`Bearer ${aliceToken}`)).toEqual({ ok: false, reason: 'invalid' });
    expect(await jwtOnly.authenticate(`Bearer ${await jwt()}`)).toMatchObject({ ok: true });
  });
});

describe('credentials and bindings', () => {
  const { authenticator } = withLog();
  const ok = async (token: string) => {
    const r = await authenticator.authenticate(`Bearer ${token}`);
    if (!r.ok) throw new Error('refused');
    return r;
  };

  it('a static token binds to its entry, a JWT to issuer and subject: a JWT whose sub is a static principal’s name binds elsewhere', async () => {
    const alice = await ok(aliceToken);
    expect(alice.credential).toMatchObject({ kind: 'static', binding: `static:${hashToken(aliceToken)}`, identity: { principal: 'alice', roles: ['eng'] } });
    expect(alice.credential.expiresAt).toBeUndefined();
    const jwtAlice = await ok(await jwt({ sub: 'alice', roles: ['eng'], iss: 'https://idp' }));
    expect(jwtAlice).toMatchObject({ principal: 'alice', roles: ['eng'] });
    expect(jwtAlice.credential).toMatchObject({ kind: 'jwt', binding: `jwt:${JSON.stringify(['https://idp', 'alice'])}`, expiresAt: (T + 60) * 1000 });
    expect(jwtAlice.credential.binding).not.toBe(alice.credential.binding);
    // Same issuer and subject, other roles: the same binding.
    expect((await ok(await jwt({ sub: 'alice', roles: [], iss: 'https://idp' }))).credential.binding).toBe(jwtAlice.credential.binding);
    expect((await ok(await jwt({ sub: 'alice', iss: 'https://other' }))).credential.binding).not.toBe(jwtAlice.credential.binding);
  });

  it('never shows the token: not in JSON, not in its enumerable fields', async () => {
    const alice = await ok(aliceToken);
    expect(JSON.stringify(alice)).not.toContain(aliceToken);
    expect(Object.values(alice.credential).join(' ')).not.toContain(aliceToken);
    expect(alice.credential.reveal()).toBe(aliceToken);
  });

  it('recheck: a static token by the new table, synchronously (roles as now configured, or refused once removed); a JWT verified again', async () => {
    const alice = (await ok(aliceToken)).credential;
    const demoted = createAuthenticator(AuthSchema.parse({ tokens: [{ principal: 'alice', roles: [], sha256: hashToken(aliceToken) }] }), { now: () => NOW });
    const now = demoted.recheck(alice);
    expect(now).not.toBeInstanceOf(Promise);
    expect(now).toMatchObject({ ok: true, principal: 'alice', roles: [], credential: { binding: alice.binding } });
    const removed = createAuthenticator(AuthSchema.parse({ tokens: [{ principal: 'bob', sha256: hashToken(bobToken) }] }), { now: () => NOW });
    expect(removed.recheck(alice)).toEqual({ ok: false, reason: 'invalid' });
    const carol = (await ok(await jwt())).credential;
    expect(await authenticator.recheck(carol)).toMatchObject({ ok: true, principal: 'carol', credential: { binding: carol.binding } });
    expect(await removed.recheck(carol)).toEqual({ ok: false, reason: 'invalid' }); // no jwt block any more
    const rotated = createAuthenticator(AuthSchema.parse({ jwt: { secret: 'another-secret-of-at-least-32-bytes!!', audience: 'mcp' } }), { now: () => NOW });
    expect(await rotated.recheck(carol)).toEqual({ ok: false, reason: 'invalid' });
    const later = createAuthenticator(config, { now: () => new Date((T + 60) * 1000) });
    expect(await later.recheck(carol)).toEqual({ ok: false, reason: 'invalid' }); // expired
  });
});

describe('logging', () => {
  it('says why a token was refused, at warn, once per reason per interval, without the token or the header', async () => {
    const { authenticator, lines, records } = withLog();
    const expired = await jwt({ exp: T - 1 });
    const unknown = randomBytes(32).toString('base64url');
    await authenticator.authenticate(`Bearer ${expired}`);
    await authenticator.authenticate(`Basic ${unknown}`);
    await authenticator.authenticate([`Bearer ${aliceToken}`, `Bearer ${unknown}`]);
    // The second ERR_AUTHORIZATION_HEADER falls in the same interval: counted, not logged.
    expect(records().map((r) => [r.level, r.msg, r.auth])).toEqual([
      [40, 'bearer token refused', { code: 'ERR_JWT_EXPIRED', claim: 'exp', suppressed: 0 }],
      [40, 'bearer token refused', { code: 'ERR_AUTHORIZATION_HEADER', suppressed: 0 }],
    ]);
    const text = lines.join('');
    for (const secret of [expired, expired.split('.')[2]!, unknown, aliceToken, SECRET]) expect(text).not.toContain(secret);
  });

  it('a static-only authenticator logs an unknown token as such; a success logs nothing', async () => {
    const { authenticator, lines, records } = withLog(AuthSchema.parse({ tokens: [{ principal: 'alice', sha256: hashToken(aliceToken) }] }));
    const unknown = randomBytes(32).toString('base64url');
    await authenticator.authenticate(`Bearer ${aliceToken}`);
    await authenticator.authenticate(`Bearer ${unknown}`);
    expect(records().map((r) => r.auth)).toEqual([{ code: 'ERR_UNKNOWN_TOKEN', suppressed: 0 }]);
    expect(lines.join('')).not.toContain(unknown);
  });

  it('a flood of bad tokens is one line per reason per 10 s, with the suppressed count, and every failure is counted', async () => {
    const { authenticator, lines, clock, failures, records } = withLog();
    const tokens = Array.from({ length: 50 }, () => randomBytes(32).toString('base64url'));
    for (const t of tokens) await authenticator.authenticate(`Bearer ${t}`);
    await authenticator.authenticate(`Bearer ${await jwt({ exp: T - 1 })}`);
    expect(records().map((r) => (r.auth as { code: string }).code)).toEqual(['ERR_JWS_INVALID', 'ERR_JWT_EXPIRED']);
    clock.ms = 9_999;
    await authenticator.authenticate(`Bearer ${tokens[0]}`);
    expect(records()).toHaveLength(2);
    clock.ms = 10_000;
    await authenticator.authenticate(`Bearer ${tokens[1]}`);
    expect(records().map((r) => [r.level, r.auth])).toEqual([
      [40, { code: 'ERR_JWS_INVALID', suppressed: 0 }],
      [40, { code: 'ERR_JWT_EXPIRED', claim: 'exp', suppressed: 0 }],
      [40, { code: 'ERR_JWS_INVALID', suppressed: 50 }],
    ]);
    expect(failures.counts).toEqual({ total: 53, byReason: { ERR_JWS_INVALID: 52, ERR_JWT_EXPIRED: 1 } });
    // A request without credentials is not a failed authentication (clients probe before OAuth).
    await authenticator.authenticate(undefined);
    expect(failures.counts.total).toBe(53);
    for (const t of tokens) expect(lines.join('')).not.toContain(t);
  });

  it('a JWKS that cannot be fetched is a warning for the operator and invalid for the caller', async () => {
    const { authenticator, records } = withLog(AuthSchema.parse({ jwt: { jwksUrl: 'http://127.0.0.1:1/jwks', audience: 'mcp' } }));
    const { privateKey } = await generateKeyPair('ES256');
    const token = await new SignJWT({ sub: 'x', aud: 'mcp', exp: T + 60 }).setProtectedHeader({ alg: 'ES256', kid: 'k' }).sign(privateKey);
    expect(await authenticator.authenticate(`Bearer ${token}`)).toEqual({ ok: false, reason: 'invalid' });
    expect(records().map((r) => [r.level, r.msg, r.auth])).toEqual([
      [40, 'JWT key set unavailable: bearer tokens cannot be verified', { code: 'ERR_JWKS_UNAVAILABLE', suppressed: 0 }],
    ]);
  });
});

describe('wwwAuthenticate', () => {
  const url = 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp';

  it('points a request without credentials at the metadata, with no error code', () => {
    expect(wwwAuthenticate(url, 'missing')).toBe(`Bearer resource_metadata="${url}"`);
  });

  it('adds error="invalid_token" when a token was refused', () => {
    expect(wwwAuthenticate(url, 'invalid')).toBe(`Bearer resource_metadata="${url}", error="invalid_token"`);
  });

  it('names no metadata when there is no authorization server (static tokens only)', () => {
    expect(wwwAuthenticate(undefined, 'missing')).toBe('Bearer');
    expect(wwwAuthenticate(undefined, 'invalid')).toBe('Bearer error="invalid_token"');
  });

  it('escapes quotes and backslashes inside the quoted string', () => {
    expect(wwwAuthenticate('x"y\\z', 'missing')).toBe('Bearer resource_metadata="x\\"y\\\\z"');
  });
});
