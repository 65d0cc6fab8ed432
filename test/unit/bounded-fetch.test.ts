// Bounded fetch against a real HTTP server with crafted bodies, and through the SDK's Streamable HTTP client.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MARK_TOO_DEEP, MARK_TOO_LARGE, createBoundedFetch } from '../../src/upstream/bounded-fetch.js';
import { createUpstreamServer } from '../helpers/upstream-server.mjs';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const LIMIT = 1024;
const DEPTH = 50;

let server: HttpServer;
let base = '';
let handler: Handler = (_req, res) => res.end();

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** A bounded fetch with the test limits, recording every drop. */
function bounded(limits: { maxResponseBytes?: number; maxDepth?: number; fetch?: typeof fetch } = {}) {
  const drops: string[] = [];
  const fetchFn = createBoundedFetch({ maxResponseBytes: LIMIT, maxDepth: DEPTH, ...limits, onDrop: (r) => drops.push(r) });
  return { fetch: fetchFn, drops };
}

const request = (id: number | string, method = 'resources/read') => ({ jsonrpc: '2.0', id, method, params: {} });
const post = (f: typeof fetch, body: unknown) => f(base, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

const tooLarge = (id: number | string, limit = LIMIT) => ({
  jsonrpc: '2.0',
  id,
  error: { code: -32603, message: 'Upstream response too large', data: { limit, [MARK_TOO_LARGE]: true } },
});
const tooDeep = (id: number | string) => ({
  jsonrpc: '2.0',
  id,
  error: { code: -32603, message: 'Upstream response nested too deeply', data: { limit: DEPTH, [MARK_TOO_DEEP]: true } },
});
const deep = (levels: number, id = 1) => `{"jsonrpc":"2.0","id":${id},"result":${'['.repeat(levels)}${']'.repeat(levels)}}`;
const big = (bytes: number) => 'x'.repeat(bytes);
const result = (id: number | string, text = 'ok') => JSON.stringify({ result: { text }, jsonrpc: '2.0', id });

/** Writes `chunk` until the client goes away (a body that never ends). */
function endless(res: ServerResponse, chunk: string): void {
  const pump = () => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once('drain', pump);
  };
  pump();
}

function sse(...parts: string[]): Handler {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 'sid-1' });
    for (const part of parts) res.write(part);
    res.end();
  };
}

describe('application/json responses', () => {
  it('passes a body under the limit unchanged, with status, headers and url', async () => {
    const body = result(7, 'small');
    handler = (_req, res) => res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'mcp-session-id': 's-7' }).end(body);
    const { fetch: f, drops } = bounded();
    const res = await post(f, request(7));
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBe('s-7');
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.url).toBe(base);
    expect(await res.text()).toBe(body);
    expect(drops).toEqual([]);
  });

  it('passes a body of exactly the limit', async () => {
    const head = result(1, '');
    const body = result(1, big(LIMIT - head.length));
    expect(Buffer.byteLength(body)).toBe(LIMIT);
    handler = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    expect(await (await post(bounded().fetch, request(1))).text()).toBe(body);
  });

  it('refuses on content-length alone, without waiting for the body', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(LIMIT * 1000), 'mcp-session-id': 's-1' });
      res.write('{"result":'); // and never more
    };
    const { fetch: f, drops } = bounded();
    const res = await post(f, request(3));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('mcp-session-id')).toBe('s-1');
    expect(await res.json()).toEqual(tooLarge(3));
    expect(drops).toEqual([`JSON response over maxResponseBytes (${LIMIT})`]);
  });

  it('refuses a chunked body once its count passes the limit, even one that never ends', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"jsonrpc":"2.0","id":"a","result":{"text":"');
      endless(res, big(100));
    };
    expect(await (await post(bounded().fetch, request('a'))).json()).toEqual(tooLarge('a'));
  });

  it('counts decoded bytes: a small gzip body that inflates past the limit is refused', async () => {
    const zipped = gzipSync(result(4, big(LIMIT * 20)));
    expect(zipped.length).toBeLessThan(LIMIT);
    handler = (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': zipped.length }).end(zipped);
    expect(await (await post(bounded().fetch, request(4))).json()).toEqual(tooLarge(4));
  });

  it('refuses a body nested deeper than maxDepth', async () => {
    handler = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(deep(DEPTH + 5));
    const { fetch: f, drops } = bounded();
    expect(await (await post(f, request(9))).json()).toEqual(tooDeep(9));
    expect(drops).toEqual([`JSON response nested deeper than maxDepth (${DEPTH})`]);
    handler = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(deep(DEPTH - 2));
    expect(await (await post(f, request(9))).text()).toBe(deep(DEPTH - 2));
  });

  it('answers every request id of a batch, in order, as a batch', async () => {
    handler = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(`[${big(LIMIT)}]`);
    const batch = [request(1), { jsonrpc: '2.0', method: 'notifications/progress', params: {} }, request('two')];
    expect(await (await post(bounded().fetch, batch)).json()).toEqual([tooLarge(1), tooLarge('two')]);
  });

  it('turns a refused answer to a POST without requests into an empty 202', async () => {
    handler = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(big(LIMIT + 1));
    const res = await post(bounded().fetch, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(res.status).toBe(202);
    expect(await res.text()).toBe('');
  });
});

