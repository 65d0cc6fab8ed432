// Read rate limits on a fake clock: burst, refill, retry-after, per principal, first entry wins, bounded memory.
import { describe, expect, it } from 'vitest';
import { RateLimiter, type RateLimitSubject } from '../../src/access/rate-limiter.js';
import { parseConfig, type FederateConfigInput } from '../../src/config/load.js';

/** A clock the test moves by hand. */
function fakeClock(start = 1_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms), set: (ms: number) => void (t = ms) };
}

/** Limits as the config yields them (burst defaults filled in). */
const limitsOf = (limits: FederateConfigInput['limits']) => parseConfig({ servers: { a: { command: 'x' } }, limits }, { env: {} }).limits.reads;

const alice: RateLimitSubject = { principal: 'alice', roles: ['eng'] };
const bob: RateLimitSubject = { principal: 'bob', roles: ['eng'] };
const carol: RateLimitSubject = { principal: 'carol', roles: ['sales'] };

/** Takes `n` reads at the current time and returns how many were allowed. */
const takeMany = (limiter: RateLimiter, caller: RateLimitSubject, n: number) =>
  Array.from({ length: n }, () => limiter.take(caller)).filter((r) => r.ok).length;

describe('RateLimiter', () => {
  it('allows the burst at once, then refuses with the time until the next token', () => {
    const clock = fakeClock();
    const limiter = new RateLimiter(limitsOf([{ roles: ['eng'], readsPerMinute: 600, burst: 50 }]), clock);
    expect(takeMany(limiter, alice, 50)).toBe(50);
    expect(limiter.take(alice)).toEqual({ ok: false, retryAfterMs: 100 });
    clock.advance(99);
    expect(limiter.take(alice)).toEqual({ ok: false, retryAfterMs: 1 });
    clock.advance(1);
    expect(limiter.take(alice)).toEqual({ ok: true });
    expect(limiter.take(alice)).toEqual({ ok: false, retryAfterMs: 100 });
  });

  it('waiting exactly retryAfterMs is always enough', () => {
    const clock = fakeClock();
    const limiter = new RateLimiter(limitsOf([{ readsPerMinute: 7, burst: 1 }]), clock);
    expect(limiter.take(alice).ok).toBe(true);
    for (let i = 0; i < 50; i++) {
      const refused = limiter.take(alice);
      expect(refused.ok).toBe(false);
      clock.advance((refused as { retryAfterMs: number }).retryAfterMs);
      expect(limiter.take(alice), `round ${i}`).toEqual({ ok: true });
    }
  });

  it('refills at readsPerMinute and never beyond the burst', () => {
    const clock = fakeClock();
    const limiter = new RateLimiter(limitsOf([{ readsPerMinute: 60, burst: 5 }]), clock);
    expect(takeMany(limiter, alice, 5)).toBe(5);
    clock.advance(3_000);
    expect(takeMany(limiter, alice, 10)).toBe(3);
    clock.advance(3_600_000);
    expect(takeMany(limiter, alice, 10)).toBe(5);
    // A steady minute at the rate: exactly readsPerMinute reads.
    let allowed = 0;
    for (let i = 0; i < 120; i++) {
      clock.advance(500);
      if (limiter.take(alice).ok) allowed++;
    }
    expect(allowed).toBe(60);
  });

  it('the default burst is 10 seconds worth', () => {
    const clock = fakeClock();
    const limiter = new RateLimiter(limitsOf([{ readsPerMinute: 600 }]), clock);
    expect(takeMany(limiter, alice, 200)).toBe(100);
  });

  it('is per principal, never per session', () => {
    const clock = fakeClock();
    const limiter = new RateLimiter(limitsOf([{ roles: ['eng'], readsPerMinute: 60, burst: 2 }]), clock);
    const sessionA = { principal: 'alice', roles: ['eng'], session: 'a', transport: 'http' as const };
    const sessionB = { ...sessionA, session: 'b' };
    expect(limiter.take(sessionA).ok).toBe(true);
    expect(limiter.take(sessionB).ok).toBe(true);
    expect(limiter.take(sessionA).ok).toBe(false);
    expect(limiter.take(sessionB).ok).toBe(false);
    expect(takeMany(limiter, bob, 3)).toBe(2);
  });

  it('the first matching entry applies; no match is unlimited', () => {
    const clock = fakeClock();
    const limiter = new RateLimiter(
      limitsOf([
        { principals: ['bob'], readsPerMinute: 60, burst: 1 },
        { roles: ['eng', 'ops'], readsPerMinute: 60, burst: 3 },
        { principals: ['bob'], readsPerMinute: 60, burst: 100 },
      ]),
      clock,
    );
    expect(limiter.limitFor(bob)?.burst).toBe(1);
    expect(limiter.limitFor(alice)?.burst).toBe(3);
    expect(limiter.limitFor(carol)).toBeUndefined();
    expect(takeMany(limiter, bob, 5)).toBe(1);
    expect(takeMany(limiter, alice, 5)).toBe(3);
    expect(takeMany(limiter, carol, 10_000)).toBe(10_000);
    expect(limiter.size).toBe(2); // unlimited callers hold no bucket
  });

  it('principals and roles together must both match; an entry with neither matches everyone', () => {
    const limiter = new RateLimiter(
      limitsOf([
        { principals: ['alice'], roles: ['ops'], readsPerMinute: 60, burst: 1 },
        { readsPerMinute: 60, burst: 2 },
      ]),
      fakeClock(),
    );
    expect(limiter.limitFor(alice)?.burst).toBe(2);
    expect(limiter.limitFor({ principal: 'alice', roles: ['ops'] })?.burst).toBe(1);
    expect(limiter.limitFor(carol)?.burst).toBe(2);
  });

  it('a principal whose roles change keeps its bucket, capped by the new burst', () => {
    const clock = fakeClock();
    const limiter = new RateLimiter(
      limitsOf([
        { roles: ['trial'], readsPerMinute: 60, burst: 2 },
        { roles: ['eng'], readsPerMinute: 60, burst: 10 },
      ]),
      clock,
    );
    expect(takeMany(limiter, alice, 8)).toBe(8); // 2 left of 10
    const trial = { principal: 'alice', roles: ['trial'] };
    expect(takeMany(limiter, trial, 5)).toBe(2);
    clock.advance(60_000);
    expect(takeMany(limiter, trial, 5)).toBe(2);
  });

  it('a clock that steps back refills nothing', () => {
    const clock = fakeClock(100_000);
    const limiter = new RateLimiter(limitsOf([{ readsPerMinute: 60, burst: 1 }]), clock);
    expect(limiter.take(alice).ok).toBe(true);
    clock.set(50_000);
    expect(limiter.take(alice).ok).toBe(false);
    clock.set(100_500);
    expect(limiter.take(alice).ok).toBe(false);
    clock.set(101_000);
    expect(limiter.take(alice).ok).toBe(true);
  });

  it('holds at most maxPrincipals buckets; a dropped one comes back full', () => {
    const clock = fakeClock();
    const limiter = new RateLimiter(limitsOf([{ readsPerMinute: 60, burst: 1 }]), { ...clock, maxPrincipals: 100 });
    for (let i = 0; i < 1_000; i++) expect(limiter.take({ principal: `p${i}`, roles: [] }).ok).toBe(true);
    expect(limiter.size).toBe(100);
    expect(limiter.take({ principal: 'p999', roles: [] }).ok).toBe(false); // recent: still held
    expect(limiter.take({ principal: 'p0', roles: [] }).ok).toBe(true); // dropped: full again
  });
});
