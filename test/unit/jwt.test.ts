// JWT verification with real keys and a real JWKS server: algorithms, claims, alg confusion, rotation, clock.
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompactSign, SignJWT, exportJWK, exportSPKI, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { JwtSchema } from '../../src/config/schema.js';
import { createJwtVerifier, type JwtVerdict } from '../../src/serve/auth/jwt.js';

const NOW = new Date('2030-01-01T00:00:00Z');
const T = Math.floor(NOW.getTime() / 1000);
const now = () => NOW;
const ISSUER = 'https://idp.example.com';
const SECRET = 'a-shared-secret-of-at-least-32-bytes!';

interface Pair {
  alg: string;
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  jwk: JWK;
  pem: string;
}

async function pair(alg: string, kid: string): Promise<Pair> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { alg, kid, privateKey, publicKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }, pem: await exportSPKI(publicKey) };
}

/** A token with sensible claims (alice, eng, audience mcp, issuer, valid for 10 minutes around NOW), overridable. */
async function sign(key: CryptoKey | KeyObject | Uint8Array, header: { alg: string; kid?: string }, claims: Record<string, unknown> = {}): Promise<string> {
  const body: Record<string, unknown> = { sub: 'alice', roles: ['eng'], aud: 'mcp', iss: ISSUER, iat: T, exp: T + 600, ...claims };
  for (const [k, v] of Object.entries(body)) if (v === undefined) delete body[k];
  return new SignJWT(body).setProtectedHeader(header).sign(key);
}
const signWith = (p: Pair, claims: Record<string, unknown> = {}) => sign(p.privateKey, { alg: p.alg, kid: p.kid }, claims);
const hs256 = (claims: Record<string, unknown> = {}, secret = SECRET) => sign(new TextEncoder().encode(secret), { alg: 'HS256' }, claims);

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const refused = (code: string, claim?: string): JwtVerdict => (claim === undefined ? { ok: false, code } : { ok: false, code, claim });
const alice = expect.objectContaining({ ok: true, principal: 'alice', roles: ['eng'] });

let rsa: Pair, ec: Pair, ed: Pair, rotated: Pair, stranger: Pair;
let server: Server;
let baseUrl: string;
let keys: JWK[] = [];
let fetches = 0;

