// A 2026-07-28 client (SDK v2, auto negotiation) through the built CLI, beside a 2025 one, over upstreams of both eras.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ROOT, upstreams } from '../helpers/built-cli.js';
import { notFound } from '../helpers/catalog.js';
import { within } from '../helpers/gate.js';
import { RemoteFixture } from '../helpers/remote-fixture.js';
import { rpcError } from '../helpers/rpc-error.js';
import { ProxyProcess, V2Proxy } from '../helpers/sdk-clients.js';

const MODERN = path.join(ROOT, 'test', 'fixtures', 'modern-server.mjs');

const CONFIG = {
  servers: {
    modern: { command: process.execPath, args: [MODERN], protocol: '2026-07-28' },
    legacy: { ...upstreams.fixture('--resources', '3', '--subscribe'), protocol: '2025-11-25' },
    polled: upstreams.fixture('--resources', '2', '--prefix', 'polled://res/'),
  },
  subscriptions: { pollIntervalMs: 100, coalesceMs: 0 },
  list: { maxItemsPerPage: 4 },
};

type Page = Record<string, unknown> & { resources: { uri: string }[]; nextCursor?: string; ttlMs: number; cacheScope: string };

async function pages(p: V2Proxy): Promise<Page[]> {
  const out: Page[] = [];
  let cursor: string | undefined;
  do {
    const page = (await p.raw('resources/list', cursor === undefined ? {} : { cursor })) as Page;
    out.push(page);
    cursor = page.nextCursor;
  } while (cursor !== undefined && out.length < 20);
  return out;
}

