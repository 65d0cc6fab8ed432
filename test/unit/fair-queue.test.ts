// FairQueue: concurrency bound, a fair share per key, queued tasks leave on abort.
import { describe, expect, it } from 'vitest';
import { FairQueue } from '../../src/fair-queue.js';
import { deferred } from '../helpers/gate.js';

describe('FairQueue', () => {
  it('lets one key hold at most half the slots, so another key runs at once', async () => {
    const q = new FairQueue(4);
    const hung = deferred();
    const started: string[] = [];
    const hot = Array.from({ length: 10 }, (_, i) =>
      q.run('hot', async () => {
        started.push(`hot${i}`);
        await hung.promise;
      }),
    );
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['hot0', 'hot1']);
    expect(q.wouldWait('hot')).toBe(true);
    expect(q.wouldWait('cold')).toBe(false);
    expect(await q.run('cold', async () => 'ran')).toBe('ran');
    hung.resolve();
    await Promise.all(hot);
    expect(started).toHaveLength(10);
  });

  it('never runs more than `concurrency` tasks across keys', async () => {
    const q = new FairQueue(3);
    let running = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        q.run(`k${i % 7}`, async () => {
          peak = Math.max(peak, ++running);
          await new Promise((r) => setImmediate(r));
          running--;
        }),
      ),
    );
    expect(peak).toBe(3);
  });

  it('a task aborted while waiting for its key never runs, and its place goes to the next', async () => {
    const q = new FairQueue(2); // one per key
    const gate = deferred();
    const ran: number[] = [];
    const first = q.run('k', async () => {
      ran.push(1);
      await gate.promise;
    });
    const stop = new AbortController();
    const second = q.run('k', async () => void ran.push(2), stop.signal);
    const third = q.run('k', async () => void ran.push(3));
    stop.abort(new Error('gave up'));
    await expect(second).rejects.toThrow('gave up');
    gate.resolve();
    await Promise.all([first, third]);
    expect(ran).toEqual([1, 3]);
  });
});