beforeAll(async () => {
  [rsa, ec, ed, rotated, stranger] = await Promise.all([
    pair('RS256', 'rsa-1'),
    pair('ES256', 'ec-1'),
    pair('EdDSA', 'ed-1'),
    pair('RS256', 'rsa-2'),
    pair('ES256', 'ec-x'),
  ]);
  keys = [rsa.jwk, ec.jwk, ed.jwk];
  server = createServer((req, res) => {
    if (req.url === '/jwks') {
      fetches++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys }));
    } else res.writeHead(500).end('down');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const jwksVerifier = (extra: Record<string, unknown> = {}, jwks = { cooldownMs: 0 }) =>
  createJwtVerifier(JwtSchema.parse({ jwksUrl: `${baseUrl}/jwks`, audience: 'mcp', issuer: ISSUER, ...extra }), { now, jwks });
const secretVerifier = (extra: Record<string, unknown> = {}) =>
  createJwtVerifier(JwtSchema.parse({ secret: SECRET, audience: 'mcp', issuer: ISSUER, ...extra }), { now });
const pemVerifier = (p: Pair, extra: Record<string, unknown> = {}) =>
  createJwtVerifier(JwtSchema.parse({ publicKey: p.pem, audience: 'mcp', issuer: ISSUER, ...extra }), { now });

describe('key sources', () => {
  it.each(['rsa', 'ec', 'ed'] as const)('a %s token verifies against the JWKS', async (which) => {
    const p = { rsa, ec, ed }[which];
    expect(await jwksVerifier()(await signWith(p))).toEqual(alice);
  });

  it.each(['rsa', 'ec', 'ed'] as const)('a %s token verifies against its PEM public key, not against another', async (which) => {
    const p = { rsa, ec, ed }[which];
    expect(await pemVerifier(p)(await signWith(p))).toEqual(alice);
    expect(await pemVerifier(stranger)(await signWith(p))).toMatchObject({ ok: false });
  });

  it('an HS256 token verifies with the shared secret, not with another secret', async () => {
    expect(await secretVerifier()(await hs256())).toEqual(alice);
    expect(await secretVerifier()(await hs256({}, 'another-secret-of-at-least-32-bytes!'))).toEqual(refused('ERR_JWS_SIGNATURE_VERIFICATION_FAILED'));
  });

  it('the key set is fetched once and cached across tokens', async () => {
    const verify = jwksVerifier({}, { cooldownMs: 30_000 });
    const before = fetches;
    for (const p of [rsa, ec, ed, rsa]) expect(await verify(await signWith(p))).toEqual(alice);
    expect(fetches - before).toBe(1);
  });

  it('a key set that cannot be fetched refuses the token as ERR_JWKS_UNAVAILABLE', async () => {
    const verify = createJwtVerifier(JwtSchema.parse({ jwksUrl: `${baseUrl}/broken`, audience: 'mcp' }), { now });
    expect(await verify(await signWith(rsa))).toEqual(refused('ERR_JWKS_UNAVAILABLE'));
  });

  it('a token whose kid is in no key set is refused', async () => {
    expect(await jwksVerifier()(await signWith(stranger))).toEqual(refused('ERR_JWKS_NO_MATCHING_KEY'));
  });
});

describe('key rotation', () => {
  it('after the JWKS switches keys, a token of the new key verifies (refetch on unknown kid) and the old key is gone', async () => {
    const saved = keys;
    try {
      keys = [rsa.jwk];
      const verify = jwksVerifier();
      expect(await verify(await signWith(rsa))).toEqual(alice);
      const before = fetches;
      keys = [rotated.jwk];
      expect(await verify(await signWith(rotated))).toEqual(alice);
      expect(fetches - before).toBe(1);
      // A token not verified before (the first one is remembered until its exp: see "verification cache").
      expect(await verify(await signWith(rsa, { jti: 'new' }))).toEqual(refused('ERR_JWKS_NO_MATCHING_KEY'));
    } finally {
      keys = saved;
    }
  });
});

describe('time, through the injected clock', () => {
  it('an expired token is refused; the same token verifies while it was valid', async () => {
    const token = await signWith(rsa, { iat: T - 3600, exp: T - 1 });
    expect(await jwksVerifier()(token)).toEqual(refused('ERR_JWT_EXPIRED', 'exp'));
    const earlier = createJwtVerifier(JwtSchema.parse({ publicKey: rsa.pem, audience: 'mcp' }), { now: () => new Date((T - 60) * 1000) });
    expect(await earlier(token)).toEqual(alice);
  });

  it('a token not yet valid (nbf in the future) is refused; it verifies once nbf has passed', async () => {
    const token = await signWith(rsa, { nbf: T + 60 });
    expect(await pemVerifier(rsa)(token)).toEqual(refused('ERR_JWT_CLAIM_VALIDATION_FAILED', 'nbf'));
    const later = createJwtVerifier(JwtSchema.parse({ publicKey: rsa.pem, audience: 'mcp' }), { now: () => new Date((T + 61) * 1000) });
    expect(await later(token)).toEqual(alice);
  });

  it('a token without exp is refused', async () => {
    expect(await pemVerifier(rsa)(await signWith(rsa, { exp: undefined }))).toEqual(refused('ERR_JWT_CLAIM_VALIDATION_FAILED', 'exp'));
  });
});

describe('issuer and audience', () => {
  it.each([
    ['a wrong issuer', { iss: 'https://evil.example.com' }, 'iss'],
    ['no issuer', { iss: undefined }, 'iss'],
    ['a wrong audience', { aud: 'other' }, 'aud'],
    ['no audience', { aud: undefined }, 'aud'],
  ])('%s is refused', async (_what, claims, claim) => {
    expect(await jwksVerifier()(await signWith(rsa, claims))).toEqual(refused('ERR_JWT_CLAIM_VALIDATION_FAILED', claim));
  });

  it('any issuer is accepted when none is configured', async () => {
    const verify = createJwtVerifier(JwtSchema.parse({ publicKey: rsa.pem, audience: 'mcp' }), { now });
    expect(await verify(await signWith(rsa, { iss: 'https://anyone.example.com' }))).toEqual(alice);
  });

  it('a configured list of audiences accepts a token for any one of them, and an aud array naming one', async () => {
    const verify = pemVerifier(rsa, { audience: ['mcp-a', 'mcp-b'] });
    expect(await verify(await signWith(rsa, { aud: 'mcp-b' }))).toEqual(alice);
    expect(await verify(await signWith(rsa, { aud: ['x', 'mcp-a'] }))).toEqual(alice);
    expect(await verify(await signWith(rsa, { aud: 'mcp' }))).toEqual(refused('ERR_JWT_CLAIM_VALIDATION_FAILED', 'aud'));
  });
});

describe('forged and unsigned tokens', () => {
  const claims = { sub: 'alice', roles: ['eng'], aud: 'mcp', iss: ISSUER, iat: T, exp: T + 600 };

  it.each(['jwks', 'pem', 'secret'] as const)('alg "none" (header.payload. with no signature) is refused by the %s verifier', async (kind) => {
    const verify = kind === 'jwks' ? jwksVerifier() : kind === 'pem' ? pemVerifier(rsa) : secretVerifier();
    for (const alg of ['none', 'None', 'NONE']) {
      expect(await verify(`${b64url({ alg, typ: 'JWT' })}.${b64url(claims)}.`)).toEqual(refused('ERR_JOSE_ALG_NOT_ALLOWED'));
    }
  });

  it('an RS256 header with an empty signature is refused', async () => {
    const unsigned = `${b64url({ alg: 'RS256', kid: rsa.kid })}.${b64url(claims)}.`;
    expect(await jwksVerifier()(unsigned)).toEqual(refused('ERR_JWS_SIGNATURE_VERIFICATION_FAILED'));
  });

  it('a tampered signature is refused', async () => {
    const [h, p, s] = (await signWith(rsa)).split('.') as [string, string, string];
    const flipped = (s.startsWith('A') ? 'B' : 'A') + s.slice(1);
    expect(await jwksVerifier()(`${h}.${p}.${flipped}`)).toEqual(refused('ERR_JWS_SIGNATURE_VERIFICATION_FAILED'));
  });

  it('a tampered payload (another principal under the original signature) is refused', async () => {
    const [h, , s] = (await signWith(ec)).split('.') as [string, string, string];
    expect(await jwksVerifier()(`${h}.${b64url({ ...claims, sub: 'root' })}.${s}`)).toEqual(refused('ERR_JWS_SIGNATURE_VERIFICATION_FAILED'));
  });

  it('alg confusion: an HS256 token keyed with the public key text is refused by the JWKS and the PEM verifiers', async () => {
    const forged = await sign(new TextEncoder().encode(rsa.pem), { alg: 'HS256', kid: rsa.kid });
    expect(await jwksVerifier()(forged)).toEqual(refused('ERR_JOSE_ALG_NOT_ALLOWED'));
    expect(await pemVerifier(rsa)(forged)).toEqual(refused('ERR_JOSE_ALG_NOT_ALLOWED'));
  });

  it('an asymmetric token is refused by the secret verifier', async () => {
    expect(await secretVerifier()(await signWith(rsa))).toEqual(refused('ERR_JOSE_ALG_NOT_ALLOWED'));
  });

  it('an algorithm outside the configured list is refused even with the right key', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 }); // a KeyObject signs with any RS hash
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const verify = createJwtVerifier(JwtSchema.parse({ publicKey: pem, audience: 'mcp', algorithms: ['RS256'] }), { now });
    expect(await verify(await sign(privateKey, { alg: 'RS384' }))).toEqual(refused('ERR_JOSE_ALG_NOT_ALLOWED'));
    expect(await verify(await sign(privateKey, { alg: 'RS256' }))).toEqual(alice);
  });

  it.each(['', 'garbage', 'a.b', 'a.b.c', 'a.b.c.d'])('a malformed token %j is refused', async (token) => {
    expect(await jwksVerifier()(token)).toEqual(refused('ERR_JWS_INVALID'));
  });

  it('a validly signed payload that is not a JSON claims set is refused', async () => {
    const token = await new CompactSign(new TextEncoder().encode('not json')).setProtectedHeader({ alg: 'RS256', kid: rsa.kid }).sign(rsa.privateKey);
    expect(await jwksVerifier()(token)).toEqual(refused('ERR_JWT_INVALID'));
  });
});

