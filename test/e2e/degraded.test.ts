// End to end: upstreams that fail to start, fail to list, claim other namespaces, or paginate forever.
import { describe, expect, it } from 'vitest';
import { upstreams } from '../helpers/built-cli.js';
import { listAll, META_INCOMPLETE, notFound } from '../helpers/catalog.js';
import { rpcError } from '../helpers/rpc-error.js';
import { ProxyProcess } from '../helpers/sdk-clients.js';
import { suiteResource } from '../helpers/suite.js';

const good = (id: string, n: number) => [...Array.from({ length: n }, (_, i) => `${id}+fixture://res/${i}`), `${id}+fixture://ticker`, `${id}+fixture://stats`];

describe('broken upstreams', () => {
  // Broken ones on both sides of the good one, so config order is exercised too.
  const proxy = suiteResource(() =>
    ProxyProcess.start({
      servers: {
        dead: upstreams.fixture('--exit-on-start'),
        good: upstreams.fixture('--resources', '3'),
        ghost: upstreams.missing(),
        failing: upstreams.fixture('--resources', '2', '--fail-list'),
      },
    }),
  );
  const client = () => proxy().client;

  it('starts anyway and logs each upstream that failed to start', async () => {
    for (const server of ['dead', 'ghost']) {
      const record = await proxy().waitForLog((r) => r.server === server && r.msg === 'upstream failed to start; serving the others');
      expect(record.level).toBe(50);
    }
  });

  it.each(['resources', 'templates'] as const)('%s list: the good upstream’s items, the others reported in _meta', async (kind) => {
    const { items, pages } = await listAll(client(), kind);
    const key = kind === 'resources' ? 'uri' : 'uriTemplate';
    expect(items.map((i) => i[key])).toEqual(kind === 'resources' ? good('good', 3) : ['good+fixture://res/{id}', 'good+fixture://item/{category}/{id}']);
    expect(pages).toHaveLength(1);
    expect(pages[0]?.meta).toEqual({
      [META_INCOMPLETE]: [
        { server: 'dead', reason: 'unavailable' },
        { server: 'ghost', reason: 'unavailable' },
        { server: 'failing', reason: 'error' },
      ],
    });
  });

  it('reads from the good upstream, and from one whose list fails', async () => {
    expect(await client().readResource({ uri: 'good+fixture://item/beta/2' })).toEqual({
      contents: [{ uri: 'good+fixture://item/beta/2', mimeType: 'text/plain', text: 'item beta/2' }],
    });
    const read = await client().readResource({ uri: 'failing+fixture://res/0' });
    expect(read.contents[0]?.uri).toBe('failing+fixture://res/0');
  });

  it.each(['dead+fixture://res/0', 'dead+fixture://stats', 'ghost+fixture://res/0', 'ghost+anything'])(
    'reading %s (unavailable upstream) is -32002 with the URI',
    async (uri) => {
      expect(await rpcError(client().readResource({ uri }))).toEqual(notFound(uri));
    },
  );

  it('completion against an unavailable upstream is -32002', async () => {
    const uri = 'dead+fixture://item/{category}/{id}';
    expect(await rpcError(client().complete({ ref: { type: 'ref/resource', uri }, argument: { name: 'category', value: 'a' } }))).toEqual(notFound(uri));
  });
});

describe('foreign-looking upstream URIs', () => {
  // Page size 1: the proxy has to walk six upstream pages of resources and three of templates.
  const proxy = suiteResource(() => ProxyProcess.start({ servers: { fx: upstreams.fixture('--foreign', '--resources', '3', '--page-size', '1') } }));
  const client = () => proxy().client;

  it('lists other+file:///secret inside the upstream’s own namespace', async () => {
    const resources = await listAll(client());
    expect(resources.items.map((r) => r.uri)).toEqual([
      'fx+fixture://res/0',
      'fx+fixture://res/1',
      'fx+fixture://res/2',
      'fx+fixture://ticker',
      'fx+other+file:///secret',
      'fx+fixture://stats',
    ]);
    const templates = await listAll(client(), 'templates');
    expect(templates.items.map((t) => t.uriTemplate)).toEqual(['fx+fixture://res/{id}', 'fx+fixture://item/{category}/{id}', 'fx+other+file:///{x}']);
  });

  // Runs before any read of this proxy, and reads the stats only once (a read cache cannot blur it).
  it('does not let other+file:///secret reach any upstream', async () => {
    expect(await rpcError(client().readResource({ uri: 'other+file:///secret' }))).toEqual(notFound('other+file:///secret'));
    const stats = await client().readResource({ uri: 'fx+fixture://stats' });
    const { reads, readsByUri } = JSON.parse((stats.contents[0] as { text: string }).text) as { reads: number; readsByUri: unknown };
    expect({ reads, readsByUri }).toEqual({ reads: 0, readsByUri: {} });
  });

  it('reads fx+other+file:///secret from fx, with the contents uri in fx’s namespace', async () => {
    expect(await client().readResource({ uri: 'fx+other+file:///secret' })).toEqual({
      contents: [{ uri: 'fx+other+file:///secret', mimeType: 'text/plain', text: 'secret' }],
    });
  });
});

describe('an upstream that returns cursors forever', () => {
  it.each([
    [{ maxPagesPerUpstream: 20 }, 1, 0],
    // 7 items per downstream page: the upstream page count must survive in the downstream cursor.
    // 23 items (20 + the tail's 3) make pages of 7, 7, 7, 2; the endless part ends on the third.
    [{ maxPagesPerUpstream: 20, maxItemsPerPage: 7 }, 4, 2],
  ])('list %j ends after the page limit, reported in _meta of the page where that upstream’s part ends', async (list, expectedPages, metaPage) => {
    await using proxy = await ProxyProcess.start({
      servers: { endless: upstreams.fixture('--endless-cursor'), tail: upstreams.fixture('--resources', '1') },
      list,
    });
    const { items, pages } = await listAll(proxy.client);
    expect(items.map((r) => r.uri)).toEqual([...Array.from({ length: 20 }, (_, n) => `endless+fixture://endless/${n}`), ...good('tail', 1)]);
    expect(pages).toHaveLength(expectedPages);
    expect(pages.map((p) => p.size)).toEqual(expectedPages === 1 ? [23] : [7, 7, 7, 2]);
    expect(pages.map((p) => p.meta)).toEqual(
      pages.map((_, i) => (i === metaPage ? { [META_INCOMPLETE]: [{ server: 'endless', reason: 'page-limit' }] } : undefined)),
    );
    // The upstream was asked for exactly maxPagesPerUpstream pages, no more.
    const stats = await proxy.client.readResource({ uri: 'endless+fixture://stats' });
    expect(JSON.parse((stats.contents[0] as { text: string }).text)).toMatchObject({ listCalls: 20 });
  });
});
