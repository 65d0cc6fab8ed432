// Downstream pages exactly as configured (split upstream pages, filtered streams), and a first list that does not wait for a hung upstream.
import { describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { SetTimer } from '../../src/federation/listing.js';
import { META_INCOMPLETE } from '../../src/protocol.js';
import type { CallerIdentity } from '../../src/proxy.js';
import { createUpstreamServer, newStats } from '../helpers/upstream-server.mjs';
import { startHarness } from '../helpers/harness.js';
import { within } from '../helpers/gate.js';
import { prng } from '../helpers/prng.js';
import { rpcError } from '../helpers/rpc-error.js';

const caller = (principal: string): CallerIdentity => ({ principal, roles: [], transport: 'stdio' });
const ALICE = caller('alice');
const BOB = caller('bob');
const ROOT = caller('root');

/**
 * alice and bob may list the same items (`x://pub/…`) but differ in everything else: alice may read
 * secrets, bob may do anything with `x://ghost/…` (which no upstream lists). root sees everything.
 */
const POLICY = {
  default: 'deny',
  rules: [
    { id: 'pub', effect: 'allow', principals: ['alice', 'bob'], actions: ['list', 'read'], resources: ['x://pub/**'] },
    { id: 'alice-reads', effect: 'allow', principals: ['alice'], actions: ['read'], resources: ['x://sec/**'] },
    { id: 'bob-ghost', effect: 'allow', principals: ['bob'], resources: ['x://ghost/**'] },
    { id: 'root', effect: 'allow', principals: ['root'] },
  ],
};

interface Walk {
  uris: string[];
  sizes: number[];
  cursors: (string | undefined)[];
  metas: unknown[];
}

async function walk(client: Client): Promise<Walk> {
  const out: Walk = { uris: [], sizes: [], cursors: [], metas: [] };
  let cursor: string | undefined;
  do {
    out.cursors.push(cursor);
    const page = await client.listResources(cursor === undefined ? {} : { cursor });
    out.uris.push(...page.resources.map((r) => r.uri));
    out.sizes.push(page.resources.length);
    if (page._meta) out.metas.push(page._meta);
    cursor = page.nextCursor;
  } while (cursor !== undefined && out.sizes.length < 1000);
  return out;
}

/** The page sizes `n` visible items must come in: full pages of `max`, then the rest; one empty page for none. */
function shapes(n: number, max: number): number[] {
  if (n === 0) return [0];
  return [...Array.from({ length: Math.floor(n / max) }, () => max), ...(n % max === 0 ? [] : [n % max])];
}

describe('pages exactly as configured', () => {
  it.each(Array.from({ length: 24 }, (_, i) => i + 1))(
    'seed %i: exact pages of the visible stream, in order, the same shapes for principals who see the same items',
    async (seed) => {
      const random = prng(seed);
      const int = (n: number) => Math.floor(random() * n);
      const upstreams: Record<string, () => Server> = {};
      const all: string[] = [];
      const visible: string[] = [];
      const pVisible = random();
      for (let u = 0, n = 1 + int(4); u < n; u++) {
        const id = `u${u}`;
        const resources = Array.from({ length: int(26) }, (_, i) => {
          const tag = random() < pVisible ? 'pub' : random() < 0.5 ? 'sec' : 'other';
          return { uri: `x://${tag}/${id}-${i}`, name: `${id}-${i}` };
        });
        const pageSize = random() < 0.2 ? undefined : 1 + int(9);
        upstreams[id] = () => createUpstreamServer({ resources, ...(pageSize === undefined ? {} : { pageSize }) }).server;
        for (const r of resources) {
          all.push(`${id}+${r.uri}`);
          if (r.uri.startsWith('x://pub/')) visible.push(`${id}+${r.uri}`);
        }
      }
      const max = 1 + int(9);
      await using h = await startHarness({ upstreams, config: { policy: POLICY, list: { maxItemsPerPage: max } } });
      const [alice, bob, root] = await Promise.all([h.client(ALICE), h.client(BOB), h.client(ROOT)]);
      const a = await walk(alice);
      const b = await walk(bob);
      const r = await walk(root);
      const context = JSON.stringify({ seed, max, visible: visible.length, all: all.length });
      expect(a.uris, context).toEqual(visible); // in order, nothing missing, nothing twice
      expect(a.sizes, context).toEqual(shapes(visible.length, max)); // none over max, only the last short, none empty
      expect(b.uris, context).toEqual(visible);
      expect(b.sizes, context).toEqual(a.sizes);
      expect(r.uris, context).toEqual(all);
      expect(r.sizes, context).toEqual(shapes(all.length, max));
      expect([...a.metas, ...b.metas, ...r.metas]).toEqual([]);
      // A cursor used again (its read-ahead already taken) resumes from its own offset: the same page.
      for (let i = 1; i < a.cursors.length; i++) {
        const again = await alice.listResources({ cursor: a.cursors[i]! });
        const start = a.sizes.slice(0, i).reduce((x, y) => x + y, 0);
        expect(
          again.resources.map((res) => res.uri),
          context,
        ).toEqual(visible.slice(start, start + a.sizes[i]!));
      }
    },
  );

  it('splits one upstream page across downstream cursors and asks the upstream only with its own cursors', async () => {
    const stats = newStats();
    const resources = Array.from({ length: 25 }, (_, i) => ({ uri: `x://pub/${i}`, name: `r${i}` }));
    await using h = await startHarness({
      upstreams: { a: () => createUpstreamServer({ resources, pageSize: 10 }, stats).server },
      config: { list: { maxItemsPerPage: 3 } },
    });
    const { uris, sizes } = await walk(await h.client());
    expect(sizes).toEqual([3, 3, 3, 3, 3, 3, 3, 3, 1]);
    expect(uris).toEqual(resources.map((r) => `a+${r.uri}`));
    expect(new Set(stats.cursorsSeen)).toEqual(new Set(['mcp-federate:10', 'mcp-federate:20']));
  });

  it('a parked cursor is taken without unsealing only by its own list and audience: another principal, the other list and a tampered copy are refused, and the owner still resumes it', async () => {
    const resources = Array.from({ length: 12 }, (_, i) => ({ uri: `x://pub/${i}`, name: `r${i}` }));
    await using h = await startHarness({
      upstreams: { a: () => createUpstreamServer({ resources, pageSize: 5 }).server, b: () => createUpstreamServer({ resources, pageSize: 5 }).server },
      config: { policy: POLICY, list: { maxItemsPerPage: 4 } },
    });
    const [alice, bob] = await Promise.all([h.client(ALICE), h.client(BOB)]);
    const first = await alice.listResources();
    const cursor = first.nextCursor!;
    expect(first.resources.map((r) => r.uri)).toEqual(['a+x://pub/0', 'a+x://pub/1', 'a+x://pub/2', 'a+x://pub/3']);
    // Its read-ahead is parked under it: bob sees the same items, but the token was sealed for alice.
    expect(await rpcError(bob.listResources({ cursor }))).toMatchObject({ code: -32602 });
    expect(await rpcError(alice.listResourceTemplates({ cursor }))).toMatchObject({ code: -32602 });
    const last = cursor.at(-1) === 'A' ? 'B' : 'A';
    expect(await rpcError(alice.listResources({ cursor: `${cursor.slice(0, -1)}${last}` }))).toMatchObject({ code: -32602 });
    const iv = cursor.at(2) === 'A' ? 'B' : 'A';
    expect(await rpcError(alice.listResources({ cursor: `${cursor.slice(0, 2)}${iv}${cursor.slice(3)}` }))).toMatchObject({ code: -32602 });
    // None of those took alice's parked walks: her next pages are the rest of the list, in order, once.
    const uris = [...first.resources.map((r) => r.uri)];
    let next: string | undefined = cursor;
    while (next !== undefined) {
      const page = await alice.listResources({ cursor: next });
      uris.push(...page.resources.map((r) => r.uri));
      next = page.nextCursor;
    }
    expect(uris).toEqual([...resources.map((r) => `a+${r.uri}`), ...resources.map((r) => `b+${r.uri}`)]);
    // The same token again (its walks taken): unsealed and resumed from its own position.
    expect((await alice.listResources({ cursor })).resources.map((r) => r.uri)).toEqual(['a+x://pub/4', 'a+x://pub/5', 'a+x://pub/6', 'a+x://pub/7']);
  });

  it('a list whose last visible item fills the page has no empty page after it, even with hidden items behind it', async () => {
    const resources = [
      ...Array.from({ length: 4 }, (_, i) => ({ uri: `x://pub/${i}`, name: `p${i}` })),
      ...Array.from({ length: 9 }, (_, i) => ({ uri: `x://sec/${i}`, name: `s${i}` })),
    ];
    await using h = await startHarness({
      upstreams: {
        a: () => createUpstreamServer({ resources, pageSize: 2 }).server,
        b: () => createUpstreamServer({ resources: resources.slice(4), pageSize: 3 }).server,
      },
      config: { policy: POLICY, list: { maxItemsPerPage: 2 } },
    });
    const { sizes, uris } = await walk(await h.client(ALICE));
    expect(sizes).toEqual([2, 2]);
    expect(uris).toEqual(['a+x://pub/0', 'a+x://pub/1', 'a+x://pub/2', 'a+x://pub/3']);
  });

  it('an upstream returning hidden items and cursors forever cannot hang the look-ahead: its walk ends at the page limit', async () => {
    const stats = newStats();
    await using h = await startHarness({
      upstreams: {
        a: () => createUpstreamServer({ resources: Array.from({ length: 3 }, (_, i) => ({ uri: `x://pub/${i}`, name: `p${i}` })) }).server,
        loop: () => createUpstreamServer({ endlessCursor: true }, stats).server, // endless://n, none visible to alice
        z: () => createUpstreamServer({ resources: [{ uri: 'x://pub/z', name: 'z' }] }).server,
      },
      config: { policy: POLICY, list: { maxItemsPerPage: 2, maxPagesPerUpstream: 30 } },
    });
    const { uris, sizes, metas } = await walk(await h.client(ALICE));
    expect(uris).toEqual(['a+x://pub/0', 'a+x://pub/1', 'a+x://pub/2', 'z+x://pub/z']);
    expect(sizes).toEqual([2, 2]);
    expect(metas).toEqual([{ [META_INCOMPLETE]: [{ server: 'loop', reason: 'page-limit' }] }]);
    expect(stats.cursorsSeen.length).toBeLessThanOrEqual(29); // never more than maxPagesPerUpstream pages asked
  });
});

/** A `SetTimer` the test fires by hand: no list waits on the wall clock. */
function manualTimer() {
  const armed = new Set<{ ms: number; fire: () => void }>();
  let waiter: (() => void) | undefined;
  const timer: SetTimer = (ms, fire) => {
    const t = { ms, fire };
    armed.add(t);
    waiter?.();
    return () => armed.delete(t);
  };
  return {
    timer,
    armed,
    /** Resolves once at least one timer is armed. */
    async someArmed(): Promise<void> {
      while (armed.size === 0) await new Promise<void>((resolve) => (waiter = resolve));
    },
    fireAll(): void {
      for (const t of [...armed]) {
        armed.delete(t);
        t.fire();
      }
    },
  };
}

describe('the first list is not hostage to the slowest upstream', () => {
  it('answers when firstWaitMs runs out with the ready upstream, marks the starting one, then sends list_changed when it comes up', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const slow = createUpstreamServer({ resources: [{ uri: 'x://late', name: 'late' }] });
    const clock = manualTimer();
    await using h = await startHarness({
      upstreams: {
        ready: () => createUpstreamServer({ resources: [{ uri: 'x://now', name: 'now' }] }).server,
        slow: () => released.then(() => slow.server), // answers initialize only once released
      },
      serverFields: { slow: { timeoutMs: 600_000 } }, // only the firstWaitMs timer can end the wait
      config: { list: { firstWaitMs: 2000 } },
      listTimer: clock.timer,
      awaitStart: false,
    });
    await h.proxy.pool.get('ready')!.settled();
    const client = await h.client();
    const changed = new Promise<void>((resolve) => client.setNotificationHandler(ResourceListChangedNotificationSchema, () => resolve()));
    let answered = false;
    const first = client.listResources().finally(() => (answered = true));
    await within(clock.someArmed(), 'the list to arm its firstWaitMs timer');
    expect([...clock.armed].map((t) => t.ms)).toEqual([2000]);
    expect(answered).toBe(false);
    clock.fireAll();
    const page = await within(first, 'the first list');
    expect(page.resources.map((r) => r.uri)).toEqual(['ready+x://now']);
    expect(page._meta?.[META_INCOMPLETE]).toEqual([{ server: 'slow', reason: 'starting' }]);
    expect(page.nextCursor).toBeUndefined();
    release();
    await within(changed, 'list_changed once the slow upstream is up');
    const again = await client.listResources();
    expect(again.resources.map((r) => r.uri)).toEqual(['ready+x://now', 'slow+x://late']);
    expect(again._meta).toBeUndefined();
  });

  it('waits for a starting upstream that comes up before firstWaitMs, and reports nothing missing', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const clock = manualTimer();
    await using h = await startHarness({
      upstreams: {
        ready: () => createUpstreamServer({ resources: [{ uri: 'x://now', name: 'now' }] }).server,
        slow: () => released.then(() => createUpstreamServer({ resources: [{ uri: 'x://late', name: 'late' }] }).server),
      },
      listTimer: clock.timer,
      awaitStart: false,
    });
    const client = await h.client();
    const first = client.listResources();
    await within(clock.someArmed(), 'the list to arm its firstWaitMs timer');
    release(); // before the timer fires (it never does here)
    const page = await within(first, 'the first list');
    expect(page.resources.map((r) => r.uri)).toEqual(['ready+x://now', 'slow+x://late']);
    expect(page._meta).toBeUndefined();
    expect(clock.armed.size).toBe(0); // disarmed once answered
  });
});
