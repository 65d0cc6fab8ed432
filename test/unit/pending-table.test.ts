// PendingTable: the same answers as a Map of the same entries, under random request traffic, overflow and hostile ids.
import { describe, expect, it } from 'vitest';
import { prng } from '../helpers/prng.js';
import { PendingTable } from '../../src/upstream/pending-table.js';

interface Entry {
  readonly id: number;
  readonly n: number;
}

describe('PendingTable', () => {
  it('holds, finds and removes entries by id, counting down as the upstream ids do', () => {
    const table = new PendingTable<Entry>(4);
    for (let id = -1; id >= -3; id--) table.set({ id, n: -id });
    expect(table.size).toBe(3);
    expect(table.get(-2)).toEqual({ id: -2, n: 2 });
    expect(table.has(-4)).toBe(false);
    expect(table.delete(-2)).toBe(true);
    expect(table.delete(-2)).toBe(false);
    expect(table.get(-2)).toBeUndefined();
    expect(table.size).toBe(2);
    expect(
      table
        .values()
        .map((e) => e.id)
        .sort((a, b) => a - b),
    ).toEqual([-3, -1]);
  });

  it('keeps entries whose slot is taken (more in flight than slots) in its overflow, and finds each by its own id', () => {
    const table = new PendingTable<Entry>(4);
    for (let id = -1; id >= -10; id--) table.set({ id, n: -id }); // -5 and -9 share -1's slot
    expect(table.size).toBe(10);
    for (let id = -1; id >= -10; id--) expect(table.get(id)?.n).toBe(-id);
    expect(table.delete(-1)).toBe(true); // the ring's entry goes; -5 and -9 stay found in the overflow
    expect(table.get(-5)?.n).toBe(5);
    expect(table.get(-9)?.n).toBe(9);
    table.set({ id: -11, n: 11 }); // -11 takes a slot still held by -7: overflow too
    expect(table.get(-11)?.n).toBe(11);
    expect(table.values()).toHaveLength(10);
  });

  it('answers nothing for ids an upstream made up: strings, fractions, NaN, huge or colliding numbers', () => {
    const table = new PendingTable<Entry>(8);
    table.set({ id: -1, n: 1 });
    for (const id of ['-1', -1.5, Number.NaN, 7, -9, 2 ** 32 - 1, -(2 ** 32) - 1, -(2 ** 53), Infinity, -Infinity, null, undefined, {}]) {
      const what = JSON.stringify(id) ?? 'undefined';
      expect(table.get(id as number), what).toBeUndefined();
      expect(table.has(id as number), what).toBe(false);
      expect(table.delete(id as number), what).toBe(false);
    }
    expect(table.size).toBe(1);
  });

  it('values() is a snapshot: settling every entry while walking it leaves the table empty', () => {
    const table = new PendingTable<Entry>(4);
    for (let id = -1; id >= -9; id--) table.set({ id, n: -id });
    for (const e of table.values()) expect(table.delete(e.id)).toBe(true);
    expect(table.size).toBe(0);
    expect(table.values()).toEqual([]);
  });

  it('matches a Map under 100 000 random operations (ids handed out in order, answered in any order)', () => {
    for (const seed of [1, 2, 3, 4]) {
      const next = prng(seed);
      const table = new PendingTable<Entry>(16);
      const map = new Map<number, Entry>();
      let nextId = -1;
      for (let i = 0; i < 25_000; i++) {
        const r = next();
        if (r < 0.45 || map.size === 0) {
          const entry = { id: nextId--, n: i };
          table.set(entry);
          map.set(entry.id, entry);
        } else if (r < 0.9) {
          const ids = [...map.keys()];
          const id = ids[Math.floor(next() * ids.length)]!;
          expect(table.delete(id), `seed ${seed}, op ${i}`).toBe(map.delete(id));
        } else {
          const id = nextId + Math.floor(next() * 60) - 10; // held, settled, or never issued
          expect(table.get(id), `seed ${seed}, op ${i}, id ${id}`).toBe(map.get(id));
        }
        expect(table.size).toBe(map.size);
      }
      expect(new Set(table.values())).toEqual(new Set(map.values()));
    }
  });

  it('refuses a ring size that is not a power of two', () => {
    expect(() => new PendingTable(100)).toThrow(RangeError);
  });
});
