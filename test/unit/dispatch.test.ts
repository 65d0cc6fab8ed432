// Dispatch: pinned to the SDK's Protocol internals; every bad request answered once; an upstream's bad answers fail only their request.
import { describe, expect, it } from 'vitest';
// Pinned to the SDK the proxy runs on (v2): its Protocol internals are what dispatch relies on.
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport, Server, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { guardedTail, deliverTo, installDispatch } from '../../src/wire/dispatch.js';
import { serverEdge } from '../../src/wire/server-edge.js';
import { MARK_TOO_LARGE } from '../../src/errors.js';
import type { Refusal } from '../../src/wire/line-transport.js';
import { counter, deferred } from '../helpers/gate.js';
import { RawClient } from '../helpers/raw-client.js';

function newServer() {
  const server = new Server({ name: 's', version: '1' }, { capabilities: { resources: { listChanged: true } } });
  server.setRequestHandler('resources/list', () => ({ resources: [{ uri: 'x://1', name: 'one' }] }));
  return server;
}

/** A Server with dispatch installed, spoken to by hand by a raw client: every message it sends back is kept, in order. */
async function rawServer() {
  const server = newServer();
  let serverSide!: Transport;
  const peer = await RawClient.memory(async (side) => {
    serverSide = side;
    await server.connect(side);
    installDispatch(server, side, 'server');
  });
  const replies = () => peer.lines.map((l) => l.parsed as Record<string, unknown>);
  const repliesUntil = (n: number) => peer.until(() => peer.lines.length >= n, `${n} replies`);
  return { server, serverSide, replies, repliesUntil, send: (m: unknown) => peer.send(m) };
}

