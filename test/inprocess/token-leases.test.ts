// Leases of shared rate-limit tokens against a real redis-server: three limiters (replicas) never grant more than one bucket, the tokens held stay bounded and are given back, Redis dying mid-lease falls back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { createClient } from 'redis';
import { SharedRateLimiter } from '../../src/access/shared-limiter.js';
import { BURST_SHARE, leaseCap } from '../../src/access/token-leases.js';
import type { TakeResult } from '../../src/access/rate-limiter.js';
import { RateLimitSchema, RedisSchema } from '../../src/config/schema.js';
import { createLogger } from '../../src/logger.js';
import type { SharedLink } from '../../src/shared-state/link.js';
import { preloadScripts } from '../../src/shared-state/lua-script.js';
import { openRedisLink } from '../../src/shared-state/redis-link.js';
import { TOKEN_BUCKET } from '../../src/shared-state/token-bucket.js';
import { GIVE_BACK, TOKEN_LEASE } from '../../src/shared-state/token-lease.js';
import { RedisServer } from '../helpers/services.js';
import { deferred, within } from '../helpers/gate.js';

// 60 a minute (one token a second) and a burst of 600; a lease window of a minute: each of 3 replicas
// may hold min(60, 60) / 3 = 20 tokens. The bucket is nearly empty under 3 × 20 = 60.
const LEASE_MS = 60_000;
const LIMITS = [RateLimitSchema.parse({ readsPerMinute: 60, burst: 600 })];
const CAP = 20;
const PREFIX = 'lease-test:';

const quiet = createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, done) => done() }) });

/** A link to `url` that is up (its scripts loaded). */
async function linkTo(url: string): Promise<SharedLink> {
  const link = await openRedisLink(RedisSchema.parse({ url, keyPrefix: PREFIX }), { logger: quiet });
  const up = deferred();
  link.onState((isUp) => isUp && up.resolve());
  preloadScripts(link, [TOKEN_BUCKET, TOKEN_LEASE, GIVE_BACK], 1000);
  if (!link.ready) await within(up.promise, 'redis to connect');
  await link.command(['PING'], 1000); // the scripts' SCRIPT LOADs went first on this connection
  return link;
}

