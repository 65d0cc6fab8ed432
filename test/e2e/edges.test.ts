// The HTTP edges through the built CLI: Host/Origin on every path, /readyz and _meta naming only what a caller may see, ids answered once and as sent, body bounds, methods, Content-Type, JWKS bounds, failed-login logs.
import { createServer, type IncomingHttpHeaders, request as httpRequest, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initializeRequest, modernEnvelope } from '../helpers/rpc-messages.js';
import { rssBytes, upstreams } from '../helpers/built-cli.js';
import { META_INCOMPLETE } from '../helpers/catalog.js';
import { within } from '../helpers/gate.js';
import { HttpGatewayProcess } from '../helpers/http-gateway.js';
import { rawCli, type RawCliClient } from '../helpers/cli-stdio.js';
import { nested } from '../helpers/raw-client.js';

const TOKENS = { alice: 'alice-token-0123456789abcdef', bob: 'bob-token-0123456789abcdef' };

/** The built CLI serving HTTP on 127.0.0.1 with an OS-assigned port. */
class Gateway extends HttpGatewayProcess {
  static async start(config: Record<string, unknown>): Promise<Gateway> {
    const g = new Gateway();
    await g.spawn(g.dir.writeConfig(config), { logLevel: 'info' });
    return g;
  }
  get port(): number {
    return Number(this.url.port);
  }
  /** One raw request: any method, any headers (Host included), any body. */
  raw(
    method: string,
    path: string,
    headers: Record<string, string> = {},
    body?: string,
  ): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: this.port, method, path, headers, setHost: !('host' in headers) }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      });
      req.on('error', reject);
      req.end(body);
    });
  }
  /** A POST of `body` (text as given) to the MCP path with JSON headers and `token`. */
  post(body: string, token: string | undefined, headers: Record<string, string> = {}) {
    return this.raw(
      'POST',
      this.url.pathname,
      {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...headers,
      },
      body,
    );
  }
  /** A 2025-11-25 session opened raw: its id. */
  async session(token: string): Promise<string> {
    const init = await this.post(JSON.stringify(initializeRequest()), token);
    expect(init.status).toBe(200);
    const id = init.headers['mcp-session-id'] as string;
    expect((await this.post('{"jsonrpc":"2.0","method":"notifications/initialized"}', token, { 'mcp-session-id': id })).status).toBe(202);
    return id;
  }
}

const modern = (method: string, id: string, params: Record<string, unknown> = {}) =>
  `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${JSON.stringify({ ...params, _meta: modernEnvelope() })}}`;

