// Scale-out parts against a real redis-server: shared token buckets (one total for N replicas, the 1/N fallback, recovery), change events, reloads.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Writable } from 'node:stream';
import { openCluster, type ChangeEvent, type Cluster } from '../../src/cluster.js';
import { RedisSchema } from '../../src/config/schema.js';
import { RateLimitSchema } from '../../src/config/schema.js';
import { createLogger } from '../../src/logger.js';
import { freePort, RedisServer } from '../helpers/services.js';
import { startHarness } from '../helpers/harness.js';
import { createUpstreamServer } from '../helpers/upstream-server.mjs';
import { parseConfig } from '../../src/config/load.js';
import { deferred, within } from '../helpers/gate.js';

const alice = { principal: 'alice', roles: [] as string[] };
const nobody = { principal: 'nobody', roles: [] as string[] };
// 6 reads a minute: one refill every 10 s, so no refill lands inside a test; a burst of 9 shared by 3 replicas.
const LIMITS = [RateLimitSchema.parse({ principals: ['alice'], readsPerMinute: 6, burst: 9 })];

/** A logger whose records the test can wait for. */
function recordingLogger() {
  const lines: Record<string, unknown>[] = [];
  const waiters: { match: (r: Record<string, unknown>) => boolean; resolve: () => void }[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        const r = JSON.parse(line) as Record<string, unknown>;
        lines.push(r);
        for (const w of waiters.filter((w) => w.match(r))) w.resolve();
      }
      done();
    },
  });
  const logger = createLogger({ level: 'info', destination });
  const next = (match: (r: Record<string, unknown>) => boolean) => {
    const d = deferred();
    waiters.push({ match, resolve: d.resolve });
    return d.promise;
  };
  return { logger, lines, next };
}

/** Resolves when `cluster`'s link is up. */
function up(c: Cluster, log: ReturnType<typeof recordingLogger>): Promise<void> {
  if (c.counters.up === 1) return Promise.resolve();
  return within(
    log.next((r) => r.msg === 'redis connected: limits, change events and reloads are shared'),
    'redis to connect',
  );
}

