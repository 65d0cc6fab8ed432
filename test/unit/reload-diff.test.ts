// The reload comparison: which edits weaken security unsaid (refused), what changes, which servers restart.
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { diffServers, planReload, stableJson, type ReloadSide } from '../../src/config/reload-diff.js';

const TOKEN = { principal: 'alice', roles: ['eng'], sha256: 'a'.repeat(64) };
const SERVERS = { docs: { command: 'docs-server' }, mem: { command: 'mem-server', args: ['--x'] } };
const FULL = {
  servers: SERVERS,
  policy: { default: 'deny', rules: [{ id: 'eng-docs', effect: 'allow', roles: ['eng'], servers: ['docs'] }] },
  auth: { tokens: [TOKEN] },
  audit: { file: '/var/log/audit.jsonl' },
  limits: [{ readsPerMinute: 60 }],
};

/** Parses `raw` as a file would be, keeping which top-level keys it writes. */
function side(raw: Record<string, unknown>): ReloadSide {
  const { config, written } = validateConfig(raw, { env: {} });
  return { config, written };
}

function without(raw: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _dropped, ...rest } = raw;
  return rest;
}

describe('planReload: weakening unsaid is refused', () => {
  it.each(['policy', 'auth', 'audit', 'limits'])('leaving out the %s block in force is refused, naming the block', (block) => {
    const plan = planReload(side(FULL), side(without(FULL, block)));
    expect(plan.refused.map((r) => r.block)).toEqual([block]);
  });

  it('completion limits count as limits in force: dropping them unsaid is refused, { reads: [], completions: [] } says it', () => {
    const withCompletions = { ...FULL, limits: { completions: [{ completionsPerMinute: 6 }] } };
    expect(planReload(side(withCompletions), side(without(withCompletions, 'limits'))).refused.map((r) => r.block)).toEqual(['limits']);
    expect(planReload(side(withCompletions), side({ ...withCompletions, limits: { reads: [], completions: [] } })).refused).toEqual([]);
  });

  it('leaving out all four names all four', () => {
    const plan = planReload(side(FULL), side({ servers: SERVERS }));
    expect(plan.refused.map((r) => r.block).sort()).toEqual(['audit', 'auth', 'limits', 'policy']);
  });

  it.each([
    ['policy: { default: allow }', { policy: { default: 'allow' } }, 'policy'],
    ['auth: false', { auth: false }, 'auth'],
    ['audit: false', { audit: false }, 'audit'],
    ['limits: false', { limits: false }, 'limits'],
    ['limits: []', { limits: [] }, 'limits'],
  ])('spelling it out (%s) is applied and reported as a change', (_what, edit, block) => {
    const plan = planReload(side(FULL), side({ ...FULL, ...edit }));
    expect(plan.refused).toEqual([]);
    expect(plan.changed).toContain(block);
  });

  it('an empty policy block denies by default: not a weakening', () => {
    const plan = planReload(side(FULL), side({ ...FULL, policy: {} }));
    expect(plan.refused).toEqual([]);
    expect(plan.changed).toEqual(['policy']);
  });

  it('a block that was not in force may stay out', () => {
    const bare = { servers: SERVERS };
    expect(planReload(side(bare), side(bare))).toMatchObject({ refused: [], changed: [] });
  });

  it('without auth on a non-loopback bind a reload is refused, even with auth: false', () => {
    for (const next of [without(FULL, 'auth'), { ...FULL, auth: false }]) {
      const plan = planReload(side(FULL), side(next), { requireAuth: true });
      expect(plan.refused.map((r) => r.block)).toEqual(['auth']);
      expect(plan.refused[0]!.reason).toMatch(/non-loopback/);
    }
    // The rule is about the bind, not the edit: a file without auth stays refused there.
    expect(planReload(side(without(FULL, 'auth')), side(without(FULL, 'auth')), { requireAuth: true }).refused).toHaveLength(1);
  });

  it('fewer tokens, fewer rules or stricter limits are plain changes', () => {
    const stricter = { ...FULL, auth: { tokens: [{ ...TOKEN, principal: 'bob' }] }, policy: { default: 'deny' }, limits: [{ readsPerMinute: 1 }] };
    const plan = planReload(side(FULL), side(stricter));
    expect(plan.refused).toEqual([]);
    expect(plan.changed).toEqual(['auth', 'limits', 'policy']);
    expect(plan.restartNeeded).toEqual([]);
  });
});

