// list_changed of resources, tools and prompts: one of each kind per session per window, whatever the burst.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ALL_LISTS, SessionRegistry, type ListChangeKind } from '../../src/federation/sessions.js';
import { changedItems, ItemChanges } from '../../src/federation/item-changes.js';
import type { ItemCatalog } from '../../src/federation/item-catalog.js';
import { createLogger } from '../../src/logger.js';

afterEach(() => void vi.useRealTimers());

describe('SessionRegistry list changes', () => {
  it('coalesces a burst into one notification per kind named, to every session', () => {
    vi.useFakeTimers();
    const registry = new SessionRegistry(100);
    const sent: [string, ListChangeKind | undefined][] = [];
    for (const id of ['a', 'b']) registry.add({ id, sendUpdated: () => undefined, sendListChanged: (kind) => void sent.push([id, kind]) });
    registry.listChanged(['tools']);
    registry.listChanged(['tools']);
    registry.listChanged(['prompts']);
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(100);
    expect(sent).toEqual([
      ['a', 'tools'],
      ['a', 'prompts'],
      ['b', 'tools'],
      ['b', 'prompts'],
    ]);
    sent.length = 0;
    registry.listChanged(ALL_LISTS);
    registry.listChanged();
    vi.advanceTimersByTime(100);
    expect(sent.filter(([id]) => id === 'a').map(([, k]) => k)).toEqual(['resources', 'tools', 'prompts']);
    registry.close();
  });

  it('a change for some sessions reaches only them; coalesced with one for every session, everyone hears it once', () => {
    vi.useFakeTimers();
    const registry = new SessionRegistry(100);
    const sent: string[] = [];
    for (const id of ['alice', 'bob'])
      registry.add({ id, principal: id, sendUpdated: () => undefined, sendListChanged: (kind) => void sent.push(`${id} ${kind}`) });
    registry.listChanged(['tools'], (s) => s.principal === 'alice');
    registry.listChanged(['tools'], (s) => s.principal === 'alice');
    vi.advanceTimersByTime(100);
    expect(sent).toEqual(['alice tools']);
    sent.length = 0;
    registry.listChanged(['tools'], () => false);
    vi.advanceTimersByTime(100);
    expect(sent).toEqual([]);
    registry.listChanged(['prompts'], (s) => s.principal === 'bob');
    registry.listChanged(['prompts']);
    vi.advanceTimersByTime(100);
    expect(sent).toEqual(['alice prompts', 'bob prompts']);
    registry.close();
  });
});

describe('changedItems', () => {
  const tool = (name: string, extra: Record<string, unknown> = {}) => ({ name, inputSchema: { type: 'object' }, ...extra });
  it('names what was added, removed and altered (altered as it was and as it is), as a list shows them', () => {
    const before = new Map([
      ['fx__a', tool('a')],
      ['fx__b', tool('b')],
      ['fx__c', tool('c', { annotations: { readOnlyHint: true } })],
    ]);
    const after = new Map([
      ['fx__a', tool('a')],
      ['fx__c', tool('c', { annotations: { readOnlyHint: false } })],
      ['fx__d', tool('d')],
    ]);
    const changed = changedItems(before, after);
    expect(changed.map((i) => [i.name, (i._meta as Record<string, unknown>)['mcp-federate/upstreamName'], i.annotations])).toEqual([
      ['fx__c', 'c', { readOnlyHint: true }],
      ['fx__c', 'c', { readOnlyHint: false }],
      ['fx__d', 'd', undefined],
      ['fx__b', 'b', undefined],
    ]);
    expect(changedItems(after, new Map(after))).toEqual([]);
  });
});

describe('ItemChanges', () => {
  it('a flood of one list’s changes costs two fetches, tells only sessions that may see a changed item, and a repeat tells no one', async () => {
    let fetches = 0;
    let listed = new Map([['fx__a', { name: 'a' }]]);
    let release: () => void = () => undefined;
    const held = new Map<string, Map<string, Record<string, unknown>>>([['tools', listed]]);
    const catalog = {
      held: (kind: string) => held.get(kind),
      invalidate: () => held.clear(),
      current: async (kind: string) => {
        fetches++;
        await new Promise<void>((r) => (release = r));
        held.set(kind, listed);
        return listed;
      },
    } as unknown as ItemCatalog;
    const registry = new SessionRegistry(0);
    const sent: string[] = [];
    for (const id of ['alice', 'bob'])
      registry.add({ id, principal: id, sendUpdated: () => undefined, sendListChanged: (kind) => void sent.push(`${id} ${kind}`) });
    const told = (n: number) => vi.waitFor(() => expect(sent.length).toBe(n), { timeout: 5000, interval: 5 });
    const changes = new ItemChanges({
      catalog,
      sessions: registry,
      // bob may not see tools named secret*
      mayHear: (session, _kind, _server, items) => session.principal === 'alice' || (items ?? []).some((i) => !String(i.name).startsWith('fx__secret')),
      logger: createLogger({ level: 'silent' }),
    });
    listed = new Map([...listed, ['fx__secret', { name: 'secret' }]]);
    changes.changed('fx', 'tools');
    await vi.waitFor(() => expect(fetches).toBe(1));
    for (let i = 0; i < 100; i++) changes.changed('fx', 'tools'); // while the first fetch runs: one more waits
    release();
    await told(1);
    await vi.waitFor(() => expect(fetches).toBe(2));
    release(); // the one that waited: nothing new
    expect(fetches).toBe(2);
    listed = new Map([['fx__secret', { name: 'secret' }]]); // a removes: bob may see it
    changes.changed('fx', 'tools', true);
    await vi.waitFor(() => expect(fetches).toBe(3));
    release();
    await told(3);
    expect(sent).toEqual(['alice tools', 'alice tools', 'bob tools']);
    registry.close();
  });
});