describe('a 2026-07-28 client', () => {
  let modern: V2Proxy;
  let legacy: ProxyProcess;
  beforeAll(async () => {
    [modern, legacy] = await Promise.all([new V2Proxy(CONFIG).start(), ProxyProcess.start(CONFIG)]);
  });
  afterAll(async () => {
    await Promise.all([modern?.[Symbol.asyncDispose](), legacy?.[Symbol.asyncDispose]()]);
  });

  it('is served in 2026-07-28 (server/discover), the 2025 client in 2025-11-25, by the same CLI and config', () => {
    expect(modern.client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect(legacy.client.getServerVersion()?.name).toBe('mcp-federate');
  });

  it('lists the same merged catalog as the 2025 client, page by page, each page with one honest hint', async () => {
    const modernPages = await pages(modern);
    const legacyUris: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await legacy.client.listResources(cursor === undefined ? {} : { cursor });
      legacyUris.push(...page.resources.map((r) => r.uri));
      expect(page).not.toHaveProperty('ttlMs'); // 2025 answers carry no 2026 fields
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(modernPages.length).toBeGreaterThan(1);
    expect(modernPages.flatMap((p) => p.resources.map((r) => r.uri))).toEqual(legacyUris);
    expect(legacyUris).toEqual(expect.arrayContaining(['modern+modern://doc/1', 'legacy+fixture://res/0', 'polled+polled://res/1']));
    // One scope for the whole list: private, because the 2025 parts give no basis for sharing. The TTL
    // is per page: the minimum of its parts (the modern upstream hints 1 s; a 2025 part, nothing).
    for (const page of modernPages) {
      expect(page.cacheScope).toBe('private');
      const onlyModern = page.resources.every((r) => r.uri.startsWith('modern+'));
      if (onlyModern) expect(page.ttlMs).toBeGreaterThan(0);
      else expect(page.ttlMs).toBe(0);
      expect(page.ttlMs).toBeLessThanOrEqual(1000);
    }
    expect(modernPages[0]!.resources.every((r) => r.uri.startsWith('modern+'))).toBe(true); // config order
  });

  it('reads carry the upstream’s hint (public 60 s, public 0) or none (a 2025 upstream: 0, private)', async () => {
    const hinted = await modern.raw('resources/read', { uri: 'modern+modern://hinted' });
    expect(hinted.cacheScope).toBe('public');
    expect(hinted.ttlMs).toBeGreaterThan(0);
    expect(hinted.ttlMs).toBeLessThanOrEqual(60_000);
    const doc = await modern.raw('resources/read', { uri: 'modern+modern://doc/1' });
    expect([doc.ttlMs, doc.cacheScope]).toEqual([0, 'public']);
    const old = await modern.raw('resources/read', { uri: 'legacy+fixture://res/1' });
    expect([old.ttlMs, old.cacheScope]).toEqual([0, 'private']);
    expect(old.contents).toEqual([expect.objectContaining({ uri: 'legacy+fixture://res/1' })]);
  });

  it('not found is -32602 with data.uri for 2026, -32002 for 2025, for either upstream era', async () => {
    for (const uri of ['modern+modern://nope', 'legacy+fixture://nope', 'nobody+x://y', 'no-namespace']) {
      const e = await rpcError(modern.raw('resources/read', { uri }));
      expect([e.code, e.data]).toEqual([-32602, { uri }]);
      expect(await rpcError(legacy.client.readResource({ uri }))).toEqual(notFound(uri));
    }
  });

  it('listens across eras: updates from a 2025 upstream’s subscribe, from polling and from a 2026 upstream’s listen; the acknowledgement names exactly the accepted URIs', async () => {
    const seen: string[] = [];
    const waiters = new Map<string, () => void>();
    modern.client.setNotificationHandler('notifications/resources/updated', (n) => {
      seen.push(n.params.uri);
      waiters.get(n.params.uri)?.();
    });
    const next = (uri: string) => new Promise<void>((resolve) => waiters.set(uri, resolve));
    const wanted = ['legacy+fixture://ticker', 'polled+fixture://ticker', 'modern+modern://ticker'];
    const sub = await modern.client.listen({ resourceSubscriptions: [...wanted, 'nobody+x://y', 'plain-uri'] });
    expect(sub.honoredFilter.resourceSubscriptions).toEqual(wanted);

    for (const [uri, control] of [
      ['legacy+fixture://ticker', 'legacy+fixture://control/tick?n=1'],
      ['polled+fixture://ticker', 'polled+fixture://control/tick?n=1'],
      ['modern+modern://ticker', 'modern+modern://control/tick'],
    ] as const) {
      const arrived = next(uri);
      await modern.raw('resources/read', { uri: control });
      await within(arrived, `the update of ${uri} on the listen stream`);
    }
    await sub.close();
    expect(await sub.closed).toBe('local');
  });

  it('a 2025 client subscribed to a 2026 upstream’s URI gets its update (bridged through listen upstream)', async () => {
    const arrived = new Promise<string>((resolve) =>
      legacy.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        if (n.params.uri === 'modern+modern://ticker') resolve(n.params.uri);
      }),
    );
    await legacy.client.subscribeResource({ uri: 'modern+modern://ticker' });
    await legacy.client.readResource({ uri: 'modern+modern://control/tick' });
    expect(await within(arrived, 'the 2025 client’s update')).toBe('modern+modern://ticker');
  });

  it('list_changed reaches a 2026 listener whose filter asks for it, from a 2025 upstream', async () => {
    const changed = new Promise<void>((resolve) => modern.client.setNotificationHandler('notifications/resources/list_changed', () => resolve()));
    const sub = await modern.client.listen({ resourcesListChanged: true });
    expect(sub.honoredFilter).toEqual({ resourcesListChanged: true });
    await modern.raw('resources/read', { uri: 'legacy+fixture://control/add?n=1' });
    await within(changed, 'list_changed on the listen stream');
    await sub.close();
  });
});

describe('a 2026-07-28 client in front of 2026 upstreams only', () => {
  it('gets public list pages with the upstream’s TTL (the minimum of the parts)', async () => {
    await using p = await new V2Proxy({
      servers: {
        a: { command: process.execPath, args: [MODERN], protocol: '2026-07-28' },
        b: { command: process.execPath, args: [MODERN], protocol: '2026-07-28' },
      },
    }).start();
    const [page] = await pages(p);
    expect(page!.cacheScope).toBe('public');
    expect(page!.ttlMs).toBeGreaterThan(0);
    expect(page!.ttlMs).toBeLessThanOrEqual(1000); // the fixture's list hint
    expect(page!.resources.map((r) => r.uri)).toEqual(expect.arrayContaining(['a+modern://doc/1', 'b+modern://doc/1']));
  });
});

