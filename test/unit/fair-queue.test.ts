// FairQueue: concurrency bound, a fair share per key, deadlines that count the wait, clear.
import { describe, expect, it } from 'vitest';
import { FairQueue } from '../../src/upstream/fair-queue.js';
import { deferred } from '../helpers/gate.js';

const later = () => performance.now() + 60_000;
const timedOut = () => new Error('timed out');

describe('FairQueue', () => {
  it('lets one key hold at most half the slots, so another key runs at once', async () => {
    const q = new FairQueue(4);
    const hung = deferred();
    const started: string[] = [];
    const hot = Array.from({ length: 10 }, (_, i) =>
      q.run(
        'hot',
        async () => {
          started.push(`hot${i}`);
          await hung.promise;
        },
        later(),
        timedOut,
      ),
    );
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['hot0', 'hot1']);
    expect(q.wouldWait('hot')).toBe(true);
    expect(q.wouldWait('cold')).toBe(false);
    expect(await q.run('cold', async () => 'ran', later(), timedOut)).toBe('ran');
    hung.resolve();
    await Promise.all(hot);
    expect(started).toEqual(Array.from({ length: 10 }, (_, i) => `hot${i}`)); // in arrival order
  });

  it('never runs more than `concurrency` tasks across keys', async () => {
    const q = new FairQueue(3);
    let running = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        q.run(
          `k${i % 7}`,
          async () => {
            peak = Math.max(peak, ++running);
            await new Promise((r) => setImmediate(r));
            running--;
          },
          later(),
          timedOut,
        ),
      ),
    );
    expect(peak).toBe(3);
  });

  it('rejects a task still waiting at its deadline, which then never runs; its slot passes on', async () => {
    const q = new FairQueue(2); // one per key
    const gate = deferred();
    const ran: number[] = [];
    const first = q.run(
      'k',
      async () => {
        ran.push(1);
        await gate.promise;
      },
      later(),
      timedOut,
    );
    const soon = q.run('k', async () => void ran.push(2), performance.now() + 20, timedOut);
    const patient = q.run('k', async () => void ran.push(3), later(), timedOut);
    await expect(soon).rejects.toThrow('timed out'); // while the first still holds the key's share
    gate.resolve();
    await Promise.all([first, patient]);
    expect(ran).toEqual([1, 3]);
  });

  it('clear rejects every task that has not started', async () => {
    const q = new FairQueue(1);
    const gate = deferred();
    const running = q.run('a', () => gate.promise, later(), timedOut);
    const waiting = [q.run('b', async () => 'b', later(), timedOut), q.run('a', async () => 'a', later(), timedOut)];
    q.clear(new Error('closed'));
    for (const w of waiting) await expect(w).rejects.toThrow('closed');
    gate.resolve();
    await running;
  });

  it('lets go of every task once it has started: the line does not grow with the traffic it served', async () => {
    const q = new FairQueue(2);
    await Promise.all(Array.from({ length: 500 }, (_, i) => q.run(`k${i % 5}`, async () => new Promise((r) => setImmediate(r)), later(), timedOut)));
    expect(q.waiting).toBe(0);
    expect(q.lineLength).toBe(0);
  });

  it('keeps slots for other principals: one principal with slow tasks on many keys never holds them all', async () => {
    const q = new FairQueue(16); // the default concurrency: one principal may hold 14
    const hung = deferred();
    let hogging = 0;
    const hog = Array.from({ length: 40 }, (_, i) =>
      q.run(
        `slow${i}`,
        async () => {
          hogging++;
          await hung.promise;
        },
        later(),
        timedOut,
        'mallory',
      ),
    );
    expect(hogging).toBe(14);
    expect(q.wouldWait('fast', 'mallory')).toBe(true);
    expect(q.wouldWait('fast', 'alice')).toBe(false);
    expect(await q.run('fast', async () => 'ran', later(), timedOut, 'alice')).toBe('ran');
    hung.resolve();
    await Promise.all(hog);
    expect(hogging).toBe(40);
  });

  it('hands freed slots round-robin across principals, not in arrival order', async () => {
    const q = new FairQueue(1);
    const gates = new Map<string, { resolve: () => void }>();
    const order: string[] = [];
    const task = (name: string) => async () => {
      order.push(name);
      const g = deferred();
      gates.set(name, g);
      await g.promise;
    };
    const all = [
      q.run('k', task('m0'), later(), timedOut, 'mallory'),
      ...Array.from({ length: 5 }, (_, i) => q.run(`m${i + 1}`, task(`m${i + 1}`), later(), timedOut, 'mallory')),
      q.run('a', task('a0'), later(), timedOut, 'alice'),
      q.run('b', task('b0'), later(), timedOut, 'bob'),
    ];
    for (let i = 0; i < 8; i++) {
      await new Promise((r) => setImmediate(r));
      gates.get(order.at(-1)!)!.resolve();
    }
    await Promise.all(all);
    // After mallory's first task, alice and bob each wait for one freed slot, not for mallory's five queued ones.
    expect(order.slice(0, 4)).toEqual(['m0', 'm1', 'a0', 'b0']);
  });
});