describe('principal and roles claims', () => {
  it.each([
    ['a number', { sub: 42 }],
    ['an empty string', { sub: '' }],
    ['missing', { sub: undefined }],
    ['an array', { sub: ['alice'] }],
  ])('a principal claim that is %s is refused', async (_what, claims) => {
    expect(await secretVerifier()(await hs256(claims))).toEqual(refused('ERR_PRINCIPAL_CLAIM', 'sub'));
  });

  it.each([
    ['an array', ['eng', 'ops'], ['eng', 'ops']],
    ['a space-separated string', 'eng  ops admin', ['eng', 'ops', 'admin']],
    ['an empty string', '', []],
    ['absent', undefined, []],
  ])('roles as %s', async (_what, roles, expected) => {
    expect(await secretVerifier()(await hs256({ roles }))).toMatchObject({ ok: true, principal: 'alice', roles: expected });
  });

  it.each([
    ['a number', 7],
    ['an object', { admin: true }],
    ['an array with a number', ['eng', 1]],
    ['an array with an empty string', ['eng', '']],
  ])('roles as %s refuse the token', async (_what, roles) => {
    expect(await secretVerifier()(await hs256({ roles }))).toEqual(refused('ERR_ROLES_CLAIM', 'roles'));
  });

  it('principalClaim and rolesClaim name other claims (a URL-like claim name is taken whole, not as a path)', async () => {
    const verify = secretVerifier({ principalClaim: 'email', rolesClaim: 'https://example.com/roles' });
    const token = await hs256({ email: 'alice@example.com', 'https://example.com/roles': ['admin'], roles: ['ignored'] });
    expect(await verify(token)).toMatchObject({ ok: true, principal: 'alice@example.com', roles: ['admin'] });
    expect(await verify(await hs256())).toEqual(refused('ERR_PRINCIPAL_CLAIM', 'email'));
  });
});

