// Cache hints: read from upstream results, combined for merged lists, aged and capped for cached reads.
import { describe, expect, it } from 'vitest';
import { NO_BASIS, agedHint, attachedHint, combineHints, hintOf, withHint } from '../../src/federation/cache-hint.js';
import { withCacheFields } from '../../src/eras/rev2026.js';

describe('cache hints', () => {
  it.each([
    [{}, NO_BASIS],
    [{ ttlMs: 5000 }, { ttlMs: 5000, scope: 'private' }],
    [
      { ttlMs: 5000, cacheScope: 'public' },
      { ttlMs: 5000, scope: 'public' },
    ],
    [
      { ttlMs: -1, cacheScope: 'public' },
      { ttlMs: 0, scope: 'public' },
    ],
    [
      { ttlMs: 1.5, cacheScope: 'public' },
      { ttlMs: 0, scope: 'public' },
    ],
    [{ ttlMs: '5000', cacheScope: 'shared' }, NO_BASIS],
  ])('an upstream result %j hints %j', (result, hint) => {
    expect(hintOf(result as Record<string, unknown>)).toEqual(hint);
  });

  it('combines to the shortest TTL, private if any part is', () => {
    expect(combineHints({ ttlMs: 100, scope: 'public' }, { ttlMs: 50, scope: 'public' })).toEqual({ ttlMs: 50, scope: 'public' });
    expect(combineHints({ ttlMs: 100, scope: 'public' }, { ttlMs: 500, scope: 'private' })).toEqual({ ttlMs: 100, scope: 'private' });
  });

  it('ages and caps, never below 0', () => {
    expect(agedHint({ ttlMs: 1000, scope: 'public' }, 300)).toEqual({ ttlMs: 700, scope: 'public' });
    expect(agedHint({ ttlMs: 1000, scope: 'public' }, 300, 200)).toEqual({ ttlMs: 200, scope: 'public' });
    expect(agedHint({ ttlMs: 1000, scope: 'private' }, 5000)).toEqual({ ttlMs: 0, scope: 'private' });
  });

  it('travels beside a result without being serialised, and becomes 2026 fields only at that edge', () => {
    const result = withHint({ contents: [] }, { ttlMs: 42, scope: 'public' });
    expect(JSON.parse(JSON.stringify(result))).toEqual({ contents: [] });
    expect(attachedHint({ ...result })).toEqual({ ttlMs: 42, scope: 'public' });
    // In the order the SDK's encodeResult would append them (its resultType, then its cache fields in place).
    expect(JSON.stringify(withCacheFields(result))).toBe('{"contents":[],"ttlMs":42,"cacheScope":"public","resultType":"complete"}');
    const pending = withHint({ resultType: 'input_required', inputRequests: {} }, { ttlMs: 1, scope: 'private' });
    expect(JSON.stringify(withCacheFields(pending))).toBe('{"resultType":"input_required","inputRequests":{},"ttlMs":1,"cacheScope":"private"}');
    expect(withCacheFields({ contents: [] })).toEqual({ contents: [] });
  });
});
