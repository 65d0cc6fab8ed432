// The change path of one replica: invalidate always, deliver once per dedupe window (local or remote copy), publish only what was learned here.
import { describe, expect, it } from 'vitest';
import { ChangeFanout } from '../../src/federation/change-fanout.js';
import { RecentChanges } from '../../src/federation/recent-changes.js';
import { createLogger } from '../../src/logger.js';
import type { ChangeEvent } from '../../src/shared-state/change-bus.js';

function setup(peers: boolean) {
  let clock = 0;
  const log = { invalidated: [] as string[], delivered: [] as string[], lists: 0, itemLists: [] as string[], published: [] as ChangeEvent[] };
  const counters = { duplicates: 0 };
  const fanout = new ChangeFanout({
    invalidate: (s, u) => log.invalidated.push(`${s}+${u}`),
    deliver: (s, u) => log.delivered.push(`${s}+${u}`),
    listChanged: (server, list) => (list === 'resources' ? log.lists++ : log.itemLists.push(`${server}+${list}`)),
    logger: createLogger({ level: 'silent' }),
    now: () => clock,
    ...(peers ? { peers: { dedupeMs: 500, counters, publishChange: (c: ChangeEvent) => log.published.push(c) } } : {}),
  });
  return { fanout, log, counters, tick: (ms: number) => (clock += ms) };
}

describe('ChangeFanout', () => {
  it('a single process delivers every change as it comes and publishes nothing', () => {
    const { fanout, log } = setup(false);
    fanout.updated('docs', 'file:///a');
    fanout.updated('docs', 'file:///a');
    fanout.listChanged('docs');
    fanout.listChanged('docs');
    expect(log.delivered).toEqual(['docs+file:///a', 'docs+file:///a']);
    expect(log.invalidated).toHaveLength(2);
    expect(log.lists).toBe(2);
    expect(log.published).toEqual([]);
  });

  it('scaled out: the first copy is delivered (and published when learned here); repeats within the window only invalidate', () => {
    const { fanout, log, counters, tick } = setup(true);
    fanout.updated('docs', 'file:///a'); // its own upstream
    tick(100);
    fanout.updated('docs', 'file:///a', true); // another replica's copy
    fanout.updated('docs', 'file:///a', true);
    fanout.updated('docs', 'file:///b', true); // another URI: its own window, not republished
    expect(log.delivered).toEqual(['docs+file:///a', 'docs+file:///b']);
    expect(log.invalidated).toEqual(['docs+file:///a', 'docs+file:///a', 'docs+file:///a', 'docs+file:///b']);
    expect(log.published).toEqual([{ kind: 'updated', server: 'docs', uri: 'file:///a' }]);
    expect(counters.duplicates).toBe(2);
    tick(400); // 500 ms after the first: a new change
    fanout.updated('docs', 'file:///a', true);
    expect(log.delivered).toEqual(['docs+file:///a', 'docs+file:///b', 'docs+file:///a']);
    expect(log.published).toHaveLength(1);
  });

  it('a remote copy first, then this replica’s own: delivered once, never published', () => {
    const { fanout, log } = setup(true);
    fanout.updated('docs', 'file:///a', true);
    fanout.updated('docs', 'file:///a');
    expect(log.delivered).toEqual(['docs+file:///a']);
    expect(log.published).toEqual([]);
  });

  it('resource list changes: once per server per window, published when learned here', () => {
    const { fanout, log, counters } = setup(true);
    fanout.listChanged('docs');
    fanout.listChanged('docs', 'resources', true);
    fanout.listChanged('mem', 'resources', true);
    expect(log.lists).toBe(2);
    expect(counters.duplicates).toBe(1);
    expect(log.published).toEqual([{ kind: 'list', server: 'docs', list: 'resources' }]);
  });

  it('tool and prompt list changes: every copy is handed on (what is new is decided by comparing lists), published when learned here', () => {
    const { fanout, log } = setup(true);
    fanout.listChanged('docs', 'tools');
    fanout.listChanged('docs', 'tools', true);
    fanout.listChanged('docs', 'prompts', true);
    fanout.listChanged('docs', 'tools');
    expect(log.itemLists).toEqual(['docs+tools', 'docs+tools', 'docs+prompts', 'docs+tools']);
    expect(log.lists).toBe(0);
    expect(log.published).toEqual([
      { kind: 'list', server: 'docs', list: 'tools' },
      { kind: 'list', server: 'docs', list: 'tools' },
    ]);
  });
});

describe('RecentChanges', () => {
  it('stays within its bound, forgetting the oldest keys first', () => {
    let clock = 0;
    const recent = new RecentChanges({ windowMs: 1000, max: 3, now: () => clock });
    for (const k of ['a', 'b', 'c', 'd']) expect(recent.fresh(k)).toBe(true);
    clock = 10;
    expect(recent.fresh('a')).toBe(true); // forgotten: a repeat of it is delivered again
    expect(recent.fresh('d')).toBe(false);
  });
});
