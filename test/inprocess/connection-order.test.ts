// The order of each kind of connection's wrappers, as composed in its one place: an HTTP session (real HTTP on 127.0.0.1) and an upstream client (real SDK Client and Server).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport, Server, type JSONRPCMessage } from '@modelcontextprotocol/server';
import { composeHttpSession, SESSION_WRAPPERS } from '../../src/serve/http/session-connection.js';
import { composeUpstream, type FastAnswer } from '../../src/upstream/connection.js';
import type { ClassifiedHandler, Send, Wrapper } from '../../src/wire/compose.js';
import { installDispatch, type GuardedTail } from '../../src/wire/dispatch.js';
import { JsonRpc } from '../../src/errors.js';
import { counter, deferred, within } from '../helpers/gate.js';

const ACCEPT = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

/** A session composed with tracing wrappers around a real SDK Server, behind real HTTP. */
async function tracedSession() {
  const trace: string[] = [];
  const inbound =
    (name: string): Wrapper<ClassifiedHandler> =>
    (next) =>
    (message, kind, extra) => {
      trace.push(`in ${name}: ${kind} ${(message as { method?: string }).method ?? 'answer'}`);
      next(message, kind, extra);
    };
  const outbound =
    (name: string): Wrapper<Send> =>
    (next) =>
    (message, options) => {
      trace.push(`out ${name}: ${(message as { method?: string }).method ?? 'answer'}`);
      return next(message, options);
    };
  const closed = deferred();
  const { transport, tail } = composeHttpSession(
    'session-1',
    { maxQueuedBytes: 1 << 20, keepAliveMs: 60_000, onClosed: () => trace.push('transport closed') },
    { inbound: [inbound('first'), inbound('second')], outbound: [outbound('first'), outbound('second')] },
  );
  const server = new Server({ name: 's', version: '1' }, { capabilities: { resources: {} } });
  server.setRequestHandler('resources/list', () => {
    trace.push('server');
    return { resources: [] };
  });
  server.onclose = () => {
    trace.push('server closed');
    closed.resolve();
  };
  // As the facade's connect does: the Protocol is plugged into the guarded tail.
  await server.connect(tail);
  installDispatch(server, tail, 'server');
  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      transport.handle(req, res, text === '' ? undefined : (JSON.parse(text) as unknown), text);
    });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  const post = async (body: unknown) => {
    const res = await fetch(url, { method: 'POST', headers: ACCEPT, body: JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>) };
  };
  return {
    trace,
    tail: tail as GuardedTail,
    transport,
    closed: closed.promise,
    post,
    async [Symbol.asyncDispose]() {
      await transport.close();
      await new Promise((r) => http.close(r));
    },
  };
}

describe('an HTTP session (composeHttpSession)', () => {
  it('In: the transport classifies once, the inbound wrappers in list order, then the Server. Out: the outbound wrappers in list order, then the wire', async () => {
    await using s = await tracedSession();
    // The Server's dispatch is plugged behind the composed edge: it is handed the kind, and classifies nothing again.
    expect(s.tail.receive).toBeTypeOf('function');
    const init = await s.post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
    });
    expect(init.status).toBe(200);
    expect(init.body).toMatchObject({ id: 1, result: { serverInfo: { name: 's' } } });
    expect((await s.post({ jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
    s.trace.length = 0;
    const list = await s.post({ jsonrpc: '2.0', id: 2, method: 'resources/list' });
    expect(list).toEqual({ status: 200, body: { jsonrpc: '2.0', id: 2, result: { resources: [] } } });
    expect(s.trace).toEqual(['in first: request resources/list', 'in second: request resources/list', 'server', 'out first: answer', 'out second: answer']);
  });

  it('a malformed message is answered by the edge and meets no wrapper; a notification meets them with its kind', async () => {
    await using s = await tracedSession();
    const bad = await s.post({ jsonrpc: '2.0', id: 9, method: 5 });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ id: 9, error: { code: JsonRpc.INVALID_REQUEST } });
    expect(s.trace).toEqual([]);
    expect((await s.post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 77 } })).status).toBe(202);
    expect(s.trace).toEqual(['in first: notification notifications/cancelled', 'in second: notification notifications/cancelled']);
  });

  it('a close of the transport reaches the Server after the endpoint is told; a close of the Server closes the transport', async () => {
    await using s = await tracedSession();
    await s.transport.close();
    await within(s.closed, 'the Server to close');
    expect(s.trace).toEqual(['transport closed', 'server closed']);
    await using t = await tracedSession();
    await t.tail.close();
    await within(t.closed, 'the Server to close');
    expect(t.trace).toEqual(['transport closed', 'server closed']);
  });

  it('is composed today with no wrappers between its edge and its Server', () => {
    expect(SESSION_WRAPPERS).toEqual({ inbound: [], outbound: [] });
  });
});