describe('HTTP edges', () => {
  let g: Gateway;
  beforeAll(async () => {
    g = await Gateway.start({
      servers: {
        fx: upstreams.fixture('--resources', '3', '--read-delay-ms', '400'),
        secret: upstreams.fixture('--resources', '1'),
        dead: { ...upstreams.fixture('--exit-on-start'), required: false }, // down on purpose: not one the gateway's readiness waits for
      },
      auth: {
        tokens: [
          { principal: 'alice', roles: ['eng'], token: TOKENS.alice },
          { principal: 'bob', token: TOKENS.bob },
        ],
      },
      policy: {
        default: 'deny',
        rules: [
          { id: 'eng-all', effect: 'allow', roles: ['eng'] },
          { id: 'bob-fx', effect: 'allow', principals: ['bob'], servers: ['fx'] },
        ],
      },
      http: { maxBodyBytes: 1 << 20 },
    });
    await within(g.started, 'the upstreams to start');
  });
  afterAll(async () => {
    await g?.[Symbol.asyncDispose]();
  });

  it.each(['/healthz', '/readyz', '/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp', '/mcp', '/nothing-here'])(
    'refuses Host: evil.com (DNS rebinding) and a foreign Origin on %s with 403',
    async (path) => {
      for (const headers of [{ host: 'evil.com' }, { host: `evil.com:${g.port}` }, { origin: 'http://evil.com' }] as Record<string, string>[]) {
        const res = await g.raw('GET', path, { ...headers, authorization: `Bearer ${TOKENS.alice}` });
        expect(res.status).toBe(403);
        expect(res.text).not.toMatch(/fx|secret|dead|resource/);
      }
      // The same path with the gateway's own Host is served (a 403 never came from the path itself).
      expect((await g.raw('GET', path, { host: `localhost:${g.port}` })).status).not.toBe(403);
    },
  );

  it('/readyz: ready or not to anonymous and refused callers; names only the upstreams a caller may see', async () => {
    for (const headers of [{}, { authorization: 'Bearer not-a-token-of-ours-at-all' }] as Record<string, string>[]) {
      const res = await g.raw('GET', '/readyz', headers);
      expect(res.status).toBe(200);
      expect(JSON.parse(res.text)).toEqual({ ready: true });
    }
    const alice = JSON.parse((await g.raw('GET', '/readyz', { authorization: `Bearer ${TOKENS.alice}` })).text) as { upstreams: { server: string }[] };
    expect(alice.upstreams.map((u) => u.server)).toEqual(['fx', 'secret', 'dead']);
    const bob = JSON.parse((await g.raw('GET', '/readyz', { authorization: `Bearer ${TOKENS.bob}` })).text) as { upstreams: { server: string }[] };
    expect(bob.upstreams).toEqual([{ server: 'fx', status: 'ready' }]);
  });

  it("a list's _meta names only the incomplete upstreams the principal may see", async () => {
    const list = async (token: string) => {
      const sid = await g.session(token);
      const res = await g.post('{"jsonrpc":"2.0","id":2,"method":"resources/list"}', token, { 'mcp-session-id': sid });
      return JSON.parse(res.text) as { result: { resources: { uri: string }[]; _meta?: Record<string, unknown> } };
    };
    const alice = await list(TOKENS.alice);
    expect(alice.result._meta).toEqual({ [META_INCOMPLETE]: [{ server: 'dead', reason: 'unavailable' }] });
    const bob = await list(TOKENS.bob);
    expect(bob.result.resources.length).toBeGreaterThan(0);
    expect(bob.result._meta).toBeUndefined();
    expect(JSON.stringify(bob)).not.toMatch(/dead|secret/);
  });

  it('answers CONNECT and every method the endpoint does not serve with 405', async () => {
    for (const method of ['PUT', 'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND']) {
      const res = await g.raw(method, '/mcp', { authorization: `Bearer ${TOKENS.alice}` });
      expect(res.status, method).toBe(405);
      expect(res.headers.allow).toBe('GET, POST, DELETE');
    }
    for (const path of ['/healthz', '/readyz']) expect((await g.raw('POST', path, {}, '{}')).status).toBe(405);
    const head = await new Promise<string>((resolve, reject) => {
      const socket = connect(g.port, '127.0.0.1', () => socket.write(`CONNECT evil.com:443 HTTP/1.1\r\nHost: evil.com:443\r\n\r\n`));
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (c: string) => (text += c));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(head).toMatch(/^HTTP\/1\.1 405 /);
  });

  it('Content-Type must be application/json (parameters allowed), in both eras', async () => {
    const sid = await g.session(TOKENS.alice);
    for (const type of ['text/plain; x=application/json', 'application/jsonx', 'application/json-seq', 'text/plain', 'application/json, text/plain']) {
      expect((await g.post('{"jsonrpc":"2.0","id":3,"method":"ping"}', TOKENS.alice, { 'mcp-session-id': sid, 'content-type': type })).status, type).toBe(415);
      expect((await g.post(modern('server/discover', '3'), TOKENS.alice, { 'content-type': type, 'mcp-protocol-version': '2026-07-28' })).status, type).toBe(
        415,
      );
    }
    const ok = await g.post('{"jsonrpc":"2.0","id":4,"method":"ping"}', TOKENS.alice, {
      'mcp-session-id': sid,
      'content-type': 'Application/JSON; charset=utf-8',
    });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text)).toMatchObject({ id: 4, result: {} });
  });

  it('wire.maxDepth applies to HTTP bodies in both eras: 400 with -32600 and the id', async () => {
    const sid = await g.session(TOKENS.alice);
    const deep = nested(30_000);
    const legacy = await g.post(`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":${deep}}}`, TOKENS.alice, { 'mcp-session-id': sid });
    expect(legacy.status).toBe(400);
    expect(JSON.parse(legacy.text)).toEqual({
      jsonrpc: '2.0',
      id: 5,
      error: { code: -32600, message: 'Invalid Request: message nests deeper than 1000 levels', data: { limit: 1000 } },
    });
    const now = await g.post(modern('resources/read', '6', { uri: 'x', deep: JSON.parse(nested(2_000)) as unknown }), TOKENS.alice, {
      'mcp-protocol-version': '2026-07-28',
    });
    expect(now.status).toBe(400);
    expect(JSON.parse(now.text)).toMatchObject({ id: 6, error: { code: -32600 } });
    // Size: http.maxBodyBytes (1 MiB here) in both eras, 413 with -32600.
    const big = 'x'.repeat(1 << 20);
    for (const res of [
      await g.post(`{"jsonrpc":"2.0","id":10,"method":"ping","params":{"pad":"${big}"}}`, TOKENS.alice, { 'mcp-session-id': sid }),
      await g.post(modern('resources/list', '11', { pad: big }), TOKENS.alice, { 'mcp-protocol-version': '2026-07-28' }),
    ]) {
      expect(res.status).toBe(413);
      expect(JSON.parse(res.text)).toMatchObject({ error: { code: -32600 } });
    }
    // The session still serves.
    expect((await g.post('{"jsonrpc":"2.0","id":7,"method":"ping"}', TOKENS.alice, { 'mcp-session-id': sid })).status).toBe(200);
  });

  it('a 2025 session answers a malformed message with a readable id with -32600, as stdio does', async () => {
    const sid = await g.session(TOKENS.alice);
    const res = await g.post('{"jsonrpc":"2.0","id":8,"method":5}', TOKENS.alice, { 'mcp-session-id': sid });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toEqual({ jsonrpc: '2.0', id: 8, error: { code: -32600, message: 'Invalid Request: "method" must be a string' } });
  });

  it('2025 over HTTP: ids are echoed as sent, 1e400 gets id null, a second in-flight id is refused and the first answered', async () => {
    const sid = await g.session(TOKENS.alice);
    const h = { 'mcp-session-id': sid };
    const inf = await g.post('{"jsonrpc":"2.0","id":1e400,"method":"ping"}', TOKENS.alice, h);
    expect(inf.status).toBe(400);
    expect(JSON.parse(inf.text)).toMatchObject({ id: null, error: { code: -32600 } });
    const e2 = await g.post('{"jsonrpc":"2.0","id":1e2,"method":"ping"}', TOKENS.alice, h);
    expect(e2.text).toMatch(/^\{"id":1e2,/);
    for (const id of ['1.50', '12345678901234567890']) {
      const res = await g.post(`{"jsonrpc":"2.0","id":${id},"method":"ping"}`, TOKENS.alice, h);
      expect(res.text, id).toContain(`"id":${id},`);
      expect(JSON.parse(res.text)).toMatchObject({ error: { code: -32600 } });
    }
    // fx reads take 400 ms: the first is in flight when the second arrives.
    const first = g.post('{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"fx+fixture://res/0"}}', TOKENS.alice, h);
    // Until the first is in flight a ping with its id is simply answered (and frees the id again);
    // once it is, the same id is refused. Wait for that, not for a fixed time.
    let second = await g.post('{"jsonrpc":"2.0","id":9,"method":"ping"}', TOKENS.alice, h);
    await within(
      (async () => {
        while (second.status !== 400) second = await g.post('{"jsonrpc":"2.0","id":9,"method":"ping"}', TOKENS.alice, h);
      })(),
      'the duplicate id to be refused while the first is in flight',
    );
    expect(second.status).toBe(400);
    expect(JSON.parse(second.text)).toEqual({
      jsonrpc: '2.0',
      id: 9,
      error: { code: -32600, message: 'Invalid Request: a request with this id is already in flight' },
    });
    const answered = JSON.parse((await first).text) as { id: number; result: { contents: { uri: string }[] } };
    expect(answered.id).toBe(9);
    expect(answered.result.contents[0]?.uri).toBe('fx+fixture://res/0');
    // Once answered, the id is free again.
    expect(JSON.parse((await g.post('{"jsonrpc":"2.0","id":9,"method":"ping"}', TOKENS.alice, h)).text)).toMatchObject({ id: 9, result: {} });
  });

  it('2026 over HTTP: numeric ids are echoed as sent, 1e400 gets -32600 with id null', async () => {
    const h = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'resources/list' };
    for (const id of ['1e2', '-0', '1.50']) {
      const res = await g.post(modern('resources/list', id), TOKENS.alice, h);
      expect(res.text, id).toMatch(new RegExp(`^\\{"id":${id.replace('.', '\\.')},`));
      expect(res.headers['content-length']).toBeUndefined();
    }
    const ok = JSON.parse((await g.post(modern('resources/list', '1e2'), TOKENS.alice, h)).text) as { result: { resources: unknown[] } };
    expect(ok.result.resources.length).toBeGreaterThan(0);
    const inf = await g.post(modern('resources/list', '1e400'), TOKENS.alice, h);
    expect(JSON.parse(inf.text)).toMatchObject({ id: null, error: { code: -32600 } });
  });

  it('failed logins are logged at warn with the reason, never the token', async () => {
    const bad = 'an-unknown-token-0123456789-abcdef';
    expect((await g.post('{"jsonrpc":"2.0","id":1,"method":"ping"}', bad)).status).toBe(401);
    await within(
      (async () => {
        while (!g.log.includes('ERR_UNKNOWN_TOKEN')) await new Promise((r) => setTimeout(r, 20));
      })(),
      'the refusal to be logged',
    );
    const line = g.log.split('\n').find((l) => l.includes('ERR_UNKNOWN_TOKEN'))!;
    expect(JSON.parse(line)).toMatchObject({ level: 40, msg: 'bearer token refused', auth: { code: 'ERR_UNKNOWN_TOKEN' } });
    expect(g.log).not.toContain(bad);
  });
});