describe('planReload: what changed', () => {
  it('the same file, keys in another order, changes nothing', () => {
    const reordered = Object.fromEntries(Object.entries(FULL).reverse());
    expect(planReload(side(FULL), side(reordered))).toMatchObject({ changed: [], refused: [], restartNeeded: [] });
  });

  it('blocks that only a restart applies are listed as such', () => {
    const plan = planReload(side(FULL), side({ ...FULL, wire: { maxDepth: 64 }, cache: { enabled: false }, http: { port: 0 } }));
    expect(plan.refused).toEqual([]);
    expect(plan.restartNeeded).toEqual(['cache', 'http', 'wire']);
    expect(plan.changed).toEqual(['cache', 'http', 'wire']);
  });

  it('turning audit off is accepted but takes effect at the next start', () => {
    expect(planReload(side(FULL), side({ ...FULL, audit: false })).restartNeeded).toEqual(['audit']);
  });

  it('servers: each one added, removed, restarted or untouched, named in the log entries', () => {
    const next = { ...FULL, servers: { docs: { command: 'docs-server', args: ['--v2'] }, fresh: { command: 'new' } } };
    const plan = planReload(side(FULL), side({ ...next, policy: { default: 'deny' } }));
    expect(plan.servers).toEqual({ added: ['fresh'], removed: ['mem'], restarted: ['docs'], unchanged: [] });
    expect(plan.changed).toEqual(['policy', 'servers.fresh(added)', 'servers.mem(removed)', 'servers.docs(restarted)']);
  });
});

describe('diffServers', () => {
  const parse = (servers: Record<string, unknown>) => validateConfig({ servers }, { env: {} }).config.servers;

  it('a disabled server counts as absent; enabling it adds it', () => {
    const before = parse({ a: { command: 'a' }, b: { command: 'b', enabled: false } });
    const after = parse({ a: { command: 'a' }, b: { command: 'b' } });
    expect(diffServers(before, after)).toEqual({ added: ['b'], removed: [], restarted: [], unchanged: ['a'] });
    expect(diffServers(after, before)).toEqual({ added: [], removed: ['b'], restarted: [], unchanged: ['a'] });
  });

  it('a field spelled out with its default value is not a change; any other field is', () => {
    const before = parse({ a: { command: 'a' } });
    expect(diffServers(before, parse({ a: { command: 'a', timeoutMs: 30_000 } })).unchanged).toEqual(['a']);
    expect(diffServers(before, parse({ a: { command: 'a', timeoutMs: 5 } })).restarted).toEqual(['a']);
    expect(diffServers(before, parse({ a: { command: 'a', env: { K: 'v' } } })).restarted).toEqual(['a']);
  });

  it('renaming a key with the same namespace restarts the server (its name is part of it)', () => {
    expect(diffServers(parse({ a: { command: 'a' } }), parse({ A: { command: 'a' } })).restarted).toEqual(['a']);
  });
});

describe('stableJson', () => {
  it('orders keys at every level, keeps array order', () => {
    expect(stableJson({ b: 1, a: { d: [2, 1], c: 0 } })).toBe(stableJson({ a: { c: 0, d: [2, 1] }, b: 1 }));
    expect(stableJson([1, 2])).not.toBe(stableJson([2, 1]));
    expect(stableJson(undefined)).toBe('undefined');
  });
});
