// The lean HTTP client transport against a real HTTP server sending crafted answers: bounds, broken and dripped streams, statuses.
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MARK_TOO_DEEP, MARK_TOO_LARGE } from '../../src/errors.js';
import { LeanHttpTransport } from '../../src/upstream/lean-http.js';
import { SseParser, type SseEvent } from '../../src/upstream/sse-parser.js';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

const LIMIT = 1024;
const DEPTH = 50;

let server: HttpServer;
let url: URL;
let handler: Handler = (_req, res) => res.end();
const seen: { method: string | undefined; headers: IncomingMessage['headers']; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method, headers: req.headers, body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const open: LeanHttpTransport[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((t) => t.close()));
  seen.length = 0;
});

/** A started transport with the test bounds, recording messages, errors and drops; `next()` waits for the next message. */
async function transport() {
  const t = new LeanHttpTransport(url, { headers: { 'X-Api-Key': 'k' }, maxResponseBytes: LIMIT, maxDepth: DEPTH, onDrop: (r) => drops.push(r) });
  open.push(t);
  const messages: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  const drops: string[] = [];
  let waiting: ((m: JSONRPCMessage) => void) | undefined;
  t.onmessage = (m) => {
    messages.push(m);
    waiting?.(m);
  };
  t.onerror = (e) => errors.push(e);
  await t.start();
  const next = () => new Promise<JSONRPCMessage>((resolve) => (waiting = resolve));
  return { t, messages, errors, drops, next };
}

const request = (id: number, method = 'resources/read') => ({ jsonrpc: '2.0' as const, id, method, params: { uri: 'x://y' } });
const result = (id: number, text = 'ok') => JSON.stringify({ jsonrpc: '2.0', id, result: { text } });
const tooLarge = (id: number) => ({
  jsonrpc: '2.0',
  id,
  error: { code: -32603, message: 'Upstream response too large', data: { limit: LIMIT, [MARK_TOO_LARGE]: true } },
});
const tooDeep = (id: number) => ({
  jsonrpc: '2.0',
  id,
  error: { code: -32603, message: 'Upstream response nested too deeply', data: { limit: DEPTH, [MARK_TOO_DEEP]: true } },
});
const sse = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream' });

