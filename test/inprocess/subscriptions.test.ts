// Subscription relay across several sessions sharing one core: exact delivery, ref counts, release, parents, bursts, polling.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { createUpstreamServer, newStats, type UpstreamHandle } from '../helpers/upstream-server.mjs';
import { startHarness } from '../helpers/harness.js';
import { rpcError } from '../helpers/rpc-error.js';
import { counter } from '../helpers/gate.js';

/** Records the updated notifications a client receives. */
function inbox(client: Client) {
  const uris: string[] = [];
  const arrived = counter();
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    uris.push(n.params.uri);
    arrived.hit();
  });
  return { uris, arrived };
}

const text = (uri: string, body: string) => ({ contents: [{ uri, text: body }] });

describe('subscription relay', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('delivers each update to exactly the subscribed sessions, once, with one upstream subscription per URI', async () => {
    const stats = newStats();
    let up!: UpstreamHandle;
    await using h = await startHarness({
      upstreams: { a: () => (up = createUpstreamServer({ subscribe: true }, stats)).server },
      config: { subscriptions: { coalesceMs: 0 }, cache: { coherentUris: 0 } },
    });
    const [a, b, c] = await Promise.all([h.client(), h.client(), h.client()]);
    const [ia, ib, ic] = [inbox(a), inbox(b), inbox(c)];
    await a.subscribeResource({ uri: 'a+x://1' });
    await a.subscribeResource({ uri: 'a+x://1' }); // idempotent
    await b.subscribeResource({ uri: 'a+x://1' });
    await b.subscribeResource({ uri: 'a+y://2' });
    expect(stats.subscribes.sort()).toEqual(['x://1', 'y://2']);

    await up.server.sendResourceUpdated({ uri: 'x://1' });
    await up.server.sendResourceUpdated({ uri: 'y://2' });
    await ib.arrived.until(2);
    await ia.arrived.until(1);
    // A marker only c is subscribed to proves c's inbox is live and heard nothing before it.
    await c.subscribeResource({ uri: 'a+z://3' });
    await up.server.sendResourceUpdated({ uri: 'z://3' });
    await ic.arrived.until(1);
    expect(ia.uris).toEqual(['a+x://1']);
    expect(ib.uris).toEqual(['a+x://1', 'a+y://2']);
    expect(ic.uris).toEqual(['a+z://3']);
  });

  it('unsubscribes upstream only when the last holder leaves, and on session close', async () => {
    const stats = newStats();
    await using h = await startHarness({
      upstreams: { a: () => createUpstreamServer({ subscribe: true }, stats).server },
      config: { cache: { coherentUris: 0 } },
    });
    const [a, b] = await Promise.all([h.client(), h.client()]);
    await a.subscribeResource({ uri: 'a+x://1' });
    await b.subscribeResource({ uri: 'a+x://1' });
    await b.subscribeResource({ uri: 'a+only-b://1' });
    await a.unsubscribeResource({ uri: 'a+x://1' });
    await a.unsubscribeResource({ uri: 'a+never://1' }); // not held: a no-op
    expect(stats.unsubscribes).toEqual([]);
    await b.unsubscribeResource({ uri: 'a+x://1' });
    expect(stats.unsubscribes).toEqual(['x://1']);
    await b.close();
    await stats.subscriptionCalls.until(4); // 2 subscribes + x://1 + only-b://1 released by the close
    expect(stats.subscribes).toEqual(['x://1', 'only-b://1']);
    expect(stats.unsubscribes).toEqual(['x://1', 'only-b://1']);
  });

  it('delivers a sub-resource update to a session subscribed to its parent', async () => {
    let up!: UpstreamHandle;
    await using h = await startHarness({
      upstreams: { fs: () => (up = createUpstreamServer({ subscribe: true })).server },
      config: { subscriptions: { coalesceMs: 0 } },
    });
    const a = await h.client();
    const ia = inbox(a);
    await a.subscribeResource({ uri: 'fs+file:///dir/' });
    await up.server.sendResourceUpdated({ uri: 'file:///dir-other/x' }); // not a child
    await up.server.sendResourceUpdated({ uri: 'file:///dir/a.txt' });
    await ia.arrived.until(1);
    expect(ia.uris).toEqual(['fs+file:///dir/a.txt']);
  });

  it('an unknown or unavailable URI cannot be subscribed: -32002', async () => {
    await using h = await startHarness({ upstreams: { a: () => createUpstreamServer({ subscribe: true }).server } });
    const c = await h.client();
    await expect(c.subscribeResource({ uri: 'nope+x://1' })).rejects.toMatchObject({ code: -32002 });
    await expect(c.subscribeResource({ uri: 'x://1' })).rejects.toMatchObject({ code: -32002 });
  });

  it('coalesces a burst per (session, URI): the first at once, the last after the window, nothing lost', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    let up!: UpstreamHandle;
    await using h = await startHarness({
      upstreams: { a: () => (up = createUpstreamServer({ subscribe: true })).server },
      config: { subscriptions: { coalesceMs: 50 } },
    });
    const a = await h.client();
    const ia = inbox(a);
    await a.subscribeResource({ uri: 'a+x://1' });
    for (let i = 0; i < 5; i++) await up.server.sendResourceUpdated({ uri: 'x://1' });
    await ia.arrived.until(1);
    expect(ia.uris).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(50);
    await ia.arrived.until(2);
    await vi.advanceTimersByTimeAsync(500);
    expect(ia.uris).toEqual(['a+x://1', 'a+x://1']);
  });

  it('emulates subscriptions by polling when the upstream has none: silent without change, one update on change', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    let body = 'v1';
    const stats = newStats();
    await using h = await startHarness({
      upstreams: { p: () => createUpstreamServer({ read: (u) => text(u, body) }, stats).server },
      config: { subscriptions: { pollIntervalMs: 1000, coalesceMs: 0 } },
    });
    const a = await h.client();
    const ia = inbox(a);
    await a.subscribeResource({ uri: 'p+doc://1' });
    const baseline = stats.reads.get('doc://1') ?? 0;
    await vi.advanceTimersByTimeAsync(3000);
    expect(stats.reads.get('doc://1')).toBe(baseline + 3);
    expect(ia.uris).toEqual([]);
    body = 'v2';
    await vi.advanceTimersByTimeAsync(1000);
    await ia.arrived.until(1);
    await vi.advanceTimersByTimeAsync(3000);
    expect(ia.uris).toEqual(['p+doc://1']);
    await a.unsubscribeResource({ uri: 'p+doc://1' });
    const after = stats.reads.get('doc://1');
    await vi.advanceTimersByTimeAsync(5000);
    expect(stats.reads.get('doc://1')).toBe(after); // polling stopped with the last holder
  });

  it('pays for polls from the holders’ read buckets: with every holder’s bucket empty the poll waits, and resumes as it refills', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    let now = 0; // the rate limiter's clock, moved by hand
    const stats = newStats();
    await using h = await startHarness({
      upstreams: { p: () => createUpstreamServer({ read: (u) => text(u, 'same') }, stats).server },
      config: { subscriptions: { pollIntervalMs: 1000, coalesceMs: 0 }, limits: { reads: [{ principals: ['poller'], readsPerMinute: 60, burst: 2 }] } },
      now: () => now,
    });
    const reads = () => stats.reads.get('doc://1') ?? 0;
    const paused = () => h.logs.filter((l) => l.msg === 'poll paused: read limit reached').length;
    const poller = await h.client({ principal: 'poller', roles: [], transport: 'stdio' });
    await poller.subscribeResource({ uri: 'p+doc://1' }); // the baseline read: one of the two tokens
    expect(reads()).toBe(1);
    await vi.advanceTimersByTimeAsync(5000); // five polls due, one token left
    expect(reads()).toBe(2);
    expect(paused()).toBe(4);
    now += 1000; // one token back
    await vi.advanceTimersByTimeAsync(3000);
    expect(reads()).toBe(3);
    expect(paused()).toBe(6);
    // Its own reads draw on the same bucket, now empty.
    await expect(poller.readResource({ uri: 'p+doc://1' })).rejects.toThrow('Rate limit exceeded');
    // A principal without a limit holding the same URI pays for the polls: they go on for both.
    const other = await h.client({ principal: 'other', roles: [], transport: 'stdio' });
    await other.subscribeResource({ uri: 'p+doc://1' });
    await vi.advanceTimersByTimeAsync(3000);
    expect(reads()).toBe(6);
    expect(paused()).toBe(6);
  });

  it('bounds the URIs one session may hold: one more is refused, the others and other sessions are unaffected', async () => {
    await using h = await startHarness({
      upstreams: { a: () => createUpstreamServer({ subscribe: true }).server },
      config: { subscriptions: { maxPerSession: 3 }, cache: { coherentUris: 0 } },
    });
    const [c, other] = await Promise.all([h.client(), h.client()]);
    for (const i of [1, 2, 3]) await c.subscribeResource({ uri: `a+doc://${i}` });
    await c.subscribeResource({ uri: 'a+doc://1' }); // already held: idempotent, not counted twice
    const err = await rpcError(c.subscribeResource({ uri: 'a+doc://4' }));
    expect(err).toMatchObject({ code: -32603, data: { limit: 3 } });
    expect(err.message).toMatch(/Too many subscriptions/);
    await other.subscribeResource({ uri: 'a+doc://4' }); // the bound is per session
    await c.unsubscribeResource({ uri: 'a+doc://2' });
    await c.subscribeResource({ uri: 'a+doc://4' });
    expect(h.proxy.relay.size).toBe(3); // doc://1, doc://3, doc://4 (shared with the other session)
  });
});