/** A real SDK Client connected to a real SDK Server, composed as an upstream connection is; the Server side can also write raw messages. */
async function composedUpstream() {
  const server = new Server({ name: 'up', version: '1' }, { capabilities: { resources: {} } });
  server.setRequestHandler('resources/list', () => ({ resources: [{ uri: 'x://1', name: 'one' }] }));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'gw', version: '1' });
  await client.connect(clientSide);
  const fast: FastAnswer[] = [];
  const fastHeard = counter();
  const errors: string[] = [];
  const errorHeard = counter();
  const progress: unknown[] = [];
  const progressHeard = counter();
  composeUpstream(client, clientSide, {
    fastAnswer: (answer) => {
      fast.push(answer);
      fastHeard.hit();
    },
    fastProgress: (params) => {
      progress.push(params);
      progressHeard.hit();
    },
  });
  client.onerror = (err) => {
    errors.push(err.message);
    errorHeard.hit();
  };
  const raw = (message: unknown) => serverSide.send(message as JSONRPCMessage);
  return { client, server, fast, fastHeard, progress, progressHeard, errors, errorHeard, raw };
}

describe('an upstream connection (composeUpstream)', () => {
  it('In: the classification, then the fast answers (negative ids), then the SDK Client', async () => {
    const u = await composedUpstream();
    // A fast-path answer is taken out before the Client: the Client never hears of it.
    await u.raw({ jsonrpc: '2.0', id: -3, result: { ok: true } });
    await within(u.fastHeard.until(1), 'the fast answer');
    expect(u.fast).toEqual([{ jsonrpc: '2.0', id: -3, result: { ok: true } }]);
    // A malformed answer is classified first: the error answer standing in for it goes through the fast answers.
    await u.raw({ jsonrpc: '2.0', id: -4, result: 5 });
    await within(u.fastHeard.until(2), 'the error answer');
    expect(u.fast[1]).toMatchObject({ id: -4, error: { code: JsonRpc.INTERNAL_ERROR, message: 'Invalid response from upstream' } });
    // An answer with an id the Client could have issued passes the fast answers on to the Client.
    await u.raw({ jsonrpc: '2.0', id: 999, result: {} });
    await within(u.errorHeard.until(1), "the Client's report of an unknown id");
    expect(u.errors).toHaveLength(1);
    expect(u.fast).toHaveLength(2);
    // And the Client's own requests are answered through the same chain.
    expect((await u.client.listResources()).resources).toEqual([{ uri: 'x://1', name: 'one' }]);
    expect(u.fast).toHaveLength(2);
    await u.client.close();
  });

  it("In: a long fast-path call's progress (a negative token) is taken out before its answer; other progress goes on to the Client", async () => {
    const u = await composedUpstream();
    // Progress and the answer in one turn: the progress is taken first, then the answer.
    void u.raw({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: -7, progress: 1 } });
    void u.raw({ jsonrpc: '2.0', id: -7, result: { content: [] } });
    await within(u.fastHeard.until(1), 'the fast answer');
    expect(u.progress).toEqual([{ progressToken: -7, progress: 1 }]);
    // A token the Client issued (non-negative) is the Client's: it reports one it does not know.
    await u.raw({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 5, progress: 1 } });
    await within(u.errorHeard.until(1), "the Client's report of an unknown token");
    expect(u.errors[0]).toMatch(/unknown token/);
    expect(u.progress).toHaveLength(1);
    await u.client.close();
  });
});