describe('stdio ids, through the built CLI', () => {
  let w: RawCliClient;
  beforeAll(async () => {
    w = rawCli({ servers: { fx: upstreams.fixture('--resources', '2', '--read-delay-ms', '400') } });
    await w.initialize();
  });
  afterAll(async () => {
    await w?.[Symbol.asyncDispose]();
  });

  it('1e400 is answered with -32600 and id null', async () => {
    const before = w.nullAnswers.length;
    await w.write('{"jsonrpc":"2.0","id":1e400,"method":"ping"}\n');
    await w.until(() => w.nullAnswers.length > before, 'the null answer');
    expect(w.nullAnswers.at(-1)).toMatchObject({ id: null, error: { code: -32600 } });
  });

  it.each([
    ['1e2', true],
    ['1E+2', true],
    ['-0', true],
    ['1.50', false],
    ['12345678901234567890', false],
  ])('id %s is echoed byte for byte', async (id, ok) => {
    const before = w.lines.length;
    await w.write(`{"jsonrpc":"2.0","id":${id},"method":"ping"}\n`);
    await w.until(() => w.lines.slice(before).some((l) => l.raw.includes(`"id":${id},`)), `the answer to ${id}`);
    const line = w.lines.slice(before).find((l) => l.raw.includes(`"id":${id},`))!;
    expect(line.parsed?.error === undefined).toBe(ok);
  });

  it('a second in-flight request with the same id is refused with -32600; the first is still answered', async () => {
    await w.write(
      '{"jsonrpc":"2.0","id":"dup","method":"resources/read","params":{"uri":"fx+fixture://res/0"}}\n{"jsonrpc":"2.0","id":"dup","method":"ping"}\n',
    );
    await w.until(() => w.answers('dup').length === 2, 'both answers');
    const [refusal, answer] = w.answers('dup');
    expect(refusal).toEqual({ jsonrpc: '2.0', id: 'dup', error: { code: -32600, message: 'Invalid Request: a request with this id is already in flight' } });
    expect((answer?.result?.contents as { uri: string }[])[0]?.uri).toBe('fx+fixture://res/0');
  });

  it('a malformed message with a readable id is answered -32600 with that id', async () => {
    const answer = await (async () => {
      await w.write('{"jsonrpc":"2.0","id":"m5","method":5}\n');
      return w.answer('m5');
    })();
    expect(answer.error?.code).toBe(-32600);
  });
});