describe('shared state through a real redis-server', () => {
  let redis: RedisServer;
  const replicas: { cluster: Cluster; log: ReturnType<typeof recordingLogger> }[] = [];
  beforeAll(async () => {
    redis = await RedisServer.start();
    for (const chain of ['r1', 'r2', 'r3']) {
      const log = recordingLogger();
      const connected = log.next((r) => r.msg === 'redis connected: limits, change events and reloads are shared');
      const config = RedisSchema.parse({ url: redis.url, keyPrefix: 'test:', replicas: 3, chain, reloadChannel: 'reload', dedupeMs: 100 });
      const cluster = await openCluster(config, { logger: log.logger });
      await within(connected, `replica ${chain} to connect`);
      replicas.push({ cluster, log });
    }
  });
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.cluster.close()));
    await redis?.[Symbol.asyncDispose]();
  });

  it('three replicas share one bucket: the burst is granted once in total, the refusals say when to retry; an unlimited caller costs no round trip', async () => {
    const limiters = replicas.map((r) => r.cluster.limiter('reads', LIMITS));
    const before = replicas.map((r) => r.cluster.counters.roundTrips);
    const answers = [];
    for (let i = 0; i < 15; i++) answers.push(await limiters[i % 3]!.take(alice));
    expect(answers.filter((a) => a.ok)).toHaveLength(9);
    const refused = answers.filter((a) => !a.ok) as { retryAfterMs: number }[];
    for (const r of refused) expect(r.retryAfterMs).toBeGreaterThan(0);
    for (const r of refused) expect(r.retryAfterMs).toBeLessThanOrEqual(10_000);
    expect(replicas.map((r, i) => r.cluster.counters.roundTrips - before[i]!)).toEqual([5, 5, 5]);
    // Another bucket name is another bucket (the `calls` of tools, say), for the same principal.
    expect(await limiters[0]!.take(alice)).toMatchObject({ ok: false });
    expect(await replicas[0]!.cluster.limiter('calls', LIMITS).take(alice)).toEqual({ ok: true });
    const trips = replicas[1]!.cluster.counters.roundTrips;
    for (let i = 0; i < 5; i++) expect(limiters[1]!.take(nobody)).toEqual({ ok: true });
    expect(replicas[1]!.cluster.counters.roundTrips).toBe(trips);
    expect(replicas.every((r) => r.cluster.counters.fallbacks === 0)).toBe(true);
  });

  it('Redis down: each replica decides on its own bucket of burst / replicas at once, logs it, counts it; Redis back: shared again', async () => {
    const limiters = replicas.map((r) => r.cluster.limiter('reads', LIMITS));
    const down = replicas.map((r) => r.log.next((l) => typeof l.msg === 'string' && l.msg.startsWith('redis unreachable')));
    await redis.kill();
    await within(Promise.all(down), 'every replica to notice');
    const local = [];
    for (const l of limiters) for (let i = 0; i < 5; i++) local.push(await l.take(alice));
    // 9 / 3 = 3 each, decided locally without waiting.
    expect(local.filter((a) => a.ok)).toHaveLength(9);
    for (const r of replicas) expect(r.cluster.counters.fallbacks).toBeGreaterThanOrEqual(5);
    expect(replicas.every((r) => r.cluster.counters.up === 0)).toBe(true);

    await redis.restart();
    await within(Promise.all(replicas.map((r) => up(r.cluster, r.log))), 'every replica to reconnect');
    // A fresh Redis (no persistence) holds full buckets: the burst again, once in total.
    const fallbacks = replicas.map((r) => r.cluster.counters.fallbacks);
    const shared = [];
    for (let i = 0; i < 12; i++) shared.push(await limiters[i % 3]!.take(alice));
    expect(shared.filter((a) => a.ok)).toHaveLength(9);
    expect(replicas.map((r) => r.cluster.counters.fallbacks)).toEqual(fallbacks);
  });

  it('a change published by one replica reaches the others once each, never itself; foreign or malformed messages are dropped', async () => {
    const heard: ChangeEvent[][] = [[], [], []];
    const all = deferred();
    replicas.forEach((r, i) =>
      r.cluster.onChange((c) => {
        heard[i]!.push(c);
        if (heard[1]!.length === 2 && heard[2]!.length === 2) all.resolve();
      }),
    );
    // Sent raw on the channel by someone else: not one of ours, dropped.
    const { createClient } = await import('redis');
    const raw = createClient({ url: redis.url });
    await raw.connect();
    for (const junk of [
      'nope',
      '{}',
      '{"o":"x","kind":"updated","server":"s"}',
      JSON.stringify({ o: 'x', kind: 'evil', server: 's' }),
      JSON.stringify({ o: 'x', kind: 'list', server: 's', list: 'secrets' }),
      JSON.stringify({ o: 'x', kind: 'list', server: 's', list: ['tools'] }),
      'x'.repeat(20_000),
    ]) {
      await raw.publish('test:changes', junk);
    }
    replicas[0]!.cluster.publishChange({ kind: 'updated', server: 'docs', uri: 'file:///a' });
    replicas[0]!.cluster.publishChange({ kind: 'list', server: 'docs', list: 'tools' });
    await within(all.promise, 'both changes on both other replicas');
    // A sentinel after them, in order on one channel: nothing more was delivered before it.
    const sentinel = deferred();
    replicas[1]!.cluster.onChange((c) => c.kind === 'list' && c.server === 'end' && c.list === 'resources' && sentinel.resolve());
    // A replica from before tool and prompt lists were shared sends no `list`: a resource list change.
    await raw.publish('test:changes', JSON.stringify({ o: 'other', kind: 'list', server: 'end' }));
    await within(sentinel.promise, 'the sentinel');
    await raw.close();
    expect(heard[0]!.filter((c) => c.server !== 'end')).toEqual([]);
    expect(heard[1]!.filter((c) => c.server !== 'end')).toEqual([
      { kind: 'updated', server: 'docs', uri: 'file:///a' },
      { kind: 'list', server: 'docs', list: 'tools' },
    ]);
  });

  it('a reload published by one replica runs on every other one', async () => {
    const ran = [0, 0, 0];
    const both = deferred();
    replicas.forEach((r, i) =>
      r.cluster.onReload(() => {
        ran[i]!++;
        if (ran[1] === 1 && ran[2] === 1) both.resolve();
      }),
    );
    replicas[0]!.cluster.publishReload();
    await within(both.promise, 'the other replicas to reload');
    expect(ran[0]).toBe(0);
  });

  it('leased tokens go back: those of the limits a reload replaced, and at close every open limiter’s, before the link closes', async () => {
    const log = recordingLogger();
    const connected = log.next((r) => r.msg === 'redis connected: limits, change events and reloads are shared');
    // 600 a minute with a minute's lease: each of 3 replicas may lease min(600, 1000 / 10) / 3 = 33 tokens.
    const cluster = await openCluster(RedisSchema.parse({ url: redis.url, keyPrefix: 'closing:', replicas: 3, chain: 'closing', leaseMs: 60_000 }), {
      logger: log.logger,
    });
    await within(connected, 'the closing replica to connect');
    const counters = cluster.counters;
    const limits = { limits: [{ principals: ['alice'], readsPerMinute: 600, burst: 1000 }] };
    const docs = createUpstreamServer({ resources: [], read: (uri: string) => ({ contents: [{ uri, text: 'x' }] }) });
    const readThrough = async (client: Awaited<ReturnType<Awaited<ReturnType<typeof startHarness>>['client']>>, n: number) => {
      for (let i = 0; i < n; i++) await client.readResource({ uri: `docs+memo:${i}` });
    };
    try {
      await using h = await startHarness({ upstreams: { docs: () => docs.server }, config: limits, cluster });
      const client = await h.client({ principal: 'alice', roles: [], transport: 'stdio' });
      await readThrough(client, 5);
      expect(counters.leasedTokens).toBeGreaterThan(5);
      const returned = counters.returnedTokens;
      h.proxy.reload(parseConfig({ servers: { docs: { command: 'inmemory:docs' } }, ...limits }, { env: {} }));
      // The replaced limiter gives its lease back (not awaited by the reload; its round trip lands soon after).
      await vi.waitFor(() => expect(counters.returnedTokens - returned).toBe(counters.leasedTokens - 5), { timeout: 5000 });
      await readThrough(client, 3); // the new limits lease afresh
      const leased = counters.leasedTokens;
      expect(leased - (returned + 5)).toBeGreaterThan(3);
    } finally {
      const before = { leased: counters.leasedTokens, returned: counters.returnedTokens };
      await cluster.close();
      // Everything leased and not served went back, the new limits' lease by the cluster's close.
      expect(counters.returnedTokens).toBeGreaterThan(before.returned);
      expect(counters.leasedTokens - counters.returnedTokens).toBe(8);
    }
  });

  it('a replica started while Redis is unreachable serves at once on its fallback, and shares once Redis appears', async () => {
    const port = await freePort();
    const log = recordingLogger();
    const cluster = await openCluster(RedisSchema.parse({ url: `redis://127.0.0.1:${port}`, replicas: 3, chain: 'late' }), { logger: log.logger });
    try {
      const limiter = cluster.limiter('reads', LIMITS);
      const local = [];
      for (let i = 0; i < 5; i++) local.push(limiter.take(alice)); // synchronous: nothing waits for Redis
      expect(local.filter((a) => !(a instanceof Promise) && a.ok)).toHaveLength(3);
      expect(cluster.counters).toMatchObject({ up: 0, fallbacks: 5, roundTrips: 0 });
      const connected = log.next((r) => r.msg === 'redis connected: limits, change events and reloads are shared');
      const late = await RedisServer.startOn(port);
      try {
        await within(connected, 'the late Redis to be found');
        expect(await limiter.take(alice)).toEqual({ ok: true });
        expect(cluster.counters.fallbacks).toBe(5);
      } finally {
        await late[Symbol.asyncDispose]();
      }
    } finally {
      await cluster.close();
      await cluster.close(); // idempotent
    }
  });
});
