// In-process federation: several real upstream Servers behind one proxy, driven by real Clients.
import { describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CancelledNotificationSchema, ListResourcesRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { META_INCOMPLETE } from '../../src/protocol.js';
import { createUpstreamServer, newStats, richResource } from '../helpers/upstream-server.mjs';
import { startHarness } from '../helpers/harness.js';
import { rpcError } from '../helpers/rpc-error.js';
import { within } from '../helpers/gate.js';

const range = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i));

async function listAll(client: Client, kind: 'resources' | 'templates' = 'resources') {
  const items: Record<string, unknown>[] = [];
  const metas: unknown[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = kind === 'resources' ? await client.listResources(cursor ? { cursor } : {}) : await client.listResourceTemplates(cursor ? { cursor } : {});
    items.push(...((kind === 'resources' ? page.resources : page.resourceTemplates) as Record<string, unknown>[]));
    if (page._meta) metas.push(page._meta);
    cursor = page.nextCursor;
    pages++;
  } while (cursor && pages < 1000);
  return { items, metas, pages };
}

describe('merged lists', () => {
  it('merges colliding URIs in config order with every metadata field kept', async () => {
    const spec = { resources: [richResource('file:///a.md'), richResource('file:///b.md')] };
    await using h = await startHarness({
      upstreams: {
        zeta: () => createUpstreamServer(spec).server,
        alpha: () => createUpstreamServer(spec).server,
      },
    });
    const client = await h.client();
    const { items, metas } = await listAll(client);
    expect(items.map((r) => r.uri)).toEqual(['zeta+file:///a.md', 'zeta+file:///b.md', 'alpha+file:///a.md', 'alpha+file:///b.md']);
    const { uri: _u, ...meta } = richResource('file:///a.md');
    expect(items[2]).toEqual({ ...meta, uri: 'alpha+file:///a.md' });
    expect(metas).toEqual([]);
  });

  it('a finished list cancels nothing upstream: pages already answered are not "cancelled" when the walk stops', async () => {
    const cancels: unknown[] = [];
    const upstream = (prefix: string) => () => {
      const { server } = createUpstreamServer({ resources: range(120, (i) => `${prefix}://${i}`).map((uri) => ({ uri, name: uri })), pageSize: 10 });
      server.setNotificationHandler(CancelledNotificationSchema, (n) => void cancels.push(n.params));
      return server;
    };
    await using h = await startHarness({ upstreams: { a: upstream('a'), b: upstream('b') }, config: { list: { maxItemsPerPage: 50 } } });
    const client = await h.client();
    for (let round = 0; round < 3; round++) expect((await listAll(client)).items).toHaveLength(240);
    // A read after the lists: each upstream has handled everything the proxy sent it before.
    await client.readResource({ uri: 'a+a://0' });
    await client.readResource({ uri: 'b+b://0' });
    expect(cancels).toEqual([]);
  });

  it('walks every upstream’s own pages and never hands one upstream another’s cursor', async () => {
    const statsA = newStats();
    const statsB = newStats();
    await using h = await startHarness({
      upstreams: {
        a: () => createUpstreamServer({ resources: range(250, (i) => `a://${i}`).map((uri) => ({ uri, name: uri })), pageSize: 100 }, statsA).server,
        b: () => createUpstreamServer({ resources: range(30, (i) => `b://${i}`).map((uri) => ({ uri, name: uri })), pageSize: 7 }, statsB).server,
      },
      config: { list: { maxItemsPerPage: 50 } },
    });
    const client = await h.client();
    const { items, pages } = await listAll(client);
    expect(items.map((r) => r.uri)).toEqual([...range(250, (i) => `a+a://${i}`), ...range(30, (i) => `b+b://${i}`)]);
    expect(pages).toBeGreaterThanOrEqual(4);
    // Cursors issued by the upstream in-process Server carry its client name prefix "mcp-federate:".
    expect(statsA.cursorsSeen.every((c) => /^mcp-federate:(100|200)$/.test(c))).toBe(true);
    expect(statsB.cursorsSeen.every((c) => /^mcp-federate:\d+$/.test(c) && Number(c.split(':')[1]) % 7 === 0)).toBe(true);
  });

  it('merges templates and skips upstreams without templates/list silently', async () => {
    await using h = await startHarness({
      upstreams: {
        docs: () => createUpstreamServer({ templates: [{ uriTemplate: 'file:///{path}', name: 'file', title: 'Files' }] }).server,
        none: () => createUpstreamServer({ noTemplates: true }).server,
      },
    });
    const { items, metas } = await listAll(await h.client(), 'templates');
    expect(items).toEqual([{ uriTemplate: 'docs+file:///{path}', name: 'file', title: 'Files' }]);
    expect(metas).toEqual([]);
  });

  it('skips a failing upstream, reports it in _meta, and keeps the others', async () => {
    await using h = await startHarness({
      upstreams: {
        ok: () => createUpstreamServer({ resources: [richResource('x://1')] }).server,
        bad: () => createUpstreamServer({ failList: true }).server,
      },
    });
    const page = await (await h.client()).listResources();
    expect(page.resources.map((r) => r.uri)).toEqual(['ok+x://1']);
    expect(page._meta?.[META_INCOMPLETE]).toEqual([{ server: 'bad', reason: 'error' }]);
    expect(JSON.stringify(page)).not.toContain('secret detail');
  });

  it('bounds pages of an upstream that returns cursors forever', async () => {
    await using h = await startHarness({
      upstreams: { loop: () => createUpstreamServer({ endlessCursor: true }).server },
      config: { list: { maxPagesPerUpstream: 25 } },
    });
    const { items, metas } = await listAll(await h.client());
    expect(items).toHaveLength(25);
    expect(metas).toContainEqual({ [META_INCOMPLETE]: [{ server: 'loop', reason: 'page-limit' }] });
  });

  it('refuses a forged cursor and a cursor of the other list with -32602', async () => {
    await using h = await startHarness({
      upstreams: { a: () => createUpstreamServer({ resources: range(5, (i) => `a://${i}`).map((u) => richResource(u)), pageSize: 1 }).server },
      config: { list: { maxItemsPerPage: 1 } },
    });
    const client = await h.client();
    const first = await client.listResources();
    expect(first.nextCursor).toBeDefined();
    const forged = `${first.nextCursor!.slice(0, -2)}AA`;
    expect(await rpcError(client.listResources({ cursor: forged }))).toMatchObject({ code: -32602 });
    expect(await rpcError(client.listResourceTemplates({ cursor: first.nextCursor! }))).toMatchObject({ code: -32602 });
    expect(await rpcError(client.listResources({ cursor: 'mcp-federate:1' }))).toMatchObject({ code: -32602 });
  });

  it('keeps a cursor valid after its read-ahead was evicted by many abandoned walks', async () => {
    const statsA = newStats();
    await using h = await startHarness({
      upstreams: {
        a: () => createUpstreamServer({ resources: range(30, (i) => `a://${i}`).map((uri) => ({ uri, name: uri })), pageSize: 10 }, statsA).server,
      },
      config: { list: { maxItemsPerPage: 10 } },
    });
    const client = await h.client();
    const first = await client.listResources();
    for (let i = 0; i < 80; i++) await client.listResources(); // more abandoned walks than parked read-ahead is kept for
    const before = statsA.cursorsSeen.length;
    const second = await client.listResources({ cursor: first.nextCursor! });
    expect(second.resources.map((r) => r.uri)).toEqual(range(10, (i) => `a+a://${10 + i}`));
    expect(statsA.cursorsSeen.length).toBeGreaterThan(before); // redone from the cursor's own position
  });

  it('serves many downstream sessions over one upstream session', async () => {
    const stats = newStats();
    await using h = await startHarness({ upstreams: { a: () => createUpstreamServer({ resources: [richResource('a://1')] }, stats).server } });
    const clients = await Promise.all([h.client(), h.client(), h.client()]);
    const results = await Promise.all(clients.map((c) => c.readResource({ uri: 'a+a://1' })));
    expect(results.map((r) => r.contents[0]?.uri)).toEqual(['a+a://1', 'a+a://1', 'a+a://1']);
    expect(stats.initializes).toBe(1);
  });

  it('cancelling a list cancels the upstream page its walk waits for, with the reason an aborted walk gives; the next list is whole', async () => {
    const cancels: unknown[] = [];
    let cancelled!: () => void;
    const sawCancel = new Promise<void>((r) => (cancelled = r));
    let hung!: () => void;
    const hanging = new Promise<void>((r) => (hung = r));
    let calls = 0;
    await using h = await startHarness({
      upstreams: {
        quick: () => createUpstreamServer({ resources: range(3, (i) => `q://${i}`).map((uri) => ({ uri, name: uri })) }).server,
        stuck: () =>
          createUpstreamServer({
            resources: range(3, (i) => `s://${i}`).map((uri) => ({ uri, name: uri })),
            extend: (server) => {
              server.setNotificationHandler(CancelledNotificationSchema, (n) => {
                cancels.push(n.params);
                cancelled();
              });
              server.setRequestHandler(ListResourcesRequestSchema, () => {
                if (++calls > 1) return { resources: range(3, (i) => `s://${i}`).map((uri) => ({ uri, name: uri })) };
                hung();
                return new Promise(() => undefined); // the first page never comes
              });
            },
          }).server,
      },
    });
    const client = await h.client();
    const controller = new AbortController();
    const pending = client.listResources({}, { signal: controller.signal });
    await hanging;
    controller.abort();
    await expect(pending).rejects.toThrow();
    await within(sawCancel, 'the upstream page cancelled');
    expect(cancels).toEqual([{ requestId: expect.any(Number), reason: 'AbortError: This operation was aborted' }]);
    expect((await listAll(client)).items.map((r) => r.uri)).toEqual([...range(3, (i) => `quick+q://${i}`), ...range(3, (i) => `stuck+s://${i}`)]);
  });
});

