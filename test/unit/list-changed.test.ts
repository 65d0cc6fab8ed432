// list_changed of resources, tools and prompts: one of each kind per session per window, whatever the burst.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ALL_LISTS, SessionRegistry, type ListChangeKind } from '../../src/federation/sessions.js';

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
});