describe('other responses', () => {
  it('pass unchanged under the limit', async () => {
    handler = (_req, res) => res.writeHead(202, { 'content-type': 'text/plain' }).end('Accepted');
    const res = await post(bounded().fetch, request(1));
    expect(res.status).toBe(202);
    expect(await res.text()).toBe('Accepted');
  });

  it.each([
    ['a text/plain body', 200, 'text/plain'],
    ['an error status, even with a JSON body', 500, 'application/json'],
  ])('error their stream past the limit: %s', async (_name, status, type) => {
    handler = (_req, res) => {
      res.writeHead(status, { 'content-type': type });
      endless(res, big(100));
    };
    const { fetch: f, drops } = bounded();
    const res = await post(f, request(1));
    expect(res.status).toBe(status);
    await expect(res.text()).rejects.toThrow();
    expect(drops).toEqual([`response body over maxResponseBytes (${LIMIT})`]);
  });
});

describe('text/event-stream responses', () => {
  const event = (data: string, extra = '') => `${extra}data: ${data}\n\n`;

  it('passes small events, comments and fields byte for byte', async () => {
    const body = `: keep-alive\n\nid: 1\nretry: 500\n${event(result(1))}event: endpoint\ndata: /messages?s=1\n\n:tail\n`;
    handler = sse(body);
    const { fetch: f, drops } = bounded();
    const res = await post(f, request(1));
    expect(res.headers.get('mcp-session-id')).toBe('sid-1');
    expect(await res.text()).toBe(body);
    expect(drops).toEqual([]);
  });

  it('replaces an oversized answer in the middle of a POST stream, keeping its id, and passes what follows', async () => {
    const before = event('{"jsonrpc":"2.0","method":"notifications/progress","params":{}}');
    const after = event('{"jsonrpc":"2.0","method":"notifications/message","params":{}}');
    handler = sse(before, 'id: ev-2\n', `data: ${result(5, big(LIMIT * 3))}\n`, '\n', after);
    const { fetch: f, drops } = bounded();
    const text = await (await post(f, request(5))).text();
    expect(text).toBe(`${before}id: ev-2\nevent: message\ndata: ${JSON.stringify(tooLarge(5))}\n\n${after}`);
    expect(drops).toEqual([`SSE event over maxResponseBytes (${LIMIT})`]);
  });

  it('answers the first unanswered request when the oversized event cannot be told apart', async () => {
    handler = sse(event(result(1)), event(big(LIMIT * 2)), event(big(LIMIT * 2)), event(big(LIMIT * 2)));
    const text = await (await post(bounded().fetch, [request(1), request(2)])).text();
    // 1 was answered by the first event, so the garbage stands for 2; after that nothing is pending.
    expect(text).toBe(`${event(result(1))}event: message\ndata: ${JSON.stringify(tooLarge(2))}\n\n`);
  });

  it('drops an oversized notification on a POST stream without failing the request', async () => {
    const notification = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { data: big(LIMIT * 2) } });
    handler = sse(event(notification), event(result(8)));
    const { fetch: f, drops } = bounded();
    expect(await (await post(f, request(8))).text()).toBe(event(result(8)));
    expect(drops).toHaveLength(1);
  });

  it('drops an oversized event on a GET stream and calls onDrop; later events arrive', async () => {
    const small = event('{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}');
    const huge = event(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { data: big(LIMIT * 5) } }));
    handler = sse(small, huge, small);
    const { fetch: f, drops } = bounded();
    const res = await f(base, { method: 'GET', headers: { accept: 'text/event-stream' } });
    expect(await res.text()).toBe(small + small);
    expect(drops).toEqual([`SSE event over maxResponseBytes (${LIMIT})`]);
  });

  it('answers an oversized response on a GET stream with an error for its own id (legacy SSE carries answers there)', async () => {
    handler = sse(event(result(41, big(LIMIT * 2))), event(big(LIMIT * 2)));
    const { fetch: f, drops } = bounded();
    const text = await (await f(base)).text();
    expect(text).toBe(`event: message\ndata: ${JSON.stringify(tooLarge(41))}\n\n`);
    expect(drops).toHaveLength(2);
  });

  it('takes the id from the oversized response itself, wherever the key sits and however it is escaped', async () => {
    const odd = `{"result":{"a":"\\"id\\": 3","id":4,"text":"${big(LIMIT)}"},"jsonrpc":"2.0", "id" : "r\\u0031"}`;
    handler = sse(event(odd));
    expect(await (await post(bounded().fetch, [request(9), request('r1')])).text()).toBe(`event: message\ndata: ${JSON.stringify(tooLarge('r1'))}\n\n`);
  });

  it('refuses an event nested deeper than maxDepth', async () => {
    const ok = event(result(2));
    handler = sse(event(deep(DEPTH + 1)), ok);
    const { fetch: f, drops } = bounded();
    expect(await (await post(f, request(1))).text()).toBe(`event: message\ndata: ${JSON.stringify(tooDeep(1))}\n\n${ok}`);
    expect(drops).toEqual([`SSE event nested deeper than maxDepth (${DEPTH})`]);
  });

  it('ignores events of other types for answers', async () => {
    handler = sse(`event: other\ndata: ${big(LIMIT * 2)}\n\n`, event(result(1)));
    const { fetch: f, drops } = bounded();
    expect(await (await post(f, request(1))).text()).toBe(event(result(1)));
    expect(drops).toHaveLength(1);
  });

  it.each([
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ])('keeps %s framing', async (_name, nl) => {
    const first = `id: 1${nl}data: ${result(1)}${nl}${nl}`;
    const last = `data: {"jsonrpc":"2.0","method":"notifications/message"}${nl}${nl}`;
    handler = sse(first, `id: 2${nl}data: ${big(LIMIT * 2)}${nl}${nl}`, last);
    const { fetch: f, drops } = bounded();
    expect(await (await post(f, [request(1), request(2)])).text()).toBe(`${first}id: 2\nevent: message\ndata: ${JSON.stringify(tooLarge(2))}\n\n${last}`);
    expect(drops).toHaveLength(1);
  });

  it('passes multi-line data unchanged and counts the answer it carries', async () => {
    const multi = 'data: {"jsonrpc":"2.0",\ndata:"id":1,\ndata: "result":{}}\n\n';
    handler = sse(multi, event(big(LIMIT * 2)));
    const { fetch: f, drops } = bounded();
    expect(await (await post(f, request(1))).text()).toBe(multi);
    expect(drops).toHaveLength(1); // the garbage was dropped, not taken for the answer to 1
  });

  it('cuts a comment line longer than the limit', async () => {
    handler = sse(`:${big(LIMIT * 3)}\n\n`, event(result(1)));
    const { fetch: f, drops } = bounded();
    expect(await (await post(f, request(1))).text()).toBe(`:${big(LIMIT - 1)}\n\n${event(result(1))}`);
    expect(drops).toHaveLength(1);
  });

  it('gives the same output whatever the chunking, down to one byte per chunk', async () => {
    const body = [
      '\uFEFF: hi\r\n\r\n',
      `id: é1\r\nevent: message\r\ndata: ${result(1, 'ü€')}\r\n\r\n`,
      `data: ${result(2, big(LIMIT))}\rid: 7\r\r`,
      `data: {"jsonrpc":"2.0",\ndata: "id":3,"result":{}}\n\n`,
      `data: ${deep(DEPTH + 1, 4)}\n\n`,
      'data: tail without end',
    ].join('');
    const bytes = new TextEncoder().encode(body);
    const split =
      (size: number): typeof fetch =>
      async () => {
        let at = 0;
        const stream = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (at >= bytes.length) return controller.close();
            controller.enqueue(bytes.slice(at, (at += size)));
          },
        });
        return new Response(stream, { headers: { 'content-type': 'text/event-stream' } });
      };
    const keepBom = new TextDecoder('utf-8', { ignoreBOM: true });
    const run = async (size: number) =>
      keepBom.decode(await (await post(bounded({ fetch: split(size) }).fetch, [request(1), request(2), request(4)])).arrayBuffer());
    const whole = await run(bytes.length);
    expect(whole).toBe(
      [
        '\uFEFF: hi\r\n\r\n',
        `id: é1\r\nevent: message\r\ndata: ${result(1, 'ü€')}\r\n\r\n`,
        `id: 7\nevent: message\ndata: ${JSON.stringify(tooLarge(2))}\n\n`,
        `data: {"jsonrpc":"2.0",\ndata: "id":3,"result":{}}\n\n`,
        `event: message\ndata: ${JSON.stringify(tooDeep(4))}\n\n`,
        'data: tail without end',
      ].join(''),
    );
    for (const size of [1, 2, 3, 7, 64]) expect(await run(size)).toBe(whole);
  });
});