describe('JWKS bounds', () => {
  let jwks: Server;
  let g: Gateway;
  let served = 0;
  const MiB = 1024 * 1024;
  beforeAll(async () => {
    const chunk = Buffer.alloc(MiB, 'A');
    jwks = createServer((req, res) => {
      if (req.url === '/hang') return; // never answers: the gateway's timeout must end it
      // 64 MiB, chunked (no Content-Length to refuse early on).
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"keys":[{"kty":"oct","k":"');
      let sent = 0;
      const more = () => {
        while (sent < 64) {
          sent++;
          served++;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end('"}]}');
      };
      res.on('error', () => undefined);
      more();
    });
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
    const port = (jwks.address() as AddressInfo).port;
    g = await Gateway.start({
      servers: { fx: upstreams.fixture('--resources', '1') },
      auth: { jwt: { jwksUrl: `http://127.0.0.1:${port}/jwks`, audience: 'mcp' } },
    });
    await within(g.started, 'the upstreams to start');
  });
  afterAll(async () => {
    await g?.[Symbol.asyncDispose]();
    jwks?.closeAllConnections();
    await new Promise((r) => jwks?.close(r));
  });

  it('a 64 MiB key set is refused after 1 MiB and the gateway RSS stays bounded', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const before = rssBytes(g.pid);
    for (let i = 0; i < 3; i++) {
      const token = await new SignJWT({ sub: 'x', aud: 'mcp', exp: Math.floor(Date.now() / 1000) + 60 })
        .setProtectedHeader({ alg: 'ES256', kid: `k${i}` })
        .sign(privateKey);
      const res = await g.post('{"jsonrpc":"2.0","id":1,"method":"ping"}', token);
      expect(res.status).toBe(401);
    }
    const after = rssBytes(g.pid);
    // Before the bound: +278 MB for one such key set. Now the body is cut at 1 MiB; what RSS still
    // moves is heap growth and first-use code under a loaded machine (seen up to 37 MB), far below.
    expect(after - before).toBeLessThan(64 * MiB);
    expect(served).toBeLessThan(64);
    expect(g.log).toContain('JWT key set unavailable');
  });
});
