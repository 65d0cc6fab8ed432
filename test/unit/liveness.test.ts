// Upstream liveness on an injected clock: idle pings, consecutive misses, activity deferring pings, close.
import { describe, expect, it } from 'vitest';
import { Liveness, type LivenessClock } from '../../src/upstream/liveness.js';

/** A manual clock: timers fire only when the test advances time. */
class ManualClock implements LivenessClock {
  time = 0;
  private timers: { at: number; fn: () => void }[] = [];
  now = () => this.time;
  after = (fn: () => void, ms: number) => {
    const t = { at: this.time + ms, fn };
    this.timers.push(t);
    return () => void (this.timers = this.timers.filter((x) => x !== t));
  };
  /** Advances to `ms` later, firing due timers in order, letting promises settle after each. */
  async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    for (;;) {
      await flush();
      const due = this.timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.time = Math.max(this.time, due.at);
      due.fn();
    }
    this.time = end;
    await flush();
  }
  get pending(): number {
    return this.timers.length;
  }
}

const flush = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

function watch(clock: ManualClock, answer: (timeoutMs: number) => Promise<void>, failures = 2) {
  const pings: number[] = [];
  const dead: number[] = [];
  const live = new Liveness({
    intervalMs: 1000,
    failures,
    timeoutMs: 30_000,
    clock,
    ping: (ms) => {
      pings.push(ms);
      return answer(ms);
    },
    onDead: (misses) => dead.push(misses),
  });
  live.start();
  return { live, pings, dead };
}

describe('Liveness', () => {
  it('pings once idle for the interval; an answered ping keeps the connection', async () => {
    const clock = new ManualClock();
    const { pings, dead } = watch(clock, () => Promise.resolve());
    await clock.advance(999);
    expect(pings).toEqual([]);
    await clock.advance(1);
    expect(pings).toEqual([500]); // each ping waits at most interval / failures
    await clock.advance(5000);
    expect(pings.length).toBe(6);
    expect(dead).toEqual([]);
  });

  it('an error answer is a sign of life too (only a rejected ping counts)', async () => {
    const clock = new ManualClock();
    let n = 0;
    const { dead } = watch(clock, () => (n++ % 2 === 0 ? Promise.reject(new Error('timeout')) : Promise.resolve()));
    await clock.advance(10_000);
    expect(dead).toEqual([]); // misses never come two in a row
  });

  it('declares the connection dead after `failures` unanswered pings in a row, within two intervals, once', async () => {
    const clock = new ManualClock();
    // A silent upstream: each ping times out after the time it was given.
    const { pings, dead } = watch(clock, (ms) => new Promise((_, reject) => clock.after(() => reject(new Error('timeout')), ms)));
    await clock.advance(2000);
    expect(pings).toEqual([500, 500]);
    expect(dead).toEqual([2]);
    expect(clock.pending).toBe(0); // nothing armed after death
    await clock.advance(10_000);
    expect(dead).toEqual([2]);
  });

  it('activity defers the next ping', async () => {
    const clock = new ManualClock();
    const { live, pings } = watch(clock, () => Promise.resolve());
    await clock.advance(800);
    live.heard();
    await clock.advance(800);
    expect(pings).toEqual([]); // idle for 800 ms only
    await clock.advance(200);
    expect(pings.length).toBe(1);
  });

  it('close stops it for good; interval 0 never pings', async () => {
    const clock = new ManualClock();
    const { live, pings } = watch(clock, () => Promise.resolve());
    live.close();
    live.close();
    await clock.advance(10_000);
    expect(pings).toEqual([]);
    const off = new Liveness({ intervalMs: 0, failures: 2, timeoutMs: 1, clock, ping: () => Promise.resolve(), onDead: () => undefined });
    off.start();
    expect(clock.pending).toBe(0);
  });
});