describe('through the SDK client over Streamable HTTP', () => {
  const MB = 1024 * 1024;

  describe.each([
    ['SSE answers', false],
    ['JSON answers', true],
  ])('%s', (_name, enableJsonResponse) => {
    let upstream: HttpServer;
    let url: URL;

    beforeAll(async () => {
      const transports = new Map<string, StreamableHTTPServerTransport>();
      // eslint-disable-next-line @typescript-eslint/no-misused-promises -- a test server: a failure shows in the response the test reads
      upstream = createServer(async (req, res) => {
        const sessionId = req.headers['mcp-session-id'] as string | undefined;
        let transport = sessionId ? transports.get(sessionId) : undefined;
        if (!transport) {
          const created = new StreamableHTTPServerTransport({
            sessionIdGenerator: randomUUID,
            enableJsonResponse,
            onsessioninitialized: (id) => void transports.set(id, created),
          });
          const { server: mcp } = createUpstreamServer({
            read: (uri) => ({ contents: [{ uri, mimeType: 'text/plain', text: uri === 'test://big' ? big(2 * MB) : 'small' }] }),
          });
          await mcp.connect(created);
          transport = created;
        }
        await transport.handleRequest(req, res);
      });
      await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
      url = new URL(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`);
    });

    afterAll(async () => {
      upstream.closeAllConnections();
      await new Promise((resolve) => upstream.close(resolve));
    });

    it('fails an oversized read at once with -32603 and the limit, and the session keeps working', async () => {
      const drops: string[] = [];
      const transport = new StreamableHTTPClientTransport(url, {
        fetch: createBoundedFetch({ maxResponseBytes: MB, maxDepth: 1000, onDrop: (r) => drops.push(r) }),
      });
      const client = new Client({ name: 'bounded-test', version: '1.0.0' });
      await client.connect(transport);
      try {
        expect((await client.readResource({ uri: 'test://small' })).contents).toEqual([{ uri: 'test://small', mimeType: 'text/plain', text: 'small' }]);
        // A generous timeout: were the answer lost, the request would fail with -32001 instead.
        const error = await client.readResource({ uri: 'test://big' }, { timeout: 20_000 }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(McpError);
        expect((error as McpError).code).toBe(-32603);
        expect((error as McpError).data).toEqual({ limit: MB, [MARK_TOO_LARGE]: true });
        expect(drops).toHaveLength(1);
        expect((await client.readResource({ uri: 'test://small' })).contents[0]).toMatchObject({ text: 'small' });
      } finally {
        await client.close();
      }
    });
  });
});
