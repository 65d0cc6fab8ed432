// The JWKS fetch: a body over the bound is refused, by Content-Length or as it streams, and the rest is not read.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { boundedJwksFetch, JwksTooLarge } from '../../src/serve/auth/jwks-fetch.js';
import { createJwtVerifier } from '../../src/serve/auth/jwt.js';
import { JwtSchema } from '../../src/config/schema.js';

describe('boundedJwksFetch', () => {
  let server: Server;
  let base = '';
  let sentChunks = 0;
  let jwks = '';
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/small') return void res.writeHead(200, { 'content-type': 'application/json' }).end(jwks);
      if (req.url === '/declared') return void res.writeHead(200, { 'content-length': String(8 << 20) }).end();
      if (req.url === '/hang') return;
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 'A');
      const more = () => {
        while (sentChunks < 1024) {
          sentChunks++;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end();
      };
      res.on('error', () => undefined);
      more();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('refuses a streamed body past the bound without reading it all', async () => {
    await expect(boundedJwksFetch(1 << 20)(`${base}/big`, {})).rejects.toBeInstanceOf(JwksTooLarge);
    expect(sentChunks).toBeLessThan(1024);
  });

  it('refuses a declared Content-Length over the bound before reading', async () => {
    await expect(boundedJwksFetch(1 << 20)(`${base}/declared`, {})).rejects.toThrow(/exceeds/);
  });

  it('passes a key set under the bound, and the verifier uses it', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k', alg: 'ES256' }] });
    const verify = createJwtVerifier(JwtSchema.parse({ jwksUrl: `${base}/small`, audience: 'mcp' }), { jwks: { maxBytes: 4096 } });
    const token = await new SignJWT({ sub: 'carol', aud: 'mcp', exp: Math.floor(Date.now() / 1000) + 60 })
      .setProtectedHeader({ alg: 'ES256', kid: 'k' })
      .sign(privateKey);
    expect(await verify(token)).toMatchObject({ ok: true, principal: 'carol', roles: [] });
    const tooSmall = createJwtVerifier(JwtSchema.parse({ jwksUrl: `${base}/small`, audience: 'mcp' }), { jwks: { maxBytes: 16 } });
    expect(await tooSmall(token)).toEqual({ ok: false, code: 'ERR_JWKS_UNAVAILABLE' });
  });

  it('a key set that never answers is unavailable once the timeout passes', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const verify = createJwtVerifier(JwtSchema.parse({ jwksUrl: `${base}/hang`, audience: 'mcp' }), { jwks: { timeoutMs: 50 } });
    const token = await new SignJWT({ sub: 'x', aud: 'mcp', exp: Math.floor(Date.now() / 1000) + 60 })
      .setProtectedHeader({ alg: 'ES256', kid: 'k' })
      .sign(privateKey);
    expect(await verify(token)).toEqual({ ok: false, code: 'ERR_JWKS_UNAVAILABLE' });
  });
});
