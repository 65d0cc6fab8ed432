// The turn batch: one write per event-loop turn, lines in order, nothing held past a flush; a failing sink reported to flush's callback.
import { describe, expect, it } from 'vitest';
import { createTurnBatch } from '../../src/turn-batch.js';

/** A batch whose turn ends when the test says so. */
function manual() {
  const writes: string[] = [];
  const ends: (() => void)[] = [];
  const batch = createTurnBatch(
    (text) => void writes.push(text),
    (fn) => void ends.push(fn),
  );
  const endTurn = () => {
    for (const fn of ends.splice(0)) fn();
  };
  return { batch, writes, endTurn, scheduled: () => ends.length };
}

describe('createTurnBatch', () => {
  it('writes the lines of one turn together, in order, once the turn ends', () => {
    const { batch, writes, endTurn, scheduled } = manual();
    batch.write('a\n');
    batch.write('b\n');
    batch.write('c\n');
    expect(writes).toEqual([]);
    expect(scheduled()).toBe(1); // one end-of-turn flush, however many lines
    endTurn();
    expect(writes).toEqual(['a\nb\nc\n']);
    batch.write('d\n');
    endTurn();
    expect(writes).toEqual(['a\nb\nc\n', 'd\n']);
    expect(batch.counts).toEqual({ lines: 4, writes: 2 });
  });

  it('flushSync writes what is held at once, and the turn then has nothing left to write', () => {
    const { batch, writes, endTurn } = manual();
    batch.flushSync();
    expect(writes).toEqual([]); // nothing held: no empty write
    batch.write('x\n');
    batch.flushSync();
    batch.flushSync();
    expect(writes).toEqual(['x\n']);
    endTurn();
    expect(writes).toEqual(['x\n']);
    batch.write('y\n'); // a line after a flush schedules a new end of turn
    endTurn();
    expect(writes).toEqual(['x\n', 'y\n']);
  });

  it("flush writes and calls back, and hands the sink's failure to the callback instead of throwing", () => {
    const { batch, writes } = manual();
    batch.write('x\n');
    const done: unknown[] = [];
    batch.flush((err) => done.push(err));
    expect([writes, done]).toEqual([['x\n'], [undefined]]);
    const failing = createTurnBatch(
      () => {
        throw new Error('EIO');
      },
      () => undefined,
    );
    failing.write('z\n');
    failing.flush((err) => done.push(err?.message));
    expect(done).toEqual([undefined, 'EIO']);
    expect(() => failing.flush()).not.toThrow(); // held text was handed over once: nothing left
  });

  it('by default ends the turn with setImmediate: lines of one turn leave in one write after its microtasks', async () => {
    const writes: string[] = [];
    const batch = createTurnBatch((text) => void writes.push(text));
    batch.write('1\n');
    await Promise.resolve();
    batch.write('2\n'); // a microtask of the same turn
    expect(writes).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['1\n2\n']);
  });
});
