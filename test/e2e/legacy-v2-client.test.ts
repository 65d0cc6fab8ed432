// A 2025-11-25 client on SDK v2 (legacy negotiation) through the built CLI, over stdio and over Streamable HTTP, beside one on SDK v1: the 2025 path driven by both SDKs.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as V2Client, ResourceNotFoundError, StreamableHTTPClientTransport as V2HttpTransport } from '@modelcontextprotocol/client';
import { ROOT, upstreams } from '../helpers/built-cli.js';
import { listAll, notFound } from '../helpers/catalog.js';
import { within } from '../helpers/gate.js';
import { HttpGatewayProcess } from '../helpers/http-gateway.js';
import { rpcError } from '../helpers/rpc-error.js';
import { ProxyProcess, V2Proxy } from '../helpers/sdk-clients.js';
import { TempDir } from '../helpers/temp-dir.js';

const MODERN = path.join(ROOT, 'test', 'fixtures', 'modern-server.mjs');

const CONFIG = {
  servers: {
    legacy: { ...upstreams.fixture('--resources', '3', '--subscribe'), protocol: '2025-11-25' },
    modern: { command: process.execPath, args: [MODERN], protocol: '2026-07-28' },
  },
  subscriptions: { coalesceMs: 0 },
  list: { maxItemsPerPage: 4 },
};

