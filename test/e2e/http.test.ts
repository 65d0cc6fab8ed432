// The Streamable HTTP endpoint through the built CLI: both eras, several principals, one upstream pool, auth, Origin/Host, limits, shutdown.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASS } from '../helpers/passthrough.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { postRpc } from '../helpers/raw-http.js';
import { initializeRequest } from '../helpers/rpc-messages.js';
import { runCli, upstreams } from '../helpers/built-cli.js';
import { within } from '../helpers/gate.js';
import { HttpGatewayProcess } from '../helpers/http-gateway.js';
import { RemoteFixture } from '../helpers/remote-fixture.js';
import { TempDir } from '../helpers/temp-dir.js';

const TOKENS = { alice: 'alice-token-0123456789abcdef', bob: 'bob-token-0123456789abcdef', carol: 'carol-token-0123456789abcdef' };

/** The built CLI serving HTTP on 127.0.0.1 with an OS-assigned port; its log is parsed for `listening`. */
class HttpGateway extends HttpGatewayProcess {
  static async start(config: Record<string, unknown>, args: string[] = []): Promise<HttpGateway> {
    const g = new HttpGateway();
    await g.spawn(g.dir.writeConfig(config), { logLevel: 'debug', args });
    return g;
  }
  origin(): string {
    return this.url.origin;
  }
  legacyClient(token: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const transport = new StreamableHTTPClientTransport(this.url, { requestInit: { headers: { authorization: `Bearer ${token}` } } });
    const client = new Client({ name: 'legacy-http', version: '1.0.0' });
    return client.connect(transport).then(() => ({ client, transport }));
  }
  async modernClient(token: string): Promise<ModernClient> {
    const client = new ModernClient({ name: 'modern-http', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new ModernHttpTransport(this.url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    return client;
  }
  post(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
    return postRpc(this.url, body, { headers });
  }
}

const initialize = initializeRequest();

describe('Streamable HTTP endpoint', () => {
  let g: HttpGateway;
  let web: RemoteFixture;
  beforeAll(async () => {
    web = await RemoteFixture.start('http', '--resources', '3');
    g = await HttpGateway.start({
      servers: {
        fx: upstreams.fixture('--resources', '3', '--subscribe'),
        web: { url: web.url, headers: { 'X-Upstream-Key': 'configured' } },
      },
      auth: {
        tokens: [
          { principal: 'alice', roles: ['eng'], token: TOKENS.alice },
          { principal: 'bob', token: TOKENS.bob },
          { principal: 'carol', token: TOKENS.carol },
        ],
      },
      subscriptions: { coalesceMs: 0 },
      http: { maxBodyBytes: 65536 },
    });
    await within(g.started, 'the upstreams to start');
  });
  afterAll(async () => {
    await g?.[Symbol.asyncDispose]();
    await web?.[Symbol.asyncDispose]();
  });

  it('refuses missing and invalid credentials with 401; with static tokens only, no OAuth metadata for clients to chase', async () => {
    const missing = await g.post(initialize);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    const invalid = await g.post(initialize, { authorization: 'Bearer not-a-token-of-ours' });
    expect(invalid.status).toBe(401);
    expect(invalid.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    // No authorization server is configured: the metadata an OAuth client would start from is not served.
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      expect((await fetch(`${g.origin()}${path}`)).status).toBe(404);
    }
    expect(g.log).not.toContain(TOKENS.alice);
  });

  it('healthz and readyz answer without credentials and name no resource (upstreams only to an authenticated caller)', async () => {
    expect((await fetch(`${g.origin()}/healthz`)).status).toBe(200);
    const anonymous = await fetch(`${g.origin()}/readyz`);
    expect(anonymous.status).toBe(200);
    expect(await anonymous.json()).toEqual({ ready: true });
    const ready = await fetch(`${g.origin()}/readyz`, { headers: { authorization: `Bearer ${TOKENS.alice}` } });
    expect(ready.status).toBe(200);
    const body = await ready.text();
    const parsed = JSON.parse(body) as { ready: boolean; upstreams: { server: string; status: string }[] };
    expect(parsed.ready).toBe(true);
    expect(parsed.upstreams.map((u) => u.server)).toEqual(['fx', 'web']);
    expect(parsed.upstreams[0]!.status).toBe('ready');
    expect(body).not.toContain('fixture://');
  });

  it('three principals, both eras, share one upstream process: same catalog, reads, one pool', async () => {
    const alice = await g.legacyClient(TOKENS.alice);
    const bob = await g.legacyClient(TOKENS.bob);
    const carol = await g.modernClient(TOKENS.carol);
    try {
      expect(carol.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const a = (await alice.client.listResources()).resources.map((r) => r.uri);
      const b = (await bob.client.listResources()).resources.map((r) => r.uri);
      const c = ((await carol.request({ method: 'resources/list', params: {} } as never, PASS as never)) as { resources: { uri: string }[] }).resources.map(
        (r) => r.uri,
      );
      expect(a).toEqual(b);
      expect(c).toEqual(a);
      expect(a).toEqual(expect.arrayContaining(['fx+fixture://res/0', 'web+fixture://res/2']));
      const pids = await Promise.all(
        [alice.client, bob.client].map(
          async (cl) => JSON.parse(((await cl.readResource({ uri: 'fx+fixture://stats?n=1' })).contents[0] as { text: string }).text).pid as number,
        ),
      );
      expect(new Set(pids).size).toBe(1); // one upstream process for every session
      expect(alice.transport.sessionId).not.toBe(bob.transport.sessionId);
      expect(alice.transport.sessionId).toMatch(/^[A-Za-z0-9_-]{22}$/); // 128 random bits
    } finally {
      await Promise.all([alice.client.close(), bob.client.close(), carol.close()]);
    }
  });

  it('an update reaches exactly the subscribed session, over its GET stream', async () => {
    const alice = await g.legacyClient(TOKENS.alice);
    const bob = await g.legacyClient(TOKENS.bob);
    try {
      const got: Record<string, string[]> = { alice: [], bob: [] };
      const aliceGot = new Promise<void>((resolve) =>
        alice.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
          got.alice!.push(n.params.uri);
          resolve();
        }),
      );
      bob.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void got.bob!.push(n.params.uri));
      await alice.client.subscribeResource({ uri: 'fx+fixture://ticker' });
      await bob.client.subscribeResource({ uri: 'fx+fixture://res/1' });
      await bob.client.readResource({ uri: 'fx+fixture://control/tick?n=1' });
      await within(aliceGot, 'alice’s update');
      // Bob's own subscription is answered through the same path: once it fires, his stream is live,
      // and the ticker update never reached him.
      expect(got.alice).toEqual(['fx+fixture://ticker']);
      expect(got.bob).toEqual([]);
    } finally {
      await Promise.all([alice.client.close(), bob.client.close()]);
    }
  });

  it('a session id used with another principal’s credentials gets exactly the 404 of an unknown id; DELETE ends a session', async () => {
    const alice = await g.legacyClient(TOKENS.alice);
    const sid = alice.transport.sessionId!;
    const list = { jsonrpc: '2.0', id: 2, method: 'resources/list', params: {} };
    const asBob = await g.post(list, { authorization: `Bearer ${TOKENS.bob}`, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' });
    const unknown = await g.post(list, {
      authorization: `Bearer ${TOKENS.bob}`,
      'mcp-session-id': 'AAAAAAAAAAAAAAAAAAAAAA',
      'mcp-protocol-version': '2025-11-25',
    });
    expect([asBob.status, await asBob.text()]).toEqual([unknown.status, await unknown.text()]);
    expect(asBob.status).toBe(404);
    // Alice's session is untouched, then ended by DELETE: the same id is then unknown to her too.
    expect((await alice.client.listResources()).resources.length).toBeGreaterThan(0);
    await alice.transport.terminateSession();
    const after = await g.post(list, { authorization: `Bearer ${TOKENS.alice}`, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' });
    expect(after.status).toBe(404);
    await alice.client.close();
  });

  it('a 2026 listen over HTTP gets updates of the URIs it was acknowledged for', async () => {
    const carol = await g.modernClient(TOKENS.carol);
    try {
      const arrived = new Promise<string>((resolve) => carol.setNotificationHandler('notifications/resources/updated', (n) => resolve(n.params.uri)));
      const sub = await carol.listen({ resourceSubscriptions: ['fx+fixture://ticker', 'nobody+x://y'] });
      expect(sub.honoredFilter.resourceSubscriptions).toEqual(['fx+fixture://ticker']);
      await carol.request({ method: 'resources/read', params: { uri: 'fx+fixture://control/tick?n=2' } } as never, PASS as never);
      expect(await within(arrived, 'the listen’s update')).toBe('fx+fixture://ticker');
      await sub.close();
    } finally {
      await carol.close();
    }
  });

  it('no client credential reaches an upstream: only its configured headers', async () => {
    const alice = await g.legacyClient(TOKENS.alice);
    try {
      const stats = JSON.parse(((await alice.client.readResource({ uri: 'web+fixture://stats?n=9' })).contents[0] as { text: string }).text) as {
        lastHeaders: Record<string, string>;
      };
      expect(stats.lastHeaders['x-upstream-key']).toBe('configured');
      expect(JSON.stringify(stats.lastHeaders)).not.toContain(TOKENS.alice);
      expect(stats.lastHeaders.authorization).toBeUndefined();
    } finally {
      await alice.client.close();
    }
  });

  it.each([
    ['a foreign Origin', { origin: 'https://evil.example' }],
    ['Origin: null', { origin: 'null' }],
    ['a rebinding Host', { host: 'evil.example:7330' }],
    ['a Host with another port', { host: 'localhost:1' }],
  ])('refuses %s with 403', async (_what, headers) => {
    // node:http, not fetch: fetch will not send a Host of our choosing.
    const status = await new Promise<number>((resolve, reject) => {
      const body = JSON.stringify(initialize);
      const req = httpRequest(g.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${TOKENS.alice}`, ...headers },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end(body);
    });
    expect(status).toBe(403);
  });

  it('accepts its own origin, and refuses a body over http.maxBodyBytes with 413 while other sessions go on', async () => {
    const own = await g.post(initialize, { authorization: `Bearer ${TOKENS.alice}`, origin: g.origin() });
    expect(own.status).toBe(200);
    const alice = await g.legacyClient(TOKENS.alice);
    const big = await g.post({ ...initialize, params: { ...initialize.params, pad: 'x'.repeat(70_000) } }, { authorization: `Bearer ${TOKENS.alice}` });
    expect(big.status).toBe(413);
    expect((await alice.client.listResources()).resources.length).toBeGreaterThan(0);
    await alice.client.close();
  });
});

describe('HTTP startup and shutdown', () => {
  it('refuses a non-loopback bind without auth (exit 2), unless --allow-unauthenticated', async () => {
    using dir = new TempDir();
    const config = dir.writeConfig({ servers: { fx: upstreams.fixture('--resources', '1') } });
    const r = await runCli(['serve', '--http', '--host', '0.0.0.0', '--port', '0', '--config', config]);
    expect(r.exitCode).toBe(2);
    expect(String(r.stderr)).toMatch(/refusing to serve 0\.0\.0\.0 without authentication/);
  });

  it('SIGTERM: stops, closes sessions and upstreams, exits 0', async () => {
    const g = await HttpGateway.start({ servers: { fx: upstreams.fixture('--resources', '1', '--subscribe') } });
    const anon = await g.legacyClient('unused');
    await anon.client.subscribeResource({ uri: 'fx+fixture://res/0' });
    expect(await g.stop()).toBe(0);
    expect(g.log).toMatch(/"msg":"shutting down"/);
    await g[Symbol.asyncDispose]();
  });
});

describe('JWT authentication through the gateway', () => {
  it('accepts a JWT verified against a local JWKS (principal and roles from its claims); refuses expired, wrong-audience and unsigned ones', async () => {
    const { generateKeyPair, exportJWK, SignJWT } = await import('jose');
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    const { createServer } = await import('node:http');
    const jwks = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })));
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', () => r()));
    const jwksUrl = `http://127.0.0.1:${(jwks.address() as { port: number }).port}/jwks.json`;
    const sign = (claims: Record<string, unknown>, expiresIn = '5m') =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .setIssuer('https://idp.test')
        .setIssuedAt()
        .setExpirationTime(expiresIn)
        .sign(privateKey);
    await using g = await HttpGateway.start({
      servers: { fx: upstreams.fixture('--resources', '1') },
      auth: { jwt: { jwksUrl, issuer: 'https://idp.test', audience: 'mcp-federate' } },
      policy: { default: 'deny', rules: [{ id: 'eng', effect: 'allow', roles: ['eng'] }] },
    });
    try {
      const good = await sign({ sub: 'dana', roles: ['eng'], aud: 'mcp-federate' });
      const { client } = await g.legacyClient(good);
      expect((await client.listResources()).resources.map((r) => r.uri)).toContain('fx+fixture://res/0');
      await client.close();
      const noRole = await g.legacyClient(await sign({ sub: 'eve', roles: [], aud: 'mcp-federate' }));
      expect((await noRole.client.listResources()).resources).toEqual([]); // authenticated, but the policy gives eve nothing
      await noRole.client.close();
      expect(await (await fetch(`${g.origin()}/.well-known/oauth-protected-resource/mcp`)).json()).toMatchObject({
        authorization_servers: ['https://idp.test'],
      });
      // With an authorization server to name, a 401 points at the metadata (RFC 9728 §5.1).
      const unauthenticated = await g.post(initialize);
      expect(unauthenticated.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${g.origin()}/.well-known/oauth-protected-resource/mcp"`);
      const refused = [
        await sign({ sub: 'dana', roles: ['eng'], aud: 'mcp-federate' }, '-1m'),
        await sign({ sub: 'dana', roles: ['eng'], aud: 'someone-else' }),
        `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"dana","aud":"mcp-federate"}').toString('base64url')}.`,
      ];
      for (const token of refused) {
        const res = await g.post(initialize, { authorization: `Bearer ${token}` });
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
      }
    } finally {
      jwks.close();
    }
  });
});

describe('HTTP limits', () => {
  it('a client that never finishes its headers is cut off at http.headersTimeoutMs; others are served meanwhile', async () => {
    const { connect } = await import('node:net');
    await using g = await HttpGateway.start({
      servers: { fx: upstreams.fixture('--resources', '1') },
      http: { headersTimeoutMs: 1_000, requestTimeoutMs: 2_000 },
    });
    const socket = connect(Number(g.url.port), '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: '); // and nothing more
    const ended = new Promise<string>((resolve) => {
      let got = '';
      socket.on('data', (d) => (got += String(d)));
      socket.once('close', () => resolve(got));
    });
    expect((await fetch(`${g.origin()}/healthz`)).status).toBe(200); // served while the slow one hangs
    const answer = await within(ended, 'the slow connection to be closed', 8_000);
    expect(answer === '' || /^HTTP\/1\.1 (408|400)/.test(answer)).toBe(true);
  });
});

describe('hostile HTTP input', () => {
  it('500 malformed bodies and headers: every one gets an HTTP answer, sessions stay usable, the gateway lives', async () => {
    let seed = Number(process.env.FUZZ_SEED ?? 4242);
    const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    await using g = await HttpGateway.start({
      servers: { fx: upstreams.fixture('--resources', '2') },
      auth: { tokens: [{ principal: 'alice', token: TOKENS.alice }] },
      http: { maxBodyBytes: 8192 },
    });
    const alice = await g.legacyClient(TOKENS.alice);
    const sid = alice.transport.sessionId!;
    const bodies = [
      '',
      '{',
      'null',
      '[]',
      '[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
      '{"jsonrpc":"2.0"}',
      '{"jsonrpc":"2.0","id":null,"method":"resources/read","params":{"uri":"fx+fixture://res/0"}}',
      '{"jsonrpc":"2.0","id":{"a":1},"method":"resources/list"}',
      '{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":5}}',
      '{"jsonrpc":"2.0","id":8,"method":"resources/read","params":{"uri":"fx+fixture://res/0","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}',
      '{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"notifications":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}',
      '{"jsonrpc":"2.0","id":10,"method":"initialize","params":{}}',
      '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}',
      '{"jsonrpc":"2.0","id":11,"result":{}}',
      `{"jsonrpc":"2.0","id":12,"method":"x","params":{"pad":"${'y'.repeat(9000)}"}}`,
      `${'['.repeat(3000)}${']'.repeat(3000)}`,
      '\u0000\u0001\u0002',
      '{"jsonrpc":"2.0","id":13,"method":"resources/read","params":{"uri":"fx+fixture://res/0\\n\\u2028"}}',
    ];
    const headerSets: Record<string, string>[] = [
      {},
      { 'mcp-session-id': sid },
      { 'mcp-session-id': 'nope' },
      { 'mcp-session-id': sid, 'mcp-protocol-version': '1999-01-01' },
      { 'mcp-protocol-version': '2026-07-28' },
      { 'content-type': 'text/plain' },
      { accept: 'text/html' },
    ];
    const statuses = new Set<number>();
    for (let i = 0; i < 500; i++) {
      const headers = { authorization: `Bearer ${TOKENS.alice}`, ...pick(headerSets) };
      const res = await fetch(g.url, {
        method: pick(['POST', 'POST', 'POST', 'GET', 'DELETE', 'PUT']),
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        ...(rand() < 0.9 ? { body: pick(bodies) } : {}),
        signal: AbortSignal.timeout(5_000),
      }).catch((err: unknown) => err as Error);
      if (res instanceof Error) {
        // A GET with a body is refused by fetch itself; nothing reached the gateway.
        expect(String(res)).toMatch(/GET|HEAD|body/i);
        continue;
      }
      statuses.add(res.status);
      expect(res.status).toBeGreaterThanOrEqual(200);
      expect(res.status).toBeLessThan(600);
      if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) await res.body?.cancel();
      else await res.text();
    }
    expect([...statuses].every((s) => s !== 500)).toBe(true); // nothing reached an unexpected failure
    expect((await fetch(`${g.origin()}/healthz`)).status).toBe(200);
    // alice's session is still served (unless a fuzzed DELETE with her id ended it: then a new one is).
    const again = await g.legacyClient(TOKENS.alice);
    expect((await again.client.listResources()).resources.length).toBeGreaterThan(0);
    await Promise.all([alice.client.close().catch(() => undefined), again.client.close()]);
  });
});
