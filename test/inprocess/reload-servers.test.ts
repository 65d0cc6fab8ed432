// servers edits applied in place: restarted upstreams keep their subscribers, removed ones are forgotten, routing follows.
import { describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ListResourcesRequestSchema, ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { parseConfig } from '../../src/config/load.js';
import { planReload } from '../../src/config/reload-diff.js';
import type { Proxy } from '../../src/proxy.js';
import { createUpstreamServer, newStats, type UpstreamHandle } from '../helpers/upstream-server.mjs';
import { startHarness } from '../helpers/harness.js';
import { rpcError } from '../helpers/rpc-error.js';
import { counter } from '../helpers/gate.js';

const inmemory = (id: string, fields: Record<string, unknown> = {}) => ({ command: `inmemory:${id}`, ...fields });

/** Applies `servers` (and the rest of `extra`) to the running proxy as the CLI does: servers, then policy, in one tick. */
async function reloadServers(proxy: Proxy, running: ReturnType<typeof parseConfig>, servers: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const next = parseConfig({ servers, subscriptions: { coalesceMs: 0 }, cache: { coherentUris: 0 }, ...extra }, { env: {} });
  const plan = planReload({ config: running, written: Object.keys(running) }, { config: next, written: ['servers', ...Object.keys(extra)] });
  expect(plan.refused).toEqual([]);
  const done = proxy.applyServers(next, plan.servers);
  proxy.reload(next);
  await done;
  return { next, plan };
}

function listChanges(client: Client) {
  const heard = counter();
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => heard.hit());
  return heard;
}

describe('servers reload (in process)', () => {
  it('a restarted upstream is a new connection that takes over the subscriptions held; updates flow from it', async () => {
    const instances: UpstreamHandle[] = [];
    const base = { subscriptions: { coalesceMs: 0 }, cache: { coherentUris: 0 } };
    await using h = await startHarness({
      upstreams: { a: () => (instances[instances.length] = createUpstreamServer({ subscribe: true }, newStats())).server },
      config: base,
    });
    const running = parseConfig({ servers: { a: inmemory('a') }, ...base }, { env: {} });
    const client = await h.client();
    const updated: string[] = [];
    const arrived = counter();
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
      arrived.hit();
    });
    await client.subscribeResource({ uri: 'a+x://1' });
    expect(instances).toHaveLength(1);
    expect(instances[0]!.stats.subscribes).toEqual(['x://1']);

    const { plan } = await reloadServers(h.proxy, running, { a: inmemory('a', { timeoutMs: 5000 }) });
    expect(plan.servers.restarted).toEqual(['a']);
    expect(instances).toHaveLength(2);
    await instances[1]!.stats.subscriptionCalls.until(1);
    expect(instances[1]!.stats.subscribes).toEqual(['x://1']);
    await instances[1]!.server.sendResourceUpdated({ uri: 'x://1' });
    await arrived.until(1);
    expect(updated).toEqual(['a+x://1']);
    expect(h.proxy.pool.get('a')?.config.timeoutMs).toBe(5000);
  });

  it('a removed upstream is forgotten: its subscriptions released, its URIs not found, sessions hear list_changed; an added one serves', async () => {
    await using h = await startHarness({
      upstreams: {
        a: () => createUpstreamServer({ subscribe: true, resources: [{ uri: 'x://1', name: 'x1' }] }).server,
        b: () => createUpstreamServer({ resources: [{ uri: 'y://1', name: 'y1' }] }).server,
        c: () => createUpstreamServer({ resources: [{ uri: 'z://1', name: 'z1' }] }).server,
      },
      config: { servers: { a: inmemory('a'), b: inmemory('b') }, subscriptions: { coalesceMs: 0 }, cache: { coherentUris: 0 } },
    });
    const running = parseConfig({ servers: { a: inmemory('a'), b: inmemory('b') }, subscriptions: { coalesceMs: 0 }, cache: { coherentUris: 0 } }, { env: {} });
    const client = await h.client();
    const heard = listChanges(client);
    await client.subscribeResource({ uri: 'a+x://1' });
    expect(h.proxy.relay.size).toBe(1);
    const b = h.proxy.pool.get('b');

    await reloadServers(h.proxy, running, { b: inmemory('b'), c: inmemory('c') });
    await heard.until(1);
    expect(h.proxy.relay.size).toBe(0);
    expect([...h.proxy.pool.ids]).toEqual(['b', 'c']);
    expect(h.proxy.pool.get('b')).toBe(b); // unchanged: the same connection
    expect((await rpcError(client.readResource({ uri: 'a+x://1' }))).code).toBe(-32002);
    const listed = (await client.listResources()).resources.map((r) => r.uri);
    expect(listed).toEqual(['b+y://1', 'c+z://1']);
    expect((await client.readResource({ uri: 'c+z://1' })).contents[0]).toMatchObject({ uri: 'c+z://1' });
  });

  it('a list page in progress across a servers reload issues a cursor of the old set, refused as stale', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const listing = new Promise<void>((resolve) => (entered = resolve));
    await using h = await startHarness({
      upstreams: {
        a: () => {
          const up = createUpstreamServer({});
          up.server.setRequestHandler(ListResourcesRequestSchema, async () => {
            entered();
            await gate;
            return { resources: [{ uri: 'x://1', name: 'x1' }], nextCursor: 'more' };
          });
          return up.server;
        },
        b: () => createUpstreamServer({ resources: [{ uri: 'y://1', name: 'y1' }] }).server,
      },
      config: { servers: { a: inmemory('a') }, list: { maxItemsPerPage: 1 } },
    });
    const running = parseConfig({ servers: { a: inmemory('a') }, list: { maxItemsPerPage: 1 } }, { env: {} });
    const client = await h.client();
    const page = client.listResources();
    await listing;
    await reloadServers(h.proxy, running, { b: inmemory('b'), a: inmemory('a') }, { list: { maxItemsPerPage: 1 } });
    release();
    const first = await page;
    expect(first.resources.map((r) => r.uri)).toEqual(['a+x://1']);
    expect((await rpcError(client.listResources({ cursor: first.nextCursor! }))).code).toBe(-32602);
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(['b+y://1']); // the new order, from the start
  });

  it('routing follows the new set: a server turned unprefixed is reached by its bare URIs; a cursor from before is refused', async () => {
    await using h = await startHarness({
      upstreams: {
        a: () =>
          createUpstreamServer({
            resources: [
              { uri: 'x://1', name: 'x1' },
              { uri: 'x://2', name: 'x2' },
            ],
            pageSize: 1,
          }).server,
        b: () => createUpstreamServer({ resources: [{ uri: 'y://1', name: 'y1' }] }).server,
      },
      config: { list: { maxItemsPerPage: 1 } },
    });
    const running = parseConfig({ servers: { a: inmemory('a'), b: inmemory('b') }, list: { maxItemsPerPage: 1 } }, { env: {} });
    const client = await h.client();
    const first = await client.listResources();
    expect(first.nextCursor).toBeDefined();

    await reloadServers(h.proxy, running, { a: inmemory('a'), b: inmemory('b', { prefix: false }) }, { list: { maxItemsPerPage: 1 } });
    expect((await client.readResource({ uri: 'y://1' })).contents[0]).toMatchObject({ uri: 'y://1' });
    expect((await rpcError(client.readResource({ uri: 'b+y://1' }))).code).toBe(-32002);
    expect((await rpcError(client.listResources({ cursor: first.nextCursor! }))).code).toBe(-32602);
  });
});