describe('upstreams of both eras over stdio and HTTP, to clients of both eras', () => {
  it('a stateless 2026 HTTP upstream (createMcpHandler), a 2026 stdio one and a 2025 stateful HTTP one, with colliding URIs; listen survives the HTTP upstream’s restart', async () => {
    let web = await RemoteFixture.startModern();
    const port = web.port;
    await using legacyWeb = await RemoteFixture.start('http', '--resources', '2', '--subscribe');
    const config = {
      servers: {
        web: { url: web.url, protocol: '2026-07-28' },
        local: { command: process.execPath, args: [MODERN], protocol: '2026-07-28' },
        old: { url: legacyWeb.url },
      },
      subscriptions: { coalesceMs: 0 },
      reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
    };
    try {
      await using p = await new V2Proxy(config).start();
      await using q = await ProxyProcess.start(config);
      // Both clients, one catalog: the two modern upstreams serve the same URIs, kept apart by namespace.
      const modernUris = (await pages(p)).flatMap((pg) => pg.resources.map((r) => r.uri));
      const legacyUris = (await q.client.listResources()).resources.map((r) => r.uri);
      expect(modernUris).toEqual(legacyUris);
      expect(modernUris).toEqual(expect.arrayContaining(['web+modern://doc/1', 'local+modern://doc/1', 'old+fixture://res/1']));
      expect((await p.raw('resources/read', { uri: 'web+modern://doc/1' })).contents).toEqual([{ uri: 'web+modern://doc/1', text: 'doc 1' }]);
      expect((await q.client.readResource({ uri: 'local+modern://doc/1' })).contents).toEqual([{ uri: 'local+modern://doc/1', text: 'doc 1' }]);
      const templates = (await q.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
      expect(templates).toEqual(expect.arrayContaining(['web+modern://doc/{id}', 'local+modern://doc/{id}']));
      expect((await rpcError(p.raw('resources/read', { uri: 'web+modern://nope' }))).code).toBe(-32602);
      expect(await rpcError(q.client.readResource({ uri: 'web+modern://nope' }))).toEqual(notFound('web+modern://nope'));

      const arrivals: string[] = [];
      let onArrival: () => void = () => undefined;
      p.client.setNotificationHandler('notifications/resources/updated', (n) => {
        arrivals.push(n.params.uri);
        onArrival();
      });
      const nextUpdate = () => new Promise<void>((resolve) => (onArrival = resolve));
      const sub = await p.client.listen({ resourceSubscriptions: ['web+modern://ticker'] });
      expect(sub.honoredFilter.resourceSubscriptions).toEqual(['web+modern://ticker']);
      let arrived = nextUpdate();
      await p.raw('resources/read', { uri: 'web+modern://control/tick' });
      await within(arrived, 'the HTTP upstream’s update before its restart');

      // The upstream goes away and comes back on the same port: the proxy reopens its listen stream.
      await web[Symbol.asyncDispose]();
      web = await RemoteFixture.startModern(port);
      // Until the proxy has reconnected and reopened the stream, a tick may go unheard: tick again
      // (each attempt waits for the update event, bounded) until one is heard.
      let heard = false;
      for (let attempt = 0; attempt < 40 && !heard; attempt++) {
        arrived = nextUpdate();
        const ticked = await p.raw('resources/read', { uri: 'web+modern://control/tick' }).then(
          () => true,
          () => false,
        );
        heard = ticked && (await Promise.race([arrived.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 250))]));
        if (!ticked) await new Promise((r) => setTimeout(r, 100));
      }
      expect(heard).toBe(true);
      expect(arrivals.every((u) => u === 'web+modern://ticker')).toBe(true);
      await sub.close();
    } finally {
      await web[Symbol.asyncDispose]();
    }
  });
});