describe('reads', () => {
  it('routes to the owner and rewrites contents[].uri; text and blob pass through intact', async () => {
    const blob = Buffer.from([0, 1, 2, 255, 254]).toString('base64');
    const read = (uri: string) => ({
      contents: [
        { uri, mimeType: 'text/plain', text: 'héllo\n\u0000wörld', _meta: { k: 1 } },
        { uri: `${uri}#bin`, mimeType: 'application/octet-stream', blob },
      ],
    });
    await using h = await startHarness({
      upstreams: { one: () => createUpstreamServer({ read }).server, two: () => createUpstreamServer({ read }).server },
    });
    const res = await (await h.client()).readResource({ uri: 'two+file:///a.md' });
    expect(res.contents).toEqual([
      { uri: 'two+file:///a.md', mimeType: 'text/plain', text: 'héllo\n\u0000wörld', _meta: { k: 1 } },
      { uri: 'two+file:///a.md#bin', mimeType: 'application/octet-stream', blob },
    ]);
  });

  it('namespaces URIs that already look namespaced: an upstream cannot speak for another', async () => {
    await using h = await startHarness({
      upstreams: {
        other: () => createUpstreamServer({ resources: [richResource('file:///secret')] }).server,
        evil: () => createUpstreamServer({ resources: [richResource('other+file:///secret')] }).server,
      },
    });
    const client = await h.client();
    const { items } = await listAll(client);
    expect(items.map((r) => r.uri)).toEqual(['other+file:///secret', 'evil+other+file:///secret']);
    const res = await client.readResource({ uri: 'evil+other+file:///secret' });
    expect(res.contents[0]?.uri).toBe('evil+other+file:///secret');
  });

  it.each([
    ['unknown server id', 'nope+file:///a.md'],
    ['no namespace', 'file:///a.md'],
    ['empty upstream part', 'good+'],
    ['upstream answers -32002', 'good+file:///missing'],
    ['upstream answers -32602', 'good+legacy://missing'],
    ['upstream not connected', 'broken+file:///a.md'],
  ])('%s: -32002 "Resource not found" with the client’s URI', async (_name, uri) => {
    await using h = await startHarness({
      upstreams: {
        good: () =>
          createUpstreamServer({
            read: (u) => {
              throw new McpError(u.startsWith('legacy') ? -32602 : -32002, 'nope');
            },
          }).server,
        broken: () => {
          throw new Error('spawn failed');
        },
      },
    });
    const err = await rpcError((await h.client()).readResource({ uri }));
    expect(err).toEqual({ code: -32002, message: 'MCP error -32002: Resource not found', data: { uri } });
  });

  it('an upstream internal failure is -32603 with a generic message; details only in the log', async () => {
    await using h = await startHarness({
      upstreams: {
        a: () =>
          createUpstreamServer({
            read: () => {
              throw new Error('db password is hunter2');
            },
          }).server,
      },
    });
    const err = await rpcError((await h.client()).readResource({ uri: 'a+x://1' }));
    expect(err).toEqual({ code: -32603, message: 'MCP error -32603: Internal error', data: undefined });
    expect(h.logs.some((l) => l.msg === 'request failed' && l.level === 40)).toBe(true);
  });

  it('cancelling the downstream request cancels the upstream request (uncached upstream)', async () => {
    let upstreamAborted!: () => void;
    const aborted = new Promise<void>((r) => (upstreamAborted = r));
    let started!: () => void;
    const began = new Promise<void>((r) => (started = r));
    await using h = await startHarness({
      upstreams: {
        slow: () =>
          createUpstreamServer({
            read: (_uri, signal) =>
              new Promise(() => {
                signal.addEventListener('abort', () => upstreamAborted());
                started();
              }),
          }).server,
      },
      serverFields: { slow: { cache: false } },
    });
    const controller = new AbortController();
    const pending = (await h.client()).readResource({ uri: 'slow+x://1' }, { signal: controller.signal });
    await began;
    controller.abort();
    await expect(pending).rejects.toThrow();
    await aborted; // resolves only if the upstream saw notifications/cancelled
  });

  it('bounds in-flight requests per upstream by its concurrency', async () => {
    let inFlight = 0;
    let peak = 0;
    const gates: (() => void)[] = [];
    let arrived!: () => void;
    let arrivals = new Promise<void>((r) => (arrived = r));
    await using h = await startHarness({
      upstreams: {
        a: () =>
          createUpstreamServer({
            read: (uri) =>
              new Promise((resolve) => {
                inFlight++;
                peak = Math.max(peak, inFlight);
                gates.push(() => {
                  inFlight--;
                  resolve({ contents: [{ uri, text: 'x' }] });
                });
                arrived();
              }),
          }).server,
      },
      serverFields: { a: { concurrency: 2 } },
    });
    const client = await h.client();
    const reads = range(6, (i) => `a+x://${i}`).map((uri) => client.readResource({ uri }));
    let done = 0;
    while (done < 6) {
      while (gates.length < Math.min(2, 6 - done)) {
        await arrivals;
        arrivals = new Promise<void>((r) => (arrived = r));
      }
      expect(inFlight).toBeLessThanOrEqual(2);
      gates.shift()!();
      done++;
    }
    await Promise.all(reads);
    expect(peak).toBe(2);
  });
});

