// Upstream restarts and list_changed: prompt failure, not-found while down, backoff, re-subscribe, fresh cache.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { createUpstreamServer, newStats, type UpstreamHandle } from '../helpers/upstream-server.mjs';
import { startHarness } from '../helpers/harness.js';
import { rpcError } from '../helpers/rpc-error.js';
import { counter, deferred } from '../helpers/gate.js';
import type { UpstreamStatus } from '../../src/upstream/upstream.js';
import type { Proxy } from '../../src/proxy.js';

const text = (uri: string, body: string) => ({ contents: [{ uri, text: body }] });

/** Resolves when `server` reaches `status` (an event, never a sleep). */
function status(proxy: Proxy, server: string, want: UpstreamStatus, times = 1): Promise<void> {
  let seen = 0;
  return new Promise((resolve) => {
    const off = proxy.pool.onStatus((id, s) => {
      if (id === server && s === want && ++seen >= times) {
        off();
        resolve();
      }
    });
  });
}

function listChanges(client: Client) {
  const c = counter();
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => c.hit());
  return c;
}

describe('upstream restarts', () => {
  afterEach(() => vi.useRealTimers());

  it('fails in-flight reads at once, answers not-found while down, and comes back with a fresh cache and its subscriptions', async () => {
    let generation = 0;
    let current!: UpstreamHandle;
    const stalled = deferred();
    const stats = newStats();
    await using h = await startHarness({
      upstreams: {
        a: () => {
          const g = ++generation;
          current = createUpstreamServer(
            {
              subscribe: true,
              read: async (u) => {
                if (u === 'slow://1') {
                  stalled.resolve();
                  return new Promise(() => undefined); // never answers
                }
                return text(u, `gen ${g}`);
              },
            },
            stats,
          );
          return current.server;
        },
        b: () => createUpstreamServer({ read: (u) => text(u, 'b is fine') }).server,
      },
      config: { reconnect: { initialDelayMs: 20, maxDelayMs: 40 }, subscriptions: { coalesceMs: 0 } },
      serverFields: { a: { timeoutMs: 60_000 } },
    });
    const c = await h.client();
    const changes = listChanges(c);
    const updates = counter();
    const updated: string[] = [];
    c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
      updates.hit();
    });
    expect((await c.readResource({ uri: 'a+doc://1' })).contents[0]).toMatchObject({ text: 'gen 1' });
    await c.subscribeResource({ uri: 'a+doc://1' });

    const pending = c.readResource({ uri: 'a+slow://1' });
    await stalled.promise;
    const down = status(h.proxy, 'a', 'unavailable');
    const back = status(h.proxy, 'a', 'ready');
    const before = current;
    await before.server.close(); // the upstream goes away
    await down;
    const err = await rpcError(pending); // promptly, long before its 60 s timeout
    expect(err.code).toBeLessThan(0);
    expect((await rpcError(c.readResource({ uri: 'a+doc://1' }))).code).toBe(-32002);
    expect((await c.readResource({ uri: 'b+x://1' })).contents[0]).toMatchObject({ text: 'b is fine' });

    await back;
    expect(current).not.toBe(before);
    expect((await c.readResource({ uri: 'a+doc://1' })).contents[0]).toMatchObject({ text: 'gen 2' }); // nothing cached from before
    await stats.subscriptionCalls.until(2); // doc://1 once (session and cache coherence share it), then again after the reconnect
    expect(stats.subscribes.filter((u) => u === 'doc://1')).toHaveLength(2);
    await current.server.sendResourceUpdated({ uri: 'doc://1' });
    await updates.until(1);
    expect(updated).toEqual(['a+doc://1']);
    await changes.until(1); // unavailable and available again, within one coalescing window
  });

  it('backs off exponentially with jitter; a crash loop never reconnects faster', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    let attempts = 0;
    await using h = await startHarness({
      upstreams: {
        flaky: () => {
          attempts++;
          throw new Error('spawn failed');
        },
      },
      config: { reconnect: { initialDelayMs: 100, maxDelayMs: 1000 } },
      random: () => 0, // the low end of the jitter: half of each ceiling
    });
    expect(attempts).toBe(1);
    // ceilings 100, 200, 400, 800, 1000, 1000 -> delays 50, 100, 200, 400, 500, 500
    const delays = [50, 100, 200, 400, 500, 500];
    for (const [i, d] of delays.entries()) {
      await vi.advanceTimersByTimeAsync(d - 1);
      expect(attempts).toBe(i + 1);
      await vi.advanceTimersByTimeAsync(1);
      expect(attempts).toBe(i + 2);
    }
    expect(h.proxy.pool.get('flaky')?.status).toBe('unavailable');
  });

  it('turns a storm of list_changed from many upstreams into one notification per session', async () => {
    const ups: UpstreamHandle[] = [];
    const upstreams = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`u${i}`, () => (ups[i] = createUpstreamServer({})).server]));
    await using h = await startHarness({ upstreams, config: { listChanged: { coalesceMs: 30 } } });
    const [a, b] = await Promise.all([h.client(), h.client()]);
    const [ca, cb] = [listChanges(a), listChanges(b)];
    for (const u of ups) for (let i = 0; i < 3; i++) await u.server.sendResourceListChanged();
    await Promise.all([ca.until(1), cb.until(1)]);
    // A second, separate change proves the first storm produced exactly one.
    await ups[0]!.server.sendResourceListChanged();
    await Promise.all([ca.until(2), cb.until(2)]);
    expect([ca.count, cb.count]).toEqual([2, 2]);
  });
});
