// Read cache through the whole proxy: hits, bounds, TTL on a manual clock, coalescing, cancellation, errors, invalidation.
import { describe, expect, it } from 'vitest';
import { McpError, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { createUpstreamServer, newStats, type UpstreamHandle, textContents as text } from '../helpers/upstream-server.mjs';
import { startHarness } from '../helpers/harness.js';
import { rpcError } from '../helpers/rpc-error.js';
import { counter, deferred } from '../helpers/gate.js';

describe('read cache', () => {
  it('serves a repeated read from the cache, namespaced like the first', async () => {
    const stats = newStats();
    await using h = await startHarness({
      upstreams: { a: () => createUpstreamServer({ read: (u) => text(u, 'v1') }, stats).server },
      config: { cache: { ttlMs: 60_000 } },
    });
    const c = await h.client();
    const first = await c.readResource({ uri: 'a+x://1' });
    const second = await c.readResource({ uri: 'a+x://1' });
    expect(second).toEqual(first);
    expect(second.contents[0]?.uri).toBe('a+x://1');
    expect(stats.reads.get('x://1')).toBe(1);
  });

  it('bounds the cache by bytes: the least recently used entry is evicted', async () => {
    const stats = newStats();
    const body = 'z'.repeat(1000);
    await using h = await startHarness({
      upstreams: { a: () => createUpstreamServer({ read: (u) => text(u, body) }, stats).server },
      config: { cache: { maxBytes: 2500, ttlMs: 60_000 } },
    });
    const c = await h.client();
    for (const u of ['x://1', 'x://2', 'x://3']) await c.readResource({ uri: `a+${u}` });
    expect(h.proxy.cache?.size).toBe(2);
    await c.readResource({ uri: 'a+x://3' });
    await c.readResource({ uri: 'a+x://1' });
    expect([stats.reads.get('x://1'), stats.reads.get('x://3')]).toEqual([2, 1]);
  });

  it('serves but does not store results larger than maxEntryBytes', async () => {
    const stats = newStats();
    await using h = await startHarness({
      upstreams: { a: () => createUpstreamServer({ read: (u) => text(u, 'y'.repeat(5000)) }, stats).server },
      config: { cache: { maxEntryBytes: 4096 } },
    });
    const c = await h.client();
    const r = await c.readResource({ uri: 'a+big://1' });
    expect((r.contents[0] as { text: string }).text).toHaveLength(5000);
    await c.readResource({ uri: 'a+big://1' });
    expect(stats.reads.get('big://1')).toBe(2);
  });

  it('expires entries by TTL on the injected clock, with a per-server override', async () => {
    let now = 1_000;
    const statsA = newStats();
    const statsB = newStats();
    await using h = await startHarness({
      upstreams: {
        a: () => createUpstreamServer({ read: (u) => text(u, 'a') }, statsA).server,
        b: () => createUpstreamServer({ read: (u) => text(u, 'b') }, statsB).server,
      },
      config: { cache: { ttlMs: 10_000 } },
      serverFields: { b: { cacheTtlMs: 1_000 } },
      clock: { now: () => now },
    });
    const c = await h.client();
    await c.readResource({ uri: 'a+x://1' });
    await c.readResource({ uri: 'b+x://1' });
    now += 5_000; // past b's TTL, within a's
    await c.readResource({ uri: 'a+x://1' });
    await c.readResource({ uri: 'b+x://1' });
    expect([statsA.reads.get('x://1'), statsB.reads.get('x://1')]).toEqual([1, 2]);
    now += 6_000; // past a's TTL too
    await c.readResource({ uri: 'a+x://1' });
    expect(statsA.reads.get('x://1')).toBe(2);
  });

  it('never caches for a server with cache: false', async () => {
    const stats = newStats();
    await using h = await startHarness({
      upstreams: { a: () => createUpstreamServer({ read: (u) => text(u, 'a') }, stats).server },
      serverFields: { a: { cache: false } },
    });
    const c = await h.client();
    await c.readResource({ uri: 'a+x://1' });
    await c.readResource({ uri: 'a+x://1' });
    expect(stats.reads.get('x://1')).toBe(2);
  });

  it('coalesces 50 concurrent reads of a cold URI into one upstream read', async () => {
    const stats = newStats();
    const release = deferred();
    const started = counter();
    await using h = await startHarness({
      upstreams: {
        a: () =>
          createUpstreamServer(
            {
              read: async (u) => {
                started.hit();
                await release.promise;
                return text(u, 'shared');
              },
            },
            stats,
          ).server,
      },
    });
    const clients = await Promise.all([h.client(), h.client()]);
    const reads = Array.from({ length: 50 }, (_, i) => clients[i % 2]!.readResource({ uri: 'a+cold://1' }));
    await started.until(1);
    // The entry hands requests on one microtask at a time; a macrotask turn lets all 50 reach the cache.
    await new Promise((resolve) => setImmediate(resolve));
    release.resolve();
    const results = await Promise.all(reads);
    expect(new Set(results.map((r) => (r.contents[0] as { text: string }).text))).toEqual(new Set(['shared']));
    expect(stats.reads.get('cold://1')).toBe(1);
  });

  it('a caller that cancels does not break the shared read for the others', async () => {
    const stats = newStats();
    const release = deferred();
    const started = counter();
    let upstreamSawAbort = false;
    await using h = await startHarness({
      upstreams: {
        a: () =>
          createUpstreamServer(
            {
              read: async (u, signal) => {
                signal.addEventListener('abort', () => (upstreamSawAbort = true));
                started.hit();
                await release.promise;
                return text(u, 'ok');
              },
            },
            stats,
          ).server,
      },
    });
    const c = await h.client();
    const quitter = new AbortController();
    const cancelled = c.readResource({ uri: 'a+x://1' }, { signal: quitter.signal });
    const patient = c.readResource({ uri: 'a+x://1' });
    await started.until(1);
    quitter.abort();
    await expect(cancelled).rejects.toThrow();
    release.resolve();
    expect((await patient).contents[0]).toMatchObject({ text: 'ok' });
    expect(upstreamSawAbort).toBe(false);
    expect(stats.reads.get('x://1')).toBe(1);
  });

  it('never caches errors', async () => {
    const stats = newStats();
    let fail = true;
    await using h = await startHarness({
      upstreams: {
        a: () =>
          createUpstreamServer(
            {
              read: (u) => {
                if (fail) throw new Error('transient');
                return text(u, 'fine');
              },
            },
            stats,
          ).server,
      },
      config: { cache: { ttlMs: 60_000 } },
    });
    const c = await h.client();
    expect((await rpcError(c.readResource({ uri: 'a+x://1' }))).code).toBe(-32603);
    fail = false;
    expect((await c.readResource({ uri: 'a+x://1' })).contents[0]).toMatchObject({ text: 'fine' });
    expect(stats.reads.get('x://1')).toBe(2);
  });

  it('invalidates on updated before relaying it: a re-read at once gets the new content', async () => {
    let version = 1;
    let upstream!: UpstreamHandle;
    await using h = await startHarness({
      upstreams: { a: () => (upstream = createUpstreamServer({ subscribe: true, read: (u) => text(u, `v${version}`) })).server },
      config: { cache: { ttlMs: 60_000 } },
    });
    const c = await h.client();
    await c.subscribeResource({ uri: 'a+doc://1' });
    expect((await c.readResource({ uri: 'a+doc://1' })).contents[0]).toMatchObject({ text: 'v1' });
    const reread = deferred<string>();
    c.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => {
      const r = await c.readResource({ uri: n.params.uri });
      reread.resolve((r.contents[0] as { text: string }).text);
    });
    version = 2;
    await upstream.server.sendResourceUpdated({ uri: 'doc://1' });
    expect(await reread.promise).toBe('v2');
  });

  it('does not store a read that was in flight when its URI was invalidated', async () => {
    const stats = newStats();
    const release = deferred();
    const started = counter();
    let version = 1;
    let upstream!: UpstreamHandle;
    await using h = await startHarness({
      upstreams: {
        a: () =>
          (upstream = createUpstreamServer(
            {
              subscribe: true,
              read: async (u) => {
                const v = version;
                started.hit();
                if (v === 1) await release.promise;
                return text(u, `v${v}`);
              },
            },
            stats,
          )).server,
      },
      config: { cache: { ttlMs: 60_000 } },
    });
    const c = await h.client();
    const inFlight = c.readResource({ uri: 'a+doc://1' });
    await started.until(1);
    version = 2;
    const updated = deferred();
    c.setNotificationHandler(ResourceUpdatedNotificationSchema, () => updated.resolve());
    await c.subscribeResource({ uri: 'a+doc://1' });
    await upstream.server.sendResourceUpdated({ uri: 'doc://1' });
    await updated.promise;
    release.resolve();
    expect((await inFlight).contents[0]).toMatchObject({ text: 'v1' }); // as fresh as its request
    expect((await c.readResource({ uri: 'a+doc://1' })).contents[0]).toMatchObject({ text: 'v2' });
    expect(stats.reads.get('doc://1')).toBe(2);
  });

  it('is transparent by default: a finished read is not reused (concurrent reads still share one call)', async () => {
    const stats = newStats();
    let version = 0;
    await using h = await startHarness({ upstreams: { a: () => createUpstreamServer({ read: (u) => text(u, `v${++version}`) }, stats).server } });
    const c = await h.client();
    expect((await c.readResource({ uri: 'a+x://1' })).contents[0]).toMatchObject({ text: 'v1' });
    expect((await c.readResource({ uri: 'a+x://1' })).contents[0]).toMatchObject({ text: 'v2' });
    expect(h.proxy.cache?.size).toBe(0);
  });

  it("honours the upstream's ttlMs hint without an operator TTL, on the injected clock; never stores a private result", async () => {
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
                  : { ...text(u, 'shared'), ttlMs: 2_000, cacheScope: 'public' },
            },
            stats,
          ).server,
      },
      clock: { now: () => now },
    });
    const c = await h.client();
    await c.readResource({ uri: 'a+pub://1' });
    await c.readResource({ uri: 'a+pub://1' });
    expect(stats.reads.get('pub://1')).toBe(1);
    now += 2_500; // past the hinted TTL
    await c.readResource({ uri: 'a+pub://1' });
    expect(stats.reads.get('pub://1')).toBe(2);
    await c.readResource({ uri: 'a+private://1' });
    await c.readResource({ uri: 'a+private://1' });
    expect(stats.reads.get('private://1')).toBe(2);
  });

  it('coherence holds live exactly as long as their entries: 1000 failing reads leave no upstream subscription', async () => {
    let now = 1_000;
    const stats = newStats();
    await using h = await startHarness({
      upstreams: {
        a: () =>
          createUpstreamServer(
            {
              subscribe: true,
              read: (u) => {
                if (u.startsWith('missing:')) throw new McpError(-32002, 'Resource not found');
                if (u.startsWith('big:')) return text(u, 'b'.repeat(5000));
                return text(u, 'ok');
              },
            },
            stats,
          ).server,
      },
      config: { cache: { ttlMs: 10_000, maxEntryBytes: 4096, coherentUris: 10 } },
      clock: { now: () => now },
    });
    const c = await h.client();
    const long = 'x'.repeat(1024);
    for (let i = 0; i < 1000; i++) expect((await rpcError(c.readResource({ uri: `a+missing:${i}/${long}` }))).code).toBe(-32002);
    await c.readResource({ uri: 'a+big:1' }); // served, too large to store
    await stats.subscriptionCalls.until(2 * 1001);
    expect([...stats.unsubscribes].sort()).toEqual([...stats.subscribes].sort());
    await c.readResource({ uri: 'a+other:1' }); // a round trip behind the last unsubscribe's answer
    expect(h.proxy.relay.size).toBe(1); // other:1 alone
    // A stored entry holds its subscription; the hold goes with the entry (here: expiry).
    await c.readResource({ uri: 'a+doc://1' });
    now += 11_000;
    h.proxy.cache?.purgeExpired();
    await stats.subscriptionCalls.until(2 * 1001 + 4);
    expect(stats.unsubscribes.filter((u) => u === 'doc://1' || u === 'other:1').sort()).toEqual(['doc://1', 'other:1']);
    // Only live holds count against coherentUris: ten more distinct URIs each still get one.
    for (let i = 0; i < 10; i++) await c.readResource({ uri: `a+more://${i}` });
    expect(stats.subscribes.filter((u) => u.startsWith('more://'))).toHaveLength(10);
  });
});