describe('verification cache', () => {
  // cacheMaxAgeMs 0: jose fetches the key set for every signature it checks, so a fetch counts a verification.
  const counting = (options: { now: () => Date; cacheSize?: number }) =>
    createJwtVerifier(JwtSchema.parse({ jwksUrl: `${baseUrl}/jwks`, audience: 'mcp', issuer: ISSUER }), {
      ...options,
      jwks: { cooldownMs: 0, cacheMaxAgeMs: 0 },
    });

  it('a verified token presented again is not verified again until its exp; then it is refused', async () => {
    let clock = NOW;
    const verify = counting({ now: () => clock });
    const token = await signWith(rsa, { exp: T + 60 });
    const before = fetches;
    const first = await verify(token);
    expect(first).toEqual({ ok: true, principal: 'alice', roles: ['eng'], binding: `jwt:${JSON.stringify([ISSUER, 'alice'])}`, expiresAt: (T + 60) * 1000 });
    expect(fetches - before).toBe(1);
    for (let i = 0; i < 5; i++) expect(await verify(token)).toEqual(first);
    expect(fetches - before).toBe(1); // five hits, no signature check
    expect(await verify(await signWith(rsa, { exp: T + 61 }))).toEqual(alice); // another token is verified
    expect(fetches - before).toBe(2);
    clock = new Date((T + 60) * 1000); // exactly at exp: expired, as jose judges it
    expect(await verify(token)).toEqual(refused('ERR_JWT_EXPIRED', 'exp'));
  });

  it('is keyed by the whole token: a token with a changed signature is verified, and refused', async () => {
    const verify = counting({ now });
    const token = await signWith(rsa);
    expect(await verify(token)).toEqual(alice);
    const [h, p, sig] = token.split('.');
    const forged = `${h}.${b64url({ sub: 'alice', roles: ['admin'], aud: 'mcp', iss: ISSUER, exp: T + 600 })}.${sig}`;
    expect(p).not.toBe(forged.split('.')[1]);
    expect(await verify(forged)).toEqual(refused('ERR_JWS_SIGNATURE_VERIFICATION_FAILED'));
    expect(await verify(`${h}.${p}.${sig!.slice(0, -4)}AAAA`)).toMatchObject({ ok: false });
  });

  it('remembers no refusal: a token refused is checked again each time (random tokens cannot push out verified ones)', async () => {
    const verify = counting({ now });
    const wrongAudience = await signWith(rsa, { aud: 'someone-else' });
    const before = fetches;
    expect(await verify(wrongAudience)).toMatchObject({ ok: false, code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'aud' });
    expect(await verify(wrongAudience)).toMatchObject({ ok: false, claim: 'aud' });
    expect(fetches - before).toBe(2);
  });

  it('is bounded (least recently used goes first), and 0 turns it off', async () => {
    const verify = counting({ now, cacheSize: 2 });
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((jti) => signWith(rsa, { jti })));
    const before = fetches;
    for (const t of [a, b, a, c]) await verify(t!); // c pushes out b (a was used after b)
    expect(fetches - before).toBe(3);
    await verify(a!);
    expect(fetches - before).toBe(3);
    await verify(b!);
    expect(fetches - before).toBe(4);
    const off = counting({ now, cacheSize: 0 });
    const start = fetches;
    await off(a!);
    await off(a!);
    expect(fetches - start).toBe(2);
  });

  it('binds a token to its issuer and subject, whatever claim names the principal', async () => {
    const verify = secretVerifier({ principalClaim: 'email' });
    expect(await verify(await hs256({ email: 'a@example.com', sub: 'u-1' }))).toMatchObject({
      principal: 'a@example.com',
      binding: `jwt:${JSON.stringify([ISSUER, 'u-1'])}`,
    });
    const anyIssuer = createJwtVerifier(JwtSchema.parse({ secret: SECRET, audience: 'mcp' }), { now });
    expect(await anyIssuer(await hs256({ iss: 'https://other.example.com' }))).toMatchObject({
      binding: `jwt:${JSON.stringify(['https://other.example.com', 'alice'])}`,
    });
  });
});
