// A `prefix: false` server through the whole core: its URIs listed, read, subscribed, completed and notified unchanged.
import { describe, expect, it } from 'vitest';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { createUpstreamServer, newStats, type UpstreamHandle } from '../helpers/upstream-server.mjs';
import { startHarness } from '../helpers/harness.js';
import { rpcError } from '../helpers/rpc-error.js';
import { counter } from '../helpers/gate.js';

const NOT_FOUND = -32002;

describe('an unprefixed server next to a prefixed one', () => {
  it('lists, reads, subscribes, completes and notifies with its URIs unchanged, and the other server namespaced', async () => {
    const stats = newStats();
    let plain!: UpstreamHandle;
    await using h = await startHarness({
      upstreams: {
        docs: () =>
          createUpstreamServer({ resources: [{ uri: 'file:///a.md', name: 'a' }], templates: [{ uriTemplate: 'file:///{path}', name: 'files' }] }).server,
        everything: () =>
          (plain = createUpstreamServer(
            {
              resources: [
                { uri: 'test://static-text', name: 'static' },
                { uri: 'everything+x://y', name: 'looks namespaced by itself' },
              ],
              templates: [{ uriTemplate: 'test://template/{id}/data', name: 'by id' }],
              subscribe: true,
              complete: (p) => [`${p.ref.uri} ${p.argument.value}`],
            },
            stats,
          )).server,
      },
      serverFields: { everything: { prefix: false } },
      config: { subscriptions: { coalesceMs: 0 }, cache: { coherentUris: 0 } },
    });
    const client = await h.client();

    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['docs+file:///a.md', 'test://static-text', 'everything+x://y']);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['docs+file:///{path}', 'test://template/{id}/data']);

    expect((await client.readResource({ uri: 'test://static-text' })).contents).toEqual([
      { uri: 'test://static-text', mimeType: 'text/plain', text: 'content of test://static-text' },
    ]);
    expect((await client.readResource({ uri: 'everything+x://y' })).contents[0]?.uri).toBe('everything+x://y');
    expect((await client.readResource({ uri: 'docs+file:///a.md' })).contents[0]?.uri).toBe('docs+file:///a.md');
    // Not namespaced and not its resource: the unprefixed upstream's own not-found.
    expect(await rpcError(client.readResource({ uri: 'test://missing' }))).toMatchObject({ code: NOT_FOUND, data: { uri: 'test://missing' } });
    expect(stats.reads.get('test://missing')).toBe(1);
    // A known id routes to that server, never to the unprefixed one.
    expect(await rpcError(client.readResource({ uri: 'docs+test://static-text' }))).toMatchObject({ code: NOT_FOUND });
    expect(stats.reads.get('docs+test://static-text')).toBeUndefined();

    expect(await client.complete({ ref: { type: 'ref/resource', uri: 'test://template/{id}/data' }, argument: { name: 'id', value: '12' } })).toMatchObject({
      completion: { values: ['test://template/{id}/data 12'] },
    });

    const updates: string[] = [];
    const arrived = counter();
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
      arrived.hit();
    });
    await client.subscribeResource({ uri: 'test://static-text' });
    expect(stats.subscribes).toEqual(['test://static-text']);
    await plain.server.sendResourceUpdated({ uri: 'test://static-text' });
    await arrived.until(1);
    expect(updates).toEqual(['test://static-text']);
    await client.unsubscribeResource({ uri: 'test://static-text' });
    expect(stats.unsubscribes).toEqual(['test://static-text']);
  });

  it('is not found when the unprefixed server is disabled, as without one', async () => {
    await using h = await startHarness({
      upstreams: { docs: () => createUpstreamServer({ resources: [{ uri: 'file:///a.md', name: 'a' }] }).server, off: () => createUpstreamServer({}).server },
      serverFields: { off: { prefix: false, enabled: false } },
    });
    const client = await h.client();
    expect(h.proxy.uris.unprefixed).toBeUndefined();
    expect(await rpcError(client.readResource({ uri: 'test://static-text' }))).toMatchObject({ code: NOT_FOUND, data: { uri: 'test://static-text' } });
  });
});
