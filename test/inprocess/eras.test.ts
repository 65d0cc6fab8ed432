// Both protocol eras on one proxy core: a 2025 client (SDK v1) and a 2026 client (SDK v2, auto) side by side; cache hints on the injected clock.
import { describe, expect, it } from 'vitest';
import { PASS } from '../helpers/passthrough.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { createUpstreamServer, newStats, textContents as text } from '../helpers/upstream-server.mjs';
import { startHarness } from '../helpers/harness.js';
import { rpcError } from '../helpers/rpc-error.js';
import { within } from '../helpers/gate.js';

/** The result as the proxy sent it: no typed helper, no client-side response cache. */
const raw = (c: ModernClient, method: string, params: Record<string, unknown> = {}) =>
  c.request({ method, params } as never, PASS as never) as Promise<Record<string, unknown>>;

describe('two eras, one core', () => {
  it('a 2025 client and a 2026 client see the same catalog and contents; each gets its era’s not-found', async () => {
    const stats = newStats();
    await using h = await startHarness({
      upstreams: {
        a: () => createUpstreamServer({ resources: [{ uri: 'x://1', name: 'one' }], read: (u) => text(u, `body of ${u}`) }, stats).server,
        b: () => createUpstreamServer({ resources: [{ uri: 'x://1', name: 'one too' }], read: (u) => text(u, `b says ${u}`) }).server,
      },
    });
    const old = await h.client();
    const modern = await h.modernClient();
    expect(modern.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const oldList = await old.listResources();
    const modernList = await raw(modern, 'resources/list');
    expect((modernList.resources as { uri: string }[]).map((r) => r.uri)).toEqual(oldList.resources.map((r) => r.uri));
    expect(oldList.resources.map((r) => r.uri)).toEqual(['a+x://1', 'b+x://1']); // colliding URIs, two namespaces
    expect((await raw(modern, 'resources/read', { uri: 'b+x://1' })).contents).toEqual((await old.readResource({ uri: 'b+x://1' })).contents);
    const e2026 = await rpcError(raw(modern, 'resources/read', { uri: 'c+x://1' }));
    const e2025 = await rpcError(old.readResource({ uri: 'c+x://1' }));
    expect([e2026.code, e2026.data]).toEqual([-32602, { uri: 'c+x://1' }]);
    expect([e2025.code, e2025.data]).toEqual([-32002, { uri: 'c+x://1' }]);
  });

  it('read hints: the upstream’s TTL aged on the injected clock, capped by the operator’s entry; private stays private and unshared', async () => {
    let now = 1_000;
    const stats = newStats();
    await using h = await startHarness({
      upstreams: {
        a: () =>
          createUpstreamServer(
            {
              read: (u) =>
                u.startsWith('private:')
                  ? { ...text(u, 'mine'), ttlMs: 60_000, cacheScope: 'private' }
                  : u.startsWith('plain:')
                    ? text(u, 'no hint')
                    : { ...text(u, 'shared'), ttlMs: 30_000, cacheScope: 'public' },
            },
            stats,
          ).server,
      },
      serverFields: {},
      clock: { now: () => now },
    });
    const c = await h.modernClient();
    const hint = async (uri: string) => {
      const r = await raw(c, 'resources/read', { uri });
      return [r.ttlMs, r.cacheScope];
    };
    expect(await hint('a+pub://1')).toEqual([30_000, 'public']);
    now += 10_000;
    expect(await hint('a+pub://1')).toEqual([20_000, 'public']); // served from our entry, 10 s old
    expect(stats.reads.get('pub://1')).toBe(1);
    expect(await hint('a+private://1')).toEqual([60_000, 'private']);
    expect(await hint('a+private://1')).toEqual([60_000, 'private']);
    expect(stats.reads.get('private://1')).toBe(2); // never stored, never shared
    expect(await hint('a+plain://1')).toEqual([0, 'private']); // no basis for more
  });

  it('an operator TTL shorter than the upstream’s hint caps it', async () => {
    let now = 1_000; // lru-cache reads a start time of 0 as no TTL
    await using h = await startHarness({
      upstreams: { a: () => createUpstreamServer({ read: (u) => ({ ...text(u, 'shared'), ttlMs: 30_000, cacheScope: 'public' }) }).server },
      config: { cache: { ttlMs: 5_000 } },
      clock: { now: () => now },
    });
    const c = await h.modernClient();
    expect((await raw(c, 'resources/read', { uri: 'a+pub://1' })).ttlMs).toBe(5_000);
    now += 2_000;
    expect((await raw(c, 'resources/read', { uri: 'a+pub://1' })).ttlMs).toBe(3_000);
  });

  it('a 2026 listen and a 2025 subscribe of one URI both get its update; ending the listen keeps the 2025 subscription', async () => {
    const upstream = createUpstreamServer({ subscribe: true, read: (u) => text(u, 'v') });
    await using h = await startHarness({ upstreams: { a: () => upstream.server }, config: { subscriptions: { coalesceMs: 0 } } });
    const old = await h.client();
    const modern = await h.modernClient();
    const oldGot = new Promise<string>((resolve) => old.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params.uri)));
    const modernGot = new Promise<string>((resolve) => modern.setNotificationHandler('notifications/resources/updated', (n) => resolve(n.params.uri)));
    await old.subscribeResource({ uri: 'a+x://1' });
    const sub = await modern.listen({ resourceSubscriptions: ['a+x://1', 'zz+x://1'] });
    expect(sub.honoredFilter.resourceSubscriptions).toEqual(['a+x://1']);
    await upstream.server.sendResourceUpdated({ uri: 'x://1' });
    expect(await within(oldGot, '2025 update')).toBe('a+x://1');
    expect(await within(modernGot, '2026 update')).toBe('a+x://1');
    await sub.close();
    await old.unsubscribeResource({ uri: 'a+x://1' });
    // Both holders gone: the listen's hold was released too (a leaked one would keep the pair forever).
    await within(
      (async () => {
        while (h.proxy.relay.size !== 0) await new Promise((r) => setImmediate(r));
      })(),
      'the relay to release the URI',
    );
    expect(upstream.stats.unsubscribes).toContain('x://1');
  });
});