describe('installDispatch', () => {
  it('works with the pinned SDK for servers and clients: requests and notifications flow', async () => {
    const server = newServer();
    const client = new Client({ name: 'c', version: '1' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    await client.connect(clientSide);
    installDispatch(server, serverSide, 'server');
    installDispatch(client, clientSide, 'client');
    expect((await client.listResources()).resources).toEqual([{ uri: 'x://1', name: 'one' }]);
    const heard = deferred();
    client.setNotificationHandler('notifications/resources/list_changed', () => heard.resolve());
    await server.sendResourceListChanged();
    await heard.promise;
  });

  it('server side: answers every bad envelope once, echoing a readable id; never answers responses or notifications', async () => {
    const s = await rawServer();
    const bad: [unknown, unknown][] = [
      [{ jsonrpc: '2.0', id: 7, method: 'resources/list', params: 5 }, 7],
      [{ jsonrpc: '2.0', id: 8, method: 'resources/list', params: [1] }, 8],
      [{ jsonrpc: '2.0', id: 9, method: 'resources/list', params: null }, 9],
      [{ jsonrpc: '1.0', id: 10, method: 'resources/list' }, 10],
      [{ id: 11, method: 'resources/list' }, 11],
      [{ jsonrpc: '2.0', id: 1.5, method: 'ping' }, 1.5],
      [{ jsonrpc: '2.0', id: 'x', method: 42 }, 'x'],
      [{ jsonrpc: '2.0', id: true, method: 'ping' }, null],
      [{ jsonrpc: '2.0', id: { a: 1 }, method: 'ping' }, null],
      [[{ jsonrpc: '2.0', id: 12, method: 'ping' }], null],
      [{ jsonrpc: '2.0', id: 13 }, 13],
      ['just a string', null],
    ];
    const ignored = [
      { jsonrpc: '2.0', id: 20, result: { any: 1 } }, // a response to nothing the server asked
      { jsonrpc: '2.0', id: 21, error: 'not an object' }, // response-shaped, malformed: logged, not answered
      { jsonrpc: '2.0', method: 'notifications/whatever' },
    ];
    for (const m of [...ignored, ...bad.map(([m]) => m)]) await s.send(m);
    await s.send({ jsonrpc: '2.0', id: 99, method: 'no/such/method' });
    await s.repliesUntil(bad.length + 1);
    const answers = s.replies().slice(0, bad.length);
    expect(answers.map((r) => r.id)).toEqual(bad.map(([, id]) => id));
    for (const r of answers) expect((r.error as { code: number }).code).toBe(-32600);
    expect(s.replies()[bad.length]).toMatchObject({ id: 99, error: { code: -32601 } });
    expect(s.replies()).toHaveLength(bad.length + 1);
  });

  it('server side: answers lines the transport refused (-32700 not JSON, -32600 too large / too deep with the limit)', async () => {
    const s = await rawServer();
    const refuse = (s.serverSide as unknown as { onrefused: (r: Refusal) => void }).onrefused;
    refuse({ reason: 'parse-error', id: null });
    refuse({ reason: 'too-large', id: 5, limit: 100 });
    refuse({ reason: 'too-deep', id: 'q', limit: 1000 });
    await s.repliesUntil(3);
    expect(s.replies()).toEqual([
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } },
      { jsonrpc: '2.0', id: 5, error: { code: -32600, message: 'Invalid Request: message exceeds 100 bytes', data: { limit: 100 } } },
      { jsonrpc: '2.0', id: 'q', error: { code: -32600, message: 'Invalid Request: message nests deeper than 1000 levels', data: { limit: 1000 } } },
    ]);
  });

  it('client side: a malformed or refused answer fails its own pending request at once; other requests are unaffected', async () => {
    const client = new Client({ name: 'c', version: '1' });
    const [clientSide, upstreamSide] = InMemoryTransport.createLinkedPair();
    // A hand-written upstream: answers initialize, then each request as the test says.
    const requests: { id: number; method: string }[] = [];
    const arrived = counter();
    upstreamSide.onmessage = (m) => {
      const r = m as unknown as { id?: number; method: string };
      if (r.method === 'initialize') {
        void upstreamSide.send({
          jsonrpc: '2.0',
          id: r.id!,
          result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'u', version: '1' } },
        });
      } else if (r.id !== undefined) {
        requests.push({ id: r.id, method: r.method });
        arrived.hit();
      }
    };
    await upstreamSide.start();
    await client.connect(clientSide);
    installDispatch(client, clientSide, 'client');
    const any = z.object({}).loose();
    const bad = client.request({ method: 'resources/list' }, any);
    const big = client.request({ method: 'resources/list' }, any);
    const good = client.request({ method: 'resources/list' }, any);
    await arrived.until(3);
    await upstreamSide.send({ jsonrpc: '2.0', id: requests[0]!.id, result: 'not an object' } as unknown as JSONRPCMessage);
    (clientSide as unknown as { onrefused: (r: Refusal) => void }).onrefused({ reason: 'too-large', id: requests[1]!.id, limit: 64 });
    await upstreamSide.send({ jsonrpc: '2.0', id: requests[2]!.id, result: { ok: true } });
    await expect(bad).rejects.toMatchObject({ code: -32603 });
    await expect(big).rejects.toMatchObject({ code: -32603, data: { limit: 64, [MARK_TOO_LARGE]: true } });
    await expect(good).resolves.toEqual({ ok: true });
  });

  it('client side: an oversized answer whose id cannot be read closes the connection (it reconnects)', async () => {
    const client = new Client({ name: 'c', version: '1' });
    const [clientSide, upstreamSide] = InMemoryTransport.createLinkedPair();
    upstreamSide.onmessage = (m) => {
      const r = m as unknown as { id: number; method: string };
      if (r.method === 'initialize') {
        void upstreamSide.send({
          jsonrpc: '2.0',
          id: r.id,
          result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'u', version: '1' } },
        });
      }
    };
    await upstreamSide.start();
    await client.connect(clientSide);
    installDispatch(client, clientSide, 'client');
    const closed = deferred();
    client.onclose = () => closed.resolve();
    (clientSide as unknown as { onrefused: (r: Refusal) => void }).onrefused({ reason: 'too-large', id: null, limit: 64 });
    await closed.promise;
  });

  it('throws when the Protocol lacks the internals it relies on', () => {
    const [t] = InMemoryTransport.createLinkedPair();
    expect(() => installDispatch({}, t, 'server')).toThrow(/_onrequest/);
  });

  it('a guarded connection classifies each message once: the guard answers bad envelopes, the Protocol behind its tail gets the kind', async () => {
    const server = newServer();
    const [peer, edge] = InMemoryTransport.createLinkedPair();
    const replies: Record<string, unknown>[] = [];
    const got = counter();
    peer.onmessage = (m) => {
      replies.push(m);
      got.hit();
    };
    await peer.start();
    const tail = guardedTail(
      (m, o) => edge.send(m, o),
      () => edge.close(),
    );
    edge.onmessage = serverEdge(edge, (m, o) => edge.send(m, o), deliverTo(tail)).onmessage;
    await edge.start();
    await server.connect(tail);
    installDispatch(server, tail, 'server');
    expect(tail.receive).toBeTypeOf('function');
    // Nothing reaches the tail's onmessage (the SDK's own dispatcher, or a second classifier): the kind goes to `receive`.
    const seen: unknown[] = [];
    tail.onmessage = (m) => void seen.push(m);
    await peer.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
    });
    await got.until(1);
    await peer.send({ jsonrpc: '2.0', id: 2, method: 'resources/list' });
    await peer.send({ jsonrpc: '2.0', id: 3, method: 'resources/list', params: 5 } as unknown as JSONRPCMessage);
    await got.until(3);
    const byId = (id: number) => replies.find((r) => r.id === id);
    expect(byId(2)).toEqual({ jsonrpc: '2.0', id: 2, result: { resources: [{ uri: 'x://1', name: 'one' }] } });
    expect(byId(3)).toMatchObject({ jsonrpc: '2.0', id: 3, error: { code: -32600, message: 'Invalid Request: "params" must be an object' } });
    expect(replies).toHaveLength(3);
    expect(seen).toEqual([]);
    await server.close();
  });
});

describe('installDispatch, client side: progress read in the same turn as its response', () => {
  it('reaches the request’s progress handler before the response ends the request', async () => {
    const client = new Client({ name: 'c', version: '1' });
    const [clientSide, peer] = InMemoryTransport.createLinkedPair();
    peer.onmessage = (m) => {
      const msg = m as { id?: number; method?: string; params?: { _meta?: { progressToken?: number } } };
      if (msg.method === 'initialize') {
        void peer.send({
          jsonrpc: '2.0',
          id: msg.id!,
          result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'raw', version: '1' } },
        });
      } else if (msg.method === 'tools/call') {
        const progressToken = msg.params?._meta?.progressToken;
        // Both in one synchronous turn, as when they are read from one chunk of a pipe.
        clientSide.onmessage?.({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: progressToken!, progress: 100, total: 100 } });
        clientSide.onmessage?.({ jsonrpc: '2.0', id: msg.id!, result: { content: [] } });
      }
    };
    await peer.start();
    await client.connect(clientSide);
    installDispatch(client, clientSide, 'client');
    const heard: number[] = [];
    const result = await client.request(
      { method: 'tools/call', params: { name: 't', arguments: {} } },
      z.looseObject({}) as never,
      {
        onprogress: (p: { progress: number }) => heard.push(p.progress),
      } as never,
    );
    expect(result).toEqual({ content: [] });
    expect(heard).toEqual([100]);
  });
});
