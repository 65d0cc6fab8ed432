// ListenFilter: a change opens the new stream before closing the old; bursts fold into one reopening; failures surface.
import { describe, expect, it } from 'vitest';
import { ListenFilter } from '../../src/eras/listen-filter.js';
import { deferred } from '../helpers/gate.js';

function opener() {
  const log: string[] = [];
  let n = 0;
  let gate: Promise<void> | undefined;
  const open = async (uris: string[]) => {
    const id = ++n;
    log.push(`open#${id} ${uris.join(',')}`);
    if (gate) await gate;
    return {
      close: async () => {
        log.push(`close#${id}`);
      },
    };
  };
  return { log, open, hold: (p: Promise<void>) => (gate = p), release: () => (gate = undefined) };
}

describe('ListenFilter', () => {
  it('opens the stream with the new set before closing the old one', async () => {
    const o = opener();
    const f = new ListenFilter(o.open);
    await f.add('a://1');
    await f.add('a://2');
    await f.remove('a://1');
    await f.remove('a://2');
    expect(o.log).toEqual(['open#1 a://1', 'open#2 a://1,a://2', 'close#1', 'open#3 a://2', 'close#2', 'close#3']);
  });

  it('folds changes made while a stream is opening into one reopening', async () => {
    const o = opener();
    const f = new ListenFilter(o.open);
    const slow = deferred();
    void o.hold(slow.promise);
    const first = f.add('a://1');
    const burst = ['a://2', 'a://3', 'a://4'].map((u) => f.add(u));
    o.release();
    slow.resolve();
    await Promise.all([first, ...burst]);
    expect(o.log).toEqual(['open#1 a://1', 'open#2 a://1,a://2,a://3,a://4', 'close#1']);
  });

  it('rejects the change whose stream could not be opened; close forgets everything', async () => {
    const f = new ListenFilter(async () => {
      throw new Error('refused');
    });
    await expect(f.add('a://1')).rejects.toThrow('refused');
    await f.close();
    await f.remove('a://1'); // forgotten: nothing to do
  });
});

describe('ListenFilter when the upstream ends the stream', () => {
  it('reopens it with the same set (retrying while that fails) and then reports the URIs, whose changes went unheard', async () => {
    const ends: ((why: 'local' | 'graceful' | 'remote') => void)[] = [];
    const opened: string[][] = [];
    let failures = 1;
    const reported = deferred<string[]>();
    const f = new ListenFilter(
      async (uris) => {
        opened.push(uris);
        if (opened.length > 2 && failures-- > 0) throw new Error('upstream still down');
        let end!: (why: 'local' | 'graceful' | 'remote') => void;
        const closed = new Promise<'local' | 'graceful' | 'remote'>((r) => (end = r));
        ends.push(end);
        return { close: async () => end('local'), closed };
      },
      { onReopened: (uris) => reported.resolve(uris), retry: { initialMs: 1, maxMs: 2 } },
    );
    await f.add('a://1');
    await f.add('a://2');
    ends.at(-1)!('remote');
    expect(await reported.promise).toEqual(['a://1', 'a://2']);
    expect(opened.slice(2)).toEqual([
      ['a://1', 'a://2'],
      ['a://1', 'a://2'],
    ]); // one failed attempt, then the reopening
    await f.close();
  });

  it('does not reopen a stream it closed itself, nor any after close()', async () => {
    let opens = 0;
    const ends: ((why: 'local' | 'graceful' | 'remote') => void)[] = [];
    const f = new ListenFilter(async () => {
      opens++;
      let end!: (why: 'local' | 'graceful' | 'remote') => void;
      const closed = new Promise<'local' | 'graceful' | 'remote'>((r) => (end = r));
      ends.push(end);
      return { close: async () => end('local'), closed };
    });
    await f.add('a://1');
    await f.add('a://2'); // opens #2, closes #1 itself
    await new Promise((r) => setImmediate(r));
    expect(opens).toBe(2);
    await f.close();
    ends[1]!('remote'); // already closed locally: settled, nothing to reopen
    await new Promise((r) => setImmediate(r));
    expect(opens).toBe(2);
  });
});

describe('ListenFilter that is always open (list changes)', () => {
  it('opens a stream with no URI on start(), keeps it as URIs come and go, and reopens it when the upstream ends it', async () => {
    const opened: string[][] = [];
    const ends: ((why: 'local' | 'graceful' | 'remote') => void)[] = [];
    const reopened = deferred<string[]>();
    const f = new ListenFilter(
      async (uris) => {
        opened.push(uris);
        let end!: (why: 'local' | 'graceful' | 'remote') => void;
        const closed = new Promise<'local' | 'graceful' | 'remote'>((r) => (end = r));
        ends.push(end);
        return { close: async () => end('local'), closed };
      },
      { always: true, onReopened: (uris) => reopened.resolve(uris), retry: { initialMs: 1, maxMs: 2 } },
    );
    f.start();
    await expect.poll(() => opened.length).toBe(1);
    await f.add('a://1');
    await f.remove('a://1');
    expect(opened).toEqual([[], ['a://1'], []]); // never without a stream
    ends.at(-1)!('remote');
    expect(await reopened.promise).toEqual([]);
    expect(opened.at(-1)).toEqual([]);
    await f.close();
  });
});