describe('LeanHttpTransport', () => {
  it('posts JSON with the configured headers and hands a JSON answer to onmessage', async () => {
    handler = (_req, res, body) => {
      res.setHeader('content-type', 'application/json');
      res.end(result(JSON.parse(body).id));
    };
    const { t, next } = await transport();
    const answer = next();
    await t.send(request(1));
    expect(await answer).toEqual(JSON.parse(result(1)));
    expect(seen[0]?.headers).toMatchObject({ 'x-api-key': 'k', 'content-type': 'application/json', accept: 'application/json, text/event-stream' });
    expect(seen[0]?.headers['mcp-protocol-version']).toBeUndefined(); // no 2026 header on a 2025 exchange
  });

  it('keeps the session id of initialize and sends it, with the protocol version, afterwards (never on initialize)', async () => {
    handler = (_req, res, body) => {
      const m = JSON.parse(body);
      if (m.id === undefined) return void res.writeHead(202).end();
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's-1' }).end(result(m.id));
    };
    const { t, next } = await transport();
    let answer = next();
    await t.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: {} });
    await answer;
    t.setProtocolVersion('2025-11-25');
    answer = next();
    await t.send(request(1));
    await answer;
    expect(t.sessionId).toBe('s-1');
    expect(seen[0]?.headers['mcp-session-id']).toBeUndefined();
    expect(seen[1]?.headers).toMatchObject({ 'mcp-session-id': 's-1', 'mcp-protocol-version': '2025-11-25' });
  });

  it('refuses a JSON answer whose content-length is over the bound, without reading it, and keeps working', async () => {
    handler = (_req, res, body) => {
      const id = JSON.parse(body).id;
      if (id === 1) return void res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(LIMIT + 1) }).end(' '.repeat(LIMIT + 1));
      res.writeHead(200, { 'content-type': 'application/json' }).end(result(id));
    };
    const { t, next, drops } = await transport();
    let answer = next();
    await t.send(request(1));
    expect(await answer).toEqual(tooLarge(1));
    expect(drops).toEqual([`JSON response over maxResponseBytes (${LIMIT})`]);
    answer = next();
    await t.send(request(2));
    expect(await answer).toEqual(JSON.parse(result(2)));
  });

  it('refuses a chunked JSON answer once it passes the bound', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`{"jsonrpc":"2.0","id":1,"result":{"text":"`);
      res.write('x'.repeat(LIMIT));
      res.end('"}}');
    };
    const { t, next } = await transport();
    const answer = next();
    await t.send(request(1));
    expect(await answer).toEqual(tooLarge(1));
  });

  it('refuses an answer nested deeper than maxDepth', async () => {
    handler = (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(`{"jsonrpc":"2.0","id":1,"result":${'['.repeat(DEPTH + 1)}${']'.repeat(DEPTH + 1)}}`);
    const { t, next } = await transport();
    const answer = next();
    await t.send(request(1));
    expect(await answer).toEqual(tooDeep(1));
  });

  it('replaces an SSE event over the bound by an error for its own id, and passes the events around it', async () => {
    handler = (_req, res) => {
      sse(res);
      res.write(`data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"a"}}\n\n`);
      res.write(`data: {"jsonrpc":"2.0","id":7,"result":{"text":"${'x'.repeat(LIMIT)}"}}\n\n`);
      res.end(`data: ${result(1)}\n\n`);
    };
    const { t, messages, drops } = await transport();
    const ended = new Promise<void>((resolve) => void t.send(request(1), { onRequestStreamEnd: resolve }));
    await ended;
    expect(messages).toEqual([{ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'a' } }, tooLarge(7), JSON.parse(result(1))]);
    expect(drops).toEqual([`SSE event over maxResponseBytes (${LIMIT})`]);
  });

  it('answers the POST’s own request when a refused event does not show whose answer it is', async () => {
    handler = (_req, res) => {
      sse(res);
      res.end(`data: ${'['.repeat(LIMIT + 10)}\n\n`);
    };
    const { t, next } = await transport();
    const answer = next();
    await t.send(request(3));
    expect(await answer).toEqual(tooLarge(3));
  });

  it('reads an SSE answer dripped one byte at a time, with CRLF and CR line ends, a comment and a BOM', async () => {
    const text = `\uFEFF: hello\r\nevent: message\rid: e1\r\ndata: {"jsonrpc":"2.0",\r\ndata: "id":1,"result":{"text":"é"}}\r\n\r\n`;
    handler = (_req, res) => {
      sse(res);
      const bytes = Buffer.from(text, 'utf8');
      let i = 0;
      const drip = () => {
        if (i === bytes.length) return void res.end();
        res.write(bytes.subarray(i, ++i), () => setImmediate(drip));
      };
      drip();
    };
    const { t, next } = await transport();
    const answer = next();
    await t.send(request(1));
    expect(await answer).toEqual({ jsonrpc: '2.0', id: 1, result: { text: 'é' } });
  });

  it('survives a stream broken off mid-event: no message, the error reported, the stream’s end told, the next request served', async () => {
    handler = (_req, res, body) => {
      const id = JSON.parse(body).id;
      if (id === 2) return void res.writeHead(200, { 'content-type': 'application/json' }).end(result(2));
      sse(res);
      res.write(`data: {"jsonrpc":"2.0","id":1,"res`, () => res.socket?.destroy());
    };
    const { t, messages, errors, next } = await transport();
    await new Promise<void>((resolve) => void t.send(request(1), { onRequestStreamEnd: resolve }));
    expect(messages).toEqual([]);
    expect(errors.map((e) => e.message)).toContain('SSE stream disconnected');
    const answer = next();
    await t.send(request(2));
    expect(await answer).toEqual(JSON.parse(result(2)));
  });

  it('close() ends the requests in flight: one awaiting its headers, one reading its stream', async () => {
    const serverSawClose: Promise<void>[] = [];
    let arrived!: () => void;
    const bothArrived = new Promise<void>((resolve) => (arrived = resolve));
    handler = (req, res, body) => {
      serverSawClose.push(new Promise((resolve) => res.on('close', resolve)));
      if (JSON.parse(body).id === 1) {
        sse(res);
        res.write(': open\n\n');
      } // id 2: no answer at all
      if (serverSawClose.length === 2) arrived();
    };
    const { t, errors, messages } = await transport();
    let streamEnded = false;
    await t.send(request(1), { onRequestStreamEnd: () => (streamEnded = true) });
    const waiting = t.send(request(2));
    await bothArrived;
    await t.close();
    await expect(waiting).rejects.toMatchObject({ name: 'TypeError', message: 'fetch failed' });
    await Promise.all(serverSawClose);
    expect(streamEnded).toBe(false); // the transport's own close is no stream end
    expect(messages).toEqual([]);
    expect(errors.map((e) => e.message)).toEqual(['fetch failed']); // the awaited POST's failure, as before
  });

  it('rejects with the status on a 404 (a session the server no longer knows)', async () => {
    handler = (_req, res) => res.writeHead(404).end('Session not found');
    const { t, errors } = await transport();
    await expect(t.send(request(1))).rejects.toMatchObject({ status: 404, message: 'Error POSTing to endpoint: Session not found' });
    expect(errors).toHaveLength(1);
  });

  it('rejects as fetch does when the connection is refused', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const t = new LeanHttpTransport(new URL(`http://127.0.0.1:${port}/mcp`), { headers: {}, maxResponseBytes: LIMIT, maxDepth: DEPTH });
    open.push(t);
    await t.start();
    await expect(t.send(request(1))).rejects.toMatchObject({ name: 'TypeError', message: 'fetch failed' });
  });

  it('aborts a request when its signal fires, and close() ends what is open', async () => {
    let gone!: () => void;
    const serverSawClose = new Promise<void>((resolve) => (gone = resolve));
    handler = (_req, res) => {
      sse(res);
      res.write(': open\n\n');
      res.on('close', gone);
    };
    const { t, errors } = await transport();
    const controller = new AbortController();
    let streamEnded = false;
    await t.send(request(1), { requestSignal: controller.signal, onRequestStreamEnd: () => (streamEnded = true) });
    controller.abort();
    await serverSawClose;
    expect(streamEnded).toBe(false); // an intentional abort is no stream end
    expect(errors).toEqual([]);
    await expect(t.send(request(1), { requestSignal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    let closed = false;
    t.onclose = () => (closed = true);
    await t.close();
    await t.close();
    expect(closed).toBe(true);
    await expect(t.send(request(2))).rejects.toThrow('Not connected');
  });
});

describe('SseParser', () => {
  const stream = 'retry: 50\n: c\n\nevent: other\ndata: x\n\nid: 9\ndata: {"a":\ndata: 1}\n\ndata\n\nunterminated: yes\ndata: lost';
  const parse = (chunks: Buffer[], max = LIMIT) => {
    const events: SseEvent[] = [];
    const retries: number[] = [];
    const parser = new SseParser({ maxEventBytes: max, onEvent: (e) => events.push(e), onRetry: (ms) => retries.push(ms) });
    for (const c of chunks) parser.feed(c);
    return { events: events.map((e) => ({ ...e, data: e.data?.toString('utf8') })), retries };
  };

  it('gives the same events however the stream is split', () => {
    const bytes = Buffer.from(stream, 'utf8');
    const whole = parse([bytes]);
    expect(whole.events).toEqual([
      { type: 'other', id: undefined, data: 'x', overflow: undefined },
      { type: '', id: '9', data: '{"a":\n1}', overflow: undefined },
      { type: '', id: undefined, data: '', overflow: undefined },
    ]);
    expect(whole.retries).toEqual([50]);
    for (let cut = 1; cut < bytes.length; cut++) expect(parse([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual(whole);
  });

  it('holds no data past the bound, and sniffs whose answer the event was', () => {
    const { events } = parse([Buffer.from(`data: {"jsonrpc":"2.0","id":"q","result":"${'x'.repeat(100)}"}\n\n`)], 50);
    expect(events).toEqual([{ type: '', id: undefined, data: undefined, overflow: { kind: 'response', id: 'q' } }]);
  });
});