describe('invalid params', () => {
  it.each([
    ['resources/read', undefined, /^Invalid params: (params|uri): /],
    ['resources/read', { uri: 123 }, /^Invalid params: uri: expected string, received number$/],
    ['resources/list', { cursor: 1 }, /^Invalid params: cursor: /],
    ['resources/subscribe', {}, /^Invalid params: uri: /],
    ['completion/complete', { ref: { type: 'ref/resource' }, argument: { name: 'a', value: '' } }, /^Invalid params: ref/],
    ['initialize', { protocolVersion: 5 }, /^Invalid params: /],
  ])('%s %j: -32602 with one line naming the field, never a zod dump', async (method, params, message) => {
    await using h = await startHarness({ upstreams: { a: () => createUpstreamServer({}).server } });
    const c = await h.client();
    const err = await rpcError(c.request({ method, ...(params ? { params } : {}) }, z.object({}).loose()));
    expect(err.code).toBe(-32602);
    const text = err.message.replace(/^MCP error -32602: /, '');
    expect(text).toMatch(message);
    expect(text).not.toMatch(/\n/);
    expect(text.length).toBeLessThan(200);
  });
});

describe('completion', () => {
  it('routes by namespaced template, with the upstream’s own template string', async () => {
    const seen: unknown[] = [];
    await using h = await startHarness({
      upstreams: {
        docs: () =>
          createUpstreamServer({
            templates: [{ uriTemplate: 'file:///{path}', name: 'f' }],
            complete: (p) => {
              seen.push(p.ref.uri);
              return ['a.md', 'b.md'].filter((v) => v.startsWith(p.argument.value));
            },
          }).server,
        plain: () => createUpstreamServer({}).server,
      },
    });
    const client = await h.client();
    const res = await client.complete({ ref: { type: 'ref/resource', uri: 'docs+file:///{path}' }, argument: { name: 'path', value: 'a' } });
    expect(res.completion.values).toEqual(['a.md']);
    expect(seen).toEqual(['file:///{path}']);
    const none = await client.complete({ ref: { type: 'ref/resource', uri: 'plain+x://{y}' }, argument: { name: 'y', value: '' } });
    expect(none.completion.values).toEqual([]);
    const err = await rpcError(client.complete({ ref: { type: 'ref/resource', uri: 'nope+x://{y}' }, argument: { name: 'y', value: '' } }));
    expect(err).toMatchObject({ code: -32002, data: { uri: 'nope+x://{y}' } });
    const prompt = await rpcError(client.complete({ ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'y', value: '' } }));
    expect(prompt.code).toBe(-32602);
  });
});