/** A clock the test moves. */
function manualClock() {
  let t = 1_000;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

const who = (principal: string) => ({ principal, roles: [] as string[] });
const okCount = (answers: TakeResult[]) => answers.filter((a) => a.ok).length;

/** The bucket's tokens as Redis stored them at its last script call (absent = full). */
async function bucketTokens(url: string, principal: string): Promise<number> {
  const raw = createClient({ url });
  await raw.connect();
  try {
    const b = await raw.hGetAll(`${PREFIX}rl:reads:${principal}`);
    return b.t === undefined ? 600 : Number(b.t);
  } finally {
    await raw.close();
  }
}

describe('leases of shared rate-limit tokens, real redis-server', () => {
  let redis: RedisServer;
  const links: SharedLink[] = [];
  const clock = manualClock();
  let limiters: SharedRateLimiter[];
  beforeAll(async () => {
    redis = await RedisServer.start();
    for (let i = 0; i < 3; i++) links.push(await linkTo(redis.url));
    limiters = links.map((link) => new SharedRateLimiter('reads', LIMITS, link, { replicas: 3, timeoutMs: 2000, leaseMs: LEASE_MS, now: clock.now }));
  });
  afterAll(async () => {
    for (const l of limiters ?? []) await l.close();
    await Promise.all(links.map((l) => l.close()));
    await redis?.[Symbol.asyncDispose]();
  });

  it('the cap: the replicas together hold at most one lease window of refill and a tenth of the burst; small limits take no lease', () => {
    expect(leaseCap(600, 60 / 60_000, 3, LEASE_MS)).toBe(CAP);
    expect(leaseCap(600, 6000 / 60_000, 3, LEASE_MS)).toBe(Math.floor((600 * BURST_SHARE) / 3));
    // The example's 600 a minute, burst 100, with the default 250 ms: 2.5 tokens for 3 replicas, under 2 each.
    expect(leaseCap(100, 600 / 60_000, 3, 250)).toBeLessThan(2);
    expect(leaseCap(1_000_000, 1000, 3, 0)).toBe(0);
  });

  it('three replicas taking concurrently never get more than the one bucket holds, hold at most their cap, and spend far fewer round trips than takes', async () => {
    const started = performance.now();
    const trips = () => links.reduce((n, l) => n + l.counters.roundTrips, 0);
    const tripsBefore = trips();
    const wave = (n: number) => Promise.all(Array.from({ length: n }, (_, i) => Promise.resolve(limiters[i % 3]!.take(who('spread')))));

    // 450 takes, 10 at a time per replica: the bucket (600) never falls under its reserve (60), so all are served from leases.
    const first: TakeResult[] = [];
    for (let i = 0; i < 15; i++) first.push(...(await wave(30)));
    expect(okCount(first)).toBe(450);
    expect(trips() - tripsBefore).toBeLessThan(450 / 4);
    for (const l of limiters) expect(l.leases.heldTokens).toBeLessThanOrEqual(CAP);
    expect(links.reduce((n, l) => n + l.counters.leasedTokens, 0)).toBe(450 + limiters.reduce((n, l) => n + l.leases.heldTokens, 0));

    // 750 more: the bucket runs dry; the refusals say when to retry.
    const second: TakeResult[] = [];
    for (let i = 0; i < 25; i++) second.push(...(await wave(30)));
    const refused = second.filter((a) => !a.ok) as { retryAfterMs: number }[];
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect(r.retryAfterMs).toBeGreaterThan(0);
    for (const r of refused) expect(r.retryAfterMs).toBeLessThanOrEqual(1000);
    const held = limiters.reduce((n, l) => n + l.leases.heldTokens, 0);
    expect(held).toBeLessThanOrEqual(3 * CAP);
    // Whatever each replica still holds, each drains it and is then refused: the total is the burst, within the refill since the start.
    const last: TakeResult[] = [];
    for (const l of limiters) for (let a = await l.take(who('spread')); a.ok; a = await l.take(who('spread'))) last.push(a);
    const refill = (performance.now() - started) / 1000 + 1;
    const total = okCount(first) + okCount(second) + last.length;
    expect(total).toBeGreaterThanOrEqual(600);
    expect(total).toBeLessThanOrEqual(600 + refill);
    for (const l of limiters) expect(l.leases.heldTokens).toBe(0);
    expect(links.every((l) => l.counters.fallbacks === 0)).toBe(true);
  });

  it('a lease unused for leaseMs is given back to the bucket, by the sweep or by the next take; an expired lease is never served from', async () => {
    const [r1, r2] = limiters as [SharedRateLimiter, SharedRateLimiter];
    for (let i = 0; i < 7; i++) expect(await r1.take(who('idle'))).toEqual({ ok: true });
    await r1.leases.settled(); // a refill fetched ahead has landed
    const held = r1.leases.heldTokens;
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThanOrEqual(CAP);
    const inRedis = await bucketTokens(redis.url, 'idle');
    const returned = links[0]!.counters.returnedTokens;

    // Not yet expired: the sweep keeps it.
    clock.advance(LEASE_MS - 1);
    await r1.leases.sweep();
    expect(r1.leases.heldTokens).toBe(held);
    clock.advance(1);
    await r1.leases.sweep();
    expect(r1.leases.heldTokens).toBe(0);
    expect(links[0]!.counters.returnedTokens).toBe(returned + held);
    const after = await bucketTokens(redis.url, 'idle');
    expect(after).toBeGreaterThanOrEqual(inRedis + held);
    expect(after).toBeLessThan(inRedis + held + 5); // plus at most the seconds of refill since

    // Expiry found by a take: the old tokens go back, the take is served from a fresh lease.
    for (let i = 0; i < 3; i++) await r2.take(who('idle'));
    await r2.leases.settled();
    const held2 = r2.leases.heldTokens;
    expect(held2).toBeGreaterThan(0);
    const leased = links[1]!.counters.leasedTokens;
    clock.advance(LEASE_MS);
    expect(await r2.take(who('idle'))).toEqual({ ok: true });
    expect(links[1]!.counters.leasedTokens).toBeGreaterThan(leased); // a new lease, not the expired one
    await r2.leases.settled(); // the give-back is counted
    expect(links[1]!.counters.returnedTokens).toBeGreaterThanOrEqual(held2);
  });

  it('the lease size adapts: it grows while the demand drains it fast, never past the cap, and halves after a lease expires unused', async () => {
    const r3 = limiters[2]!;
    const counters = links[2]!.counters;
    const trips = counters.roundTrips;
    for (let i = 0; i < 200; i++) {
      expect(await r3.take(who('adapt'))).toEqual({ ok: true });
      await r3.leases.settled();
      expect(r3.leases.heldTokens).toBeLessThanOrEqual(CAP);
    }
    // Sizes 2, 4, 8, 16, then the cap (20), refilled at a quarter: far fewer than one request per take.
    expect(counters.roundTrips - trips).toBeLessThanOrEqual(200 / 8);
    clock.advance(LEASE_MS);
    await r3.leases.sweep();
    expect(r3.leases.heldTokens).toBe(0);
    const leased = counters.leasedTokens;
    expect(await r3.take(who('adapt'))).toEqual({ ok: true });
    await r3.leases.settled();
    expect(counters.leasedTokens - leased).toBe(CAP / 2);
    expect(r3.leases.heldTokens).toBe(CAP / 2 - 1);
  });

  it('a hostile principal spread (thousands of principals) cannot grow the leases past maxPrincipals; dropped leases are given back', async () => {
    const link = links[2]!;
    const small = new SharedRateLimiter('reads', LIMITS, link, { replicas: 3, timeoutMs: 2000, leaseMs: LEASE_MS, now: clock.now, maxPrincipals: 16 });
    try {
      const returned = link.counters.returnedTokens;
      for (let i = 0; i < 300; i++) {
        expect(await small.take(who(`p${i}`))).toEqual({ ok: true });
        expect(small.leases.size).toBeLessThanOrEqual(16);
      }
      expect(small.leases.heldTokens).toBeLessThanOrEqual(16 * CAP);
      await small.leases.settled();
      // Each principal leased 2 and used 1; every one of the 284 dropped gave its other one back.
      expect(link.counters.returnedTokens - returned).toBe(300 - 16);
    } finally {
      await small.close();
      await small.close(); // idempotent
    }
  });

  it('close gives back every leased token, and what a lease request still in flight granted; takes after it are served one round trip each and hold nothing', async () => {
    const link = links[1]!;
    const r = new SharedRateLimiter('reads', LIMITS, link, { replicas: 3, timeoutMs: 2000, leaseMs: LEASE_MS, now: clock.now });
    let closedCalls = 0;
    const tracked = new SharedRateLimiter('reads', LIMITS, link, {
      replicas: 3,
      timeoutMs: 2000,
      leaseMs: LEASE_MS,
      now: clock.now,
      onClose: () => closedCalls++,
    });
    const inRedis = await bucketTokens(redis.url, 'closing');
    const returned = link.counters.returnedTokens;
    const leased = link.counters.leasedTokens;
    let served = 0;
    for (let i = 0; i < 5; i++) served += Number((await r.take(who('closing'))).ok);
    // A take that starts a lease request, and close called before the request has landed.
    const waiting = [r.take(who('closing-2')), r.take(who('closing-2'))];
    const closing = r.close();
    const answers = await Promise.all(waiting.map((a) => Promise.resolve(a)));
    await closing;
    served += okCount(answers);
    expect(served).toBe(7);
    expect(r.leases.heldTokens).toBe(0);
    // Every token leased and not served went back, the one in flight at close included.
    expect(link.counters.returnedTokens - returned).toBe(link.counters.leasedTokens - leased - served);
    expect(link.counters.leasedTokens - leased).toBeGreaterThan(served);
    expect(await bucketTokens(redis.url, 'closing')).toBeGreaterThanOrEqual(inRedis - 5);

    // After close: each take is one round trip for one token; nothing is leased or held.
    const trips = link.counters.roundTrips;
    const leasedBefore = link.counters.leasedTokens;
    for (let i = 0; i < 4; i++) expect(await r.take(who('closing'))).toEqual({ ok: true });
    expect(link.counters.roundTrips - trips).toBe(4);
    expect(link.counters.leasedTokens).toBe(leasedBefore);
    expect(r.leases.heldTokens).toBe(0);
    await r.close(); // idempotent
    expect(r.leases.heldTokens).toBe(0);

    // onClose (how a cluster stops tracking a limiter) runs once.
    await tracked.close();
    await tracked.close();
    expect(closedCalls).toBe(1);
  });

  it('a limit too small to lease (the example 600 a minute, burst 100, default leaseMs) is one round trip per take, as without leases', async () => {
    const example = [RateLimitSchema.parse({ readsPerMinute: 600, burst: 100 })];
    const r = new SharedRateLimiter('reads', example, links[0]!, { replicas: 3, timeoutMs: 2000, now: clock.now });
    const off = new SharedRateLimiter('reads', LIMITS, links[0]!, { replicas: 3, timeoutMs: 2000, leaseMs: 0, now: clock.now });
    const before = links[0]!.counters.roundTrips;
    for (let i = 0; i < 10; i++) expect(await r.take(who('example'))).toEqual({ ok: true });
    for (let i = 0; i < 10; i++) expect(await off.take(who('no-lease'))).toEqual({ ok: true });
    expect(links[0]!.counters.roundTrips - before).toBe(20);
    expect(r.leases.size + off.leases.size).toBe(0);
  });
});

describe('Redis dying mid-lease', () => {
  it('takes waiting on a lease request, and takes after, are all answered by the 1/N fallback; none hangs', async () => {
    const redis = await RedisServer.start();
    const link = await linkTo(redis.url);
    const clock = manualClock();
    const limiter = new SharedRateLimiter('reads', LIMITS, link, { replicas: 3, timeoutMs: 5000, leaseMs: LEASE_MS, now: clock.now });
    try {
      expect(await limiter.take(who('held'))).toEqual({ ok: true });
      expect(limiter.leases.heldTokens).toBeGreaterThan(0);
      // Redis stops answering (paused), so the next lease request is in flight when it dies.
      const raw = createClient({ url: redis.url });
      await raw.connect();
      await raw.sendCommand(['CLIENT', 'PAUSE', '60000', 'ALL']);
      const waiting = Array.from({ length: 20 }, () => limiter.take(who('waiting')));
      expect(waiting.every((w) => w instanceof Promise)).toBe(true);
      raw.destroy();
      await redis.kill();
      const answers = await within(Promise.all(waiting.map((w) => Promise.resolve(w))), 'every waiting take to be answered');
      // The fallback: burst 600 / 3 replicas, all granted, each counted.
      expect(okCount(answers)).toBe(20);
      expect(link.counters.fallbacks).toBe(20);
      // The link is down now: a principal holding a lease is decided by the fallback too, at once.
      const gone = deferred();
      link.onState((up) => !up && gone.resolve());
      if (link.ready) await within(gone.promise, 'the link to notice');
      const after = limiter.take(who('held'));
      expect(after).toEqual({ ok: true });
      expect(link.counters.fallbacks).toBe(21);
    } finally {
      await redis[Symbol.asyncDispose]();
      await limiter.close();
      await link.close();
    }
  });

  it('a Redis that stops answering: the waiting takes fall back after redis.timeoutMs', async () => {
    const redis = await RedisServer.start();
    const link = await linkTo(redis.url);
    const limiter = new SharedRateLimiter('reads', LIMITS, link, { replicas: 3, timeoutMs: 200, leaseMs: LEASE_MS });
    const raw = createClient({ url: redis.url });
    try {
      await raw.connect();
      await raw.sendCommand(['CLIENT', 'PAUSE', '60000', 'ALL']);
      const answers = await within(Promise.all(Array.from({ length: 5 }, () => Promise.resolve(limiter.take(who('paused'))))), 'the takes to time out');
      expect(okCount(answers)).toBe(5);
      expect(link.counters.fallbacks).toBe(5);
    } finally {
      // Killed first: nothing can quit politely from a paused server.
      raw.destroy();
      await redis[Symbol.asyncDispose]();
      await limiter.close();
      await link.close();
    }
  });
});