describe('a 2025-11-25 client on SDK v2', () => {
  let v2: V2Proxy;
  let v1: ProxyProcess;
  beforeAll(async () => {
    [v2, v1] = await Promise.all([new V2Proxy(CONFIG, 'legacy').start(), ProxyProcess.start(CONFIG)]);
  });
  afterAll(async () => {
    await Promise.all([v2?.[Symbol.asyncDispose](), v1?.[Symbol.asyncDispose]()]);
  });

  it('is served 2025-11-25 (initialize, no server/discover), as the SDK v1 client is', () => {
    expect(v2.client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
    expect(v2.client.getServerVersion()?.name).toBe('mcp-federate');
    expect(v1.client.getServerVersion()?.name).toBe('mcp-federate');
  });

  it('lists the same merged catalog as the SDK v1 client, aggregated and page by page, with no 2026 fields', async () => {
    const v1List = await listAll(v1.client);
    const v1Uris = v1List.items.map((r) => r.uri);
    expect(v1Uris).toEqual(expect.arrayContaining(['legacy+fixture://res/0', 'modern+modern://doc/1']));
    // SDK v2 walks every page itself when no cursor is given...
    expect((await v2.client.listResources()).resources.map((r) => r.uri)).toEqual(v1Uris);
    // ...and a raw walk shows the pages as the proxy sent them.
    const pages: Record<string, unknown>[] = [];
    let cursor: string | undefined;
    do {
      const page = await v2.raw('resources/list', cursor === undefined ? {} : { cursor });
      pages.push(page);
      cursor = page.nextCursor as string | undefined;
    } while (cursor !== undefined && pages.length < 20);
    expect(pages.length).toBeGreaterThan(1);
    expect(pages.flatMap((p) => (p.resources as { uri: string }[]).map((r) => r.uri))).toEqual(v1Uris);
    for (const page of pages) {
      expect(page).not.toHaveProperty('ttlMs');
      expect(page).not.toHaveProperty('cacheScope');
    }
  });

  it('reads what the SDK v1 client reads, from upstreams of either era', async () => {
    for (const uri of ['legacy+fixture://res/1', 'modern+modern://doc/1']) {
      const [a, b] = await Promise.all([v2.client.readResource({ uri }), v1.client.readResource({ uri })]);
      expect(a.contents).toEqual(b.contents);
      expect(a.contents).toEqual([expect.objectContaining({ uri })]);
      expect(a).not.toHaveProperty('ttlMs');
    }
  });

  it('lists templates and completes template arguments as the SDK v1 client does', async () => {
    const [a, b] = await Promise.all([v2.client.listResourceTemplates(), v1.client.listResourceTemplates()]);
    expect(a.resourceTemplates).toEqual(b.resourceTemplates);
    expect(a.resourceTemplates.map((t) => t.uriTemplate)).toContain('legacy+fixture://item/{category}/{id}');
    const params = { ref: { type: 'ref/resource' as const, uri: 'legacy+fixture://item/{category}/{id}' }, argument: { name: 'category', value: 'b' } };
    const [c, d] = await Promise.all([v2.client.complete(params), v1.client.complete(params)]);
    expect(c.completion).toEqual(d.completion);
    expect(c.completion.values).toEqual(['beta']);
  });

  it('not found is -32002 with data.uri on the wire, as to the SDK v1 client, which SDK v2 surfaces as ResourceNotFoundError', async () => {
    const wire: { error?: { code: number; data?: unknown } }[] = [];
    const deliver = v2.transport.onmessage!;
    v2.transport.onmessage = (message) => {
      wire.push(message as never);
      deliver(message);
    };
    try {
      for (const uri of ['legacy+fixture://nope', 'modern+modern://nope', 'nobody+x://y', 'no-namespace']) {
        const e = await v2.client.readResource({ uri }).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(e).toBeInstanceOf(ResourceNotFoundError);
        expect((e as ResourceNotFoundError).uri).toBe(uri);
        expect(wire.at(-1)?.error).toMatchObject({ code: -32002, data: { uri } });
        expect(await rpcError(v1.client.readResource({ uri }))).toEqual(notFound(uri));
      }
    } finally {
      v2.transport.onmessage = deliver;
    }
  });

  it('subscribes and gets notifications/resources/updated, from a 2025 upstream’s subscribe and bridged from a 2026 upstream’s listen', async () => {
    const waiters = new Map<string, () => void>();
    v2.client.setNotificationHandler('notifications/resources/updated', (n) => waiters.get(n.params.uri)?.());
    for (const [uri, control] of [
      ['legacy+fixture://ticker', 'legacy+fixture://control/tick?n=1'],
      ['modern+modern://ticker', 'modern+modern://control/tick'],
    ] as const) {
      await v2.client.subscribeResource({ uri });
      const arrived = new Promise<void>((resolve) => waiters.set(uri, resolve));
      await v2.client.readResource({ uri: control });
      await within(arrived, `the update of ${uri}`);
      await v2.client.unsubscribeResource({ uri });
    }
  });
});

describe('a 2025-11-25 client on SDK v2 over Streamable HTTP, beside one on SDK v1', () => {
  let g: HttpGatewayProcess;
  let v1: Client;
  let v2: V2Client;
  let v2Transport: V2HttpTransport;
  const dir = new TempDir();
  beforeAll(async () => {
    g = await HttpGatewayProcess.serve(dir.writeConfig(CONFIG));
    await within(g.started, 'the upstreams to start');
    v1 = new Client({ name: 'legacy-http-v1', version: '1.0.0' });
    await v1.connect(new StreamableHTTPClientTransport(g.url));
    v2 = new V2Client({ name: 'legacy-http-v2', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
    v2Transport = new V2HttpTransport(g.url);
    await v2.connect(v2Transport);
  });
  afterAll(async () => {
    await Promise.allSettled([v1?.close(), v2?.close()]);
    await g?.[Symbol.asyncDispose]();
    dir[Symbol.dispose]();
  });

  it('is served 2025-11-25 on a session of its own (initialize, mcp-session-id)', () => {
    expect(v2.getNegotiatedProtocolVersion()).toBe('2025-11-25');
    expect(v2.getServerVersion()?.name).toBe('mcp-federate');
    expect(v2Transport.sessionId).toEqual(expect.any(String));
  });

  it('lists and reads what the SDK v1 client lists and reads, with no 2026 fields', async () => {
    const v1Uris = (await listAll(v1)).items.map((r) => r.uri);
    expect(v1Uris).toEqual(expect.arrayContaining(['legacy+fixture://res/0', 'modern+modern://doc/1']));
    expect((await v2.listResources()).resources.map((r) => r.uri)).toEqual(v1Uris);
    for (const uri of ['legacy+fixture://res/1', 'modern+modern://doc/1']) {
      const [a, b] = await Promise.all([v2.readResource({ uri }), v1.readResource({ uri })]);
      expect(a.contents).toEqual(b.contents);
      expect(a.contents).toEqual([expect.objectContaining({ uri })]);
      expect(a).not.toHaveProperty('ttlMs');
    }
  });

  it('not found is -32002 with data.uri on the wire, as to the SDK v1 client, which SDK v2 surfaces as ResourceNotFoundError', async () => {
    const wire: { error?: { code: number; data?: unknown } }[] = [];
    const deliver = v2Transport.onmessage!;
    v2Transport.onmessage = (message) => {
      wire.push(message as never);
      deliver(message);
    };
    try {
      for (const uri of ['legacy+fixture://nope', 'modern+modern://nope', 'nobody+x://y']) {
        const e = await v2.readResource({ uri }).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(e).toBeInstanceOf(ResourceNotFoundError);
        expect((e as ResourceNotFoundError).uri).toBe(uri);
        expect(wire.at(-1)?.error).toMatchObject({ code: -32002, data: { uri } });
        expect(await rpcError(v1.readResource({ uri }))).toEqual(notFound(uri));
      }
    } finally {
      v2Transport.onmessage = deliver;
    }
  });

  it('subscribes and gets notifications/resources/updated on its GET stream, from both upstream eras', async () => {
    const waiters = new Map<string, () => void>();
    v2.setNotificationHandler('notifications/resources/updated', (n) => waiters.get(n.params.uri)?.());
    for (const [uri, control] of [
      ['legacy+fixture://ticker', 'legacy+fixture://control/tick?n=2'],
      ['modern+modern://ticker', 'modern+modern://control/tick'],
    ] as const) {
      await v2.subscribeResource({ uri });
      const arrived = new Promise<void>((resolve) => waiters.set(uri, resolve));
      await v1.readResource({ uri: control });
      await within(arrived, `the update of ${uri}`);
      await v2.unsubscribeResource({ uri });
    }
  });
});
