// list_changed of resources, tools and prompts: one of each kind per session per window, whatever the burst.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ALL_LISTS, SessionRegistry, type ListChangeKind } from '../../src/federation/sessions.js';
import { changedItems } from '../../src/federation/item-changes.js';

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
