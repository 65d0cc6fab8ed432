// End to end, live federation: the built CLI in front of real catalog-fixture processes, driven by a
// real SDK Client. Subscriptions relayed (upstream-native and polled), the read cache (hits,
// coalescing, coherence), list_changed, upstream restarts and crash loops. Every wait is on an event
// (a notification, a response, a log line); the only polling loops wait on the proxy's own poller
// (counted by the fixture) or on a killed process to be gone, and both are bounded. Where a request
// must be in flight at a given moment, the upstream child is frozen with SIGSTOP (it cannot answer)
// and a round trip to another upstream proves the request was forwarded (requests are handled in order).
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { isAlive, upstreams, waitForExit } from '../helpers/built-cli.js';
import { fixtureContent, listAll, META_INCOMPLETE, notFound } from '../helpers/catalog.js';
import { within } from '../helpers/gate.js';
import { type LogRecord } from '../helpers/logs.js';
import { rpcError } from '../helpers/rpc-error.js';
import { type ProxyOptions, ProxyProcess } from '../helpers/sdk-clients.js';
import { suiteResource } from '../helpers/suite.js';

/** What `fixture://stats` reports (see test/fixtures/catalog-server.mjs). */
interface Stats {
  pid: number;
  reads: number;
  readsByUri: Record<string, number>;
  subscribes: number;
  unsubscribes: number;
  subscribed: string[];
}

/**
 * Log times are wall-clock; a timer is measured from the event loop's cached 'now', which may lag
 * the wall clock by however long the loop's turn has run so far (a preempted process on a loaded
 * machine): a retry may appear up to that much early in the log.
 */
const TIMER_SLACK_MS = 15;

let seq = 0;
/** A fresh `?n=` query: every stats/control read through the caching proxy is then a cache miss. */
const unique = () => `?n=${++seq}`;

/** `n` from a ticker text `tick <n>`. */
function tickOf(text: string): number {
  const m = /^tick (\d+)$/.exec(text);
  if (!m) throw new Error(`not a ticker text: ${text}`);
  return Number(m[1]);
}

/**
 * Bounded polling, only where the proxy offers no event (its poller's progress, seen in the
 * fixture's counters): `check` until it holds, at most `attempts` times, `everyMs` apart.
 */
async function eventually(check: () => Promise<boolean>, what: string, attempts = 150, everyMs = 20): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (await check()) return;
    await delay(everyMs);
  }
  throw new Error(`gave up waiting for ${what} after ${attempts} attempts`);
}

/** The proxy process plus everything the client was told, with waits on those notifications. */
class Live implements AsyncDisposable {
  /** Every `notifications/resources/updated` URI, in arrival order. */
  readonly updated: string[] = [];
  /** Number of `notifications/resources/list_changed` received. */
  listChanged = 0;
  private readonly wakers = new Set<() => void>();

  private constructor(readonly proxy: ProxyProcess) {
    proxy.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      this.updated.push(n.params.uri);
      this.wake();
    });
    proxy.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      this.listChanged++;
      this.wake();
    });
  }

  static async start(config: unknown, options?: ProxyOptions): Promise<Live> {
    return new Live(await ProxyProcess.start(config, options));
  }

  get client() {
    return this.proxy.client;
  }

  /** Updates received for one namespaced URI. */
  updates(uri: string): number {
    return this.updated.filter((u) => u === uri).length;
  }

  /** Resolves as soon as `done()` holds, re-checked on every notification. */
  until(done: () => boolean, what: string): Promise<void> {
    return within(
      new Promise<void>((resolve) => {
        const check = () => {
          if (!done()) return;
          this.wakers.delete(check);
          resolve();
        };
        this.wakers.add(check);
        check();
      }),
      what,
    );
  }

  /** The text of a single-content read. */
  async text(uri: string): Promise<string> {
    const { contents } = await this.client.readResource({ uri });
    expect(contents).toHaveLength(1);
    const text = (contents[0] as { text?: unknown }).text;
    if (typeof text !== 'string') throw new Error(`${uri} has no text`);
    return text;
  }

  /** The fixture's counters, read through the proxy (a unique URI: never from the cache). */
  async stats(server: string): Promise<Stats> {
    return JSON.parse(await this.text(`${server}+fixture://stats${unique()}`)) as Stats;
  }

  /** Upstream reads of one upstream URI so far. */
  async reads(server: string, uri: string): Promise<number> {
    return (await this.stats(server)).readsByUri[uri] ?? 0;
  }

  /** Triggers a fixture control (`tick` bumps fixture://ticker, `add` adds a resource). */
  async control(server: string, what: 'tick' | 'add'): Promise<void> {
    expect(await this.text(`${server}+fixture://control/${what}${unique()}`)).toBe('ok');
  }

  /** The `n`-th (1-based) log record matching `match`, as soon as it is written. */
  async nthLog(n: number, match: (r: LogRecord) => boolean, what: string): Promise<LogRecord> {
    const matching = () => this.proxy.logs().filter(match);
    await within(
      this.proxy.waitForLog(() => matching().length >= n),
      `log record #${n}: ${what}`,
    );
    return matching()[n - 1]!;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.wakers.clear();
    await this.proxy[Symbol.asyncDispose]();
  }

  private wake(): void {
    for (const w of [...this.wakers]) w();
  }
}

/** The namespaced URIs one upstream contributes to a list, in order. */
const urisOf = (server: string, items: Record<string, unknown>[]) => items.map((i) => i.uri as string).filter((u) => u.startsWith(`${server}+`));

/** What the catalog fixture lists with `--resources n` (plus `extra` added ones), namespaced. */
const catalog = (server: string, n: number, extra: string[] = []) => [
  ...Array.from({ length: n }, (_, i) => `${server}+fixture://res/${i}`),
  `${server}+fixture://ticker`,
  ...extra.map((u) => `${server}+${u}`),
  `${server}+fixture://stats`,
];

describe('one proxy, several live upstreams', () => {
  // sub:     subscribe-capable, ticks on demand (control reads)
  // timer:   subscribe-capable, ticks every 50 ms on its own
  // poll:    no subscribe support: the proxy emulates subscriptions by polling every 100 ms
  // coherent: subscribe-capable, only ever read by the coherence race test
  // slow:    every read takes 100 ms
  // nocache: every read takes 100 ms, and the proxy never caches it
  // sub, timer, coherent and slow opt into read reuse (`cacheTtlMs`); poll keeps the transparent default.
  const live = suiteResource(() =>
    Live.start({
      servers: {
        sub: { ...upstreams.fixture('--subscribe', '--resources', '3'), cacheTtlMs: 300_000 },
        timer: { ...upstreams.fixture('--subscribe', '--resources', '1', '--tick-ms', '50'), cacheTtlMs: 300_000 },
        poll: upstreams.fixture('--resources', '1'),
        coherent: { ...upstreams.fixture('--subscribe', '--resources', '1'), cacheTtlMs: 300_000 },
        slow: { ...upstreams.fixture('--subscribe', '--resources', '3', '--read-delay-ms', '100'), cacheTtlMs: 300_000 },
        nocache: { ...upstreams.fixture('--subscribe', '--resources', '3', '--read-delay-ms', '100'), cache: false },
      },
      subscriptions: { pollIntervalMs: 100 },
      listChanged: { coalesceMs: 200 },
    }),
  );

  describe('subscriptions to a subscribe-capable upstream', () => {
    it('relays each update with the namespaced URI; a re-read at once is fresh, not the cached copy', async () => {
      const l = live();
      const uri = 'sub+fixture://ticker';
      expect(await l.text(uri)).toBe('tick 0'); // now cached
      // Coherence: the cached URI is held subscribed upstream even before any client subscribes.
      expect((await l.stats('sub')).subscribed).toContain('fixture://ticker');
      await l.client.subscribeResource({ uri });
      for (let k = 1; k <= 4; k++) {
        await l.control('sub', 'tick');
        await l.until(() => l.updates(uri) >= k, `update #${k} of ${uri}`);
        expect(await l.text(uri)).toBe(`tick ${k}`);
      }
      expect(l.updated.filter((u) => u.startsWith('sub+'))).toEqual(Array<string>(4).fill(uri));
      // One upstream read per change (each re-read missed once), then served from the cache again.
      expect(await l.reads('sub', 'fixture://ticker')).toBe(5);
      expect(await l.text(uri)).toBe('tick 4');
      expect(await l.reads('sub', 'fixture://ticker')).toBe(5);
    });

    it('after unsubscribe: no update reaches the client, and the cache still follows the upstream', async () => {
      const l = live();
      const uri = 'sub+fixture://ticker';
      const before = l.updates(uri);
      const n = tickOf(await l.text(uri));
      await l.client.unsubscribeResource({ uri });
      await l.control('sub', 'tick');
      // The fixture sends its `updated` before answering the control read, and the proxy relays
      // notifications in order, so an update to this client would have arrived by now.
      expect(l.updates(uri)).toBe(before);
      expect(await l.text(uri)).toBe(`tick ${n + 1}`);
    });

    it('timer-driven changes (every 50 ms): after k updates a re-read shows at least k ticks more, never going back', async () => {
      const l = live();
      const uri = 'timer+fixture://ticker';
      const start = tickOf(await l.text(uri));
      await l.client.subscribeResource({ uri });
      let last = start;
      for (let k = 1; k <= 6; k++) {
        await l.until(() => l.updates(uri) >= k, `update #${k} of ${uri}`);
        // Every update stands for at least one tick after `start` that the proxy had seen (and
        // invalidated the cache for) before relaying it; the read is sent after it arrived.
        const seen = l.updates(uri);
        const n = tickOf(await l.text(uri));
        expect(n).toBeGreaterThanOrEqual(start + seen);
        expect(n).toBeGreaterThanOrEqual(last);
        last = n;
      }
      await l.client.unsubscribeResource({ uri });
      expect(new Set(l.updated.filter((u) => u.startsWith('timer+')))).toEqual(new Set([uri]));
    });

    it('subscribing to an unknown server id is -32002 with the URI', async () => {
      const uri = 'nosuch+fixture://ticker';
      expect(await rpcError(live().client.subscribeResource({ uri }))).toEqual(notFound(uri));
    });
  });

  describe('read cache', () => {
    it.each([
      ['sub', 'cached', 1, true],
      ['nocache', 'cache: false', 2, false],
    ] as const)('%s (%s): two reads of one URI make %i upstream read(s); held subscribed upstream: %s', async (server, _what, expected, held) => {
      const l = live();
      const uri = `${server}+fixture://res/1`;
      const first = await l.client.readResource({ uri });
      const second = await l.client.readResource({ uri });
      expect(first).toEqual({ contents: [fixtureContent(uri, 1, 1024)] });
      expect(second).toEqual(first);
      const stats = await l.stats(server);
      expect(stats.readsByUri['fixture://res/1']).toBe(expected);
      expect(stats.subscribed.includes('fixture://res/1')).toBe(held);
    });

    it.each([
      ['slow', 'coalesced into one', 1],
      ['nocache', 'cache: false, each its own', 100],
    ] as const)('%s: 100 concurrent reads of a cold URI (100 ms each upstream): %s upstream read', async (server, _what, expected) => {
      const l = live();
      const uri = `${server}+fixture://res/2`;
      expect(await l.reads(server, 'fixture://res/2')).toBe(0);
      const results = await Promise.all(Array.from({ length: 100 }, () => l.client.readResource({ uri })));
      const expectedResult = { contents: [fixtureContent(uri, 2, 1024)] };
      expect(results.filter((r) => JSON.stringify(r) !== JSON.stringify(expectedResult))).toEqual([]);
      expect(await l.reads(server, 'fixture://res/2')).toBe(expected);
    });

    it('a change landing between a cold read and its coherence subscription does not leave a stale entry', async () => {
      const l = live();
      // README, Coherence: entries of subscribe-capable upstreams are dropped the moment the upstream
      // reports a change, "they are exact".
      const uri = 'coherent+fixture://ticker';
      const { pid } = await l.stats('coherent');
      // Freeze the upstream so that the cold read (with the coherence subscribe the proxy sends
      // ahead of it) and a tick are queued to it in this order.
      process.kill(pid, 'SIGSTOP');
      const read = l.text(uri);
      const tick = l.control('coherent', 'tick');
      try {
        await l.stats('sub'); // requests are handled in order: both are in the frozen upstream's pipe now
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      expect(await read).toBe('tick 0'); // answered just before the tick
      await tick;
      // The upstream is at tick 1: whatever the order, the entry from tick 0 must not be served.
      expect(await l.text(uri)).toBe('tick 1');
      // The entry read at tick 1 is stored and holds its subscription from now on.
      expect((await l.stats('coherent')).subscribed).toContain('fixture://ticker');
    });
  });

  describe('list_changed', () => {
    it('an upstream list_changed reaches the client; the next list holds the new resource', async () => {
      const l = live();
      expect(urisOf('sub', (await listAll(l.client)).items)).toEqual(catalog('sub', 3));
      const seen = l.listChanged;
      await l.control('sub', 'add');
      await l.until(() => l.listChanged > seen, 'list_changed after one add');
      const after = await listAll(l.client);
      expect(urisOf('sub', after.items)).toEqual(catalog('sub', 3, ['fixture://added/0']));
      expect(after.items.find((i) => i.uri === 'sub+fixture://added/0')).toEqual({
        uri: 'sub+fixture://added/0',
        name: 'added-0',
        mimeType: 'text/plain',
      });
      expect(await l.text('sub+fixture://added/0')).toBe('added 0');
    });

    it('a burst of three adds within the coalescing window is one list_changed; a later add is another', async () => {
      const l = live();
      const seen = l.listChanged;
      await Promise.all([l.control('sub', 'add'), l.control('sub', 'add'), l.control('sub', 'add')]);
      await l.until(() => l.listChanged > seen, 'list_changed after the burst');
      expect(urisOf('sub', (await listAll(l.client)).items)).toEqual(
        catalog('sub', 3, ['fixture://added/0', 'fixture://added/1', 'fixture://added/2', 'fixture://added/3']),
      );
      await l.control('sub', 'add');
      await l.until(() => l.listChanged >= seen + 2, 'list_changed after the single add');
      expect(l.listChanged).toBe(seen + 2);
      expect(urisOf('sub', (await listAll(l.client)).items)).toContain('sub+fixture://added/4');
    });
  });

  describe('subscriptions emulated by polling (upstream without subscribe support)', () => {
    it('a change is relayed once; unchanged polls stay silent; unsubscribe stops the poller', async () => {
      const l = live();
      const uri = 'poll+fixture://ticker';
      const polls = () => l.reads('poll', 'fixture://ticker');
      // A second subscription is the clock: its poller runs on the same interval.
      const clock = 'poll+fixture://res/0';
      const ticks = () => l.reads('poll', 'fixture://res/0');
      const afterPolls = async (n: number, of: () => Promise<number>, what: string) => {
        const from = await of();
        await eventually(async () => (await of()) >= from + n, `${n} more polls of ${what}`);
      };

      await l.client.subscribeResource({ uri });
      expect(await polls()).toBe(1); // the baseline read, taken before the subscribe was answered
      await afterPolls(3, polls, 'the ticker (unchanged)');
      expect(l.updates(uri)).toBe(0);

      await l.control('poll', 'tick');
      await l.until(() => l.updates(uri) >= 1, 'the polled update');
      // Polls after the one that saw the change: each completes before the next starts, so an
      // update from either would have reached the client before the fixture's counters did.
      await afterPolls(3, polls, 'the ticker (changed once)');
      expect(l.updates(uri)).toBe(1);

      await l.control('poll', 'tick');
      await l.until(() => l.updates(uri) >= 2, 'the second polled update');

      await l.client.subscribeResource({ uri: clock });
      await l.client.unsubscribeResource({ uri });
      const stopped = await polls();
      await afterPolls(3, ticks, 'the clock resource');
      expect(await polls()).toBe(stopped);
      await l.client.unsubscribeResource({ uri: clock });
      expect(l.updated.filter((u) => u.startsWith('poll+'))).toEqual([uri, uri]);
    });

    it('a re-read right after a polled update returns the new content, not what was cached before', async () => {
      const l = live();
      const uri = 'poll+fixture://ticker';
      // README, Read cache: the cache is invalidated on `updated` "before the notification is relayed,
      // so a client that re-reads at once gets fresh content" -- the poller's `updated` included.
      const n = tickOf(await l.text(uri)); // cached now (TTL-bounded: no upstream subscription possible)
      const before = l.updates(uri);
      await l.client.subscribeResource({ uri });
      try {
        await l.control('poll', 'tick');
        await l.until(() => l.updates(uri) > before, 'the polled update');
        expect(await l.text(uri)).toBe(`tick ${n + 1}`);
      } finally {
        await l.client.unsubscribeResource({ uri });
      }
    });
  });
});

describe('an upstream that restarts', () => {
  // a: subscribe-capable; its requests would time out only after 60 s, so only the kill can end one.
  // b: a bystander that must keep answering throughout.
  // Reconnect delays are drawn from [200, 400] ms, then [400, 800] ms: a list_changed 20 ms after the
  // loss is sent, and read, well before the upstream is back. The backoff resets only after 10 s up.
  const live = suiteResource(() =>
    Live.start(
      {
        servers: {
          a: { ...upstreams.fixture('--subscribe', '--resources', '3'), timeoutMs: 60_000 },
          b: upstreams.fixture('--resources', '1'),
        },
        reconnect: { initialDelayMs: 400, maxDelayMs: 10_000 },
        listChanged: { coalesceMs: 20 },
      },
      { logLevel: 'info' },
    ),
  );
  const ticker = 'a+fixture://ticker';
  const readyLog = (r: LogRecord) => r.server === 'a' && r.msg === 'upstream ready';
  const scheduledLog = (r: LogRecord) => r.server === 'a' && r.msg === 'reconnect scheduled';
  let firstPid = 0;
  let secondPid = 0;

  it('fails the read in flight at once, answers -32002 while down, and comes back fresh with its subscription', async () => {
    const l = live();
    const before = await l.stats('a');
    firstPid = before.pid;
    expect(await l.text(ticker)).toBe('tick 0');
    await l.client.subscribeResource({ uri: ticker });
    for (let k = 1; k <= 2; k++) {
      await l.control('a', 'tick');
      await l.until(() => l.updates(ticker) >= k, `update #${k} before the restart`);
    }
    expect(await l.text(ticker)).toBe('tick 2'); // cached from the first process
    expect(l.listChanged).toBe(0);

    // Freeze the child so a read sent now stays in flight, then kill it.
    process.kill(firstPid, 'SIGSTOP');
    let pending: Promise<unknown>;
    try {
      pending = l.client.readResource({ uri: 'a+fixture://res/0' });
      pending.catch(() => undefined);
      // Requests are handled in order: once b has answered, the read for a has been sent upstream.
      expect(await l.text('b+fixture://res/0')).toBe(fixtureContent('', 0, 1024).text);
    } finally {
      process.kill(firstPid, 'SIGKILL');
    }
    const killedAt = performance.now();
    expect(await within(rpcError(pending), 'the in-flight read to fail')).toEqual(notFound('a+fixture://res/0'));
    expect(performance.now() - killedAt).toBeLessThan(5_000); // its timeout is 60 s

    const closed = await l.nthLog(1, (r) => r.server === 'a' && r.msg === 'upstream connection closed', 'connection closed');
    expect(closed.level).toBe(40);
    const scheduled = await l.nthLog(1, scheduledLog, 'first reconnect scheduled');
    expect(scheduled).toMatchObject({ level: 30, attempt: 1 });
    expect(scheduled.delayMs).toBeGreaterThanOrEqual(200);
    expect(scheduled.delayMs).toBeLessThanOrEqual(400);

    // While down: a's URIs (cached or not) are not found, b answers, the list reports a as unavailable.
    for (const uri of ['a+fixture://res/1', ticker, `a+fixture://stats${unique()}`]) {
      expect(await rpcError(l.client.readResource({ uri }))).toEqual(notFound(uri));
    }
    expect(await rpcError(l.client.subscribeResource({ uri: 'a+fixture://res/2' }))).toEqual(notFound('a+fixture://res/2'));
    expect((await l.stats('b')).pid).toBeGreaterThan(0);
    await l.until(() => l.listChanged >= 1, 'list_changed for the loss');
    const down = await listAll(l.client);
    expect(down.items.map((i) => i.uri)).toEqual(catalog('b', 1));
    expect(down.pages.map((p) => p.meta)).toEqual([{ [META_INCOMPLETE]: [{ server: 'a', reason: 'unavailable' }] }]);

    // Back: a new process, announced, with the subscription re-established and nothing cached from before.
    await l.nthLog(2, readyLog, 'upstream ready again');
    await l.until(() => l.listChanged >= 2, 'list_changed for the return');
    const up = await listAll(l.client);
    expect(up.items.map((i) => i.uri)).toEqual([...catalog('a', 3), ...catalog('b', 1)]);
    expect(up.pages.map((p) => p.meta)).toEqual([undefined]);
    const after = await l.stats('a');
    secondPid = after.pid;
    expect(secondPid).not.toBe(firstPid);
    expect(await waitForExit(firstPid)).toBe(true);
    expect(after.subscribed).toContain('fixture://ticker');
    expect(after.readsByUri).toEqual({});
    expect(await l.text(ticker)).toBe('tick 0');

    const updatesBefore = l.updates(ticker);
    await l.control('a', 'tick');
    await l.until(() => l.updates(ticker) > updatesBefore, 'an update from the new process');
    expect(await l.text(ticker)).toBe('tick 1');
    expect(l.updated).toEqual(Array<string>(updatesBefore + 1).fill(ticker));
    expect(l.listChanged).toBe(2);
    expect(isAlive(secondPid)).toBe(true);
  });

  it('lost again soon after the reconnect: the backoff is not reset (second delay from [400, 800] ms)', async () => {
    const l = live();
    expect(secondPid).toBeGreaterThan(0);
    process.kill(secondPid, 'SIGKILL');
    const scheduled = await l.nthLog(2, scheduledLog, 'second reconnect scheduled');
    expect(scheduled).toMatchObject({ level: 30, attempt: 2 });
    expect(scheduled.delayMs).toBeGreaterThanOrEqual(400);
    expect(scheduled.delayMs).toBeLessThanOrEqual(800);
    const ready = await l.nthLog(3, readyLog, 'upstream ready a third time');
    expect((ready.time as number) - (scheduled.time as number)).toBeGreaterThanOrEqual((scheduled.delayMs as number) - TIMER_SLACK_MS);

    const stats = await l.stats('a');
    expect(stats.pid).not.toBe(secondPid);
    expect(stats.subscribed).toContain('fixture://ticker');
    expect(await l.text(ticker)).toBe('tick 0');
    const updatesBefore = l.updates(ticker);
    await l.control('a', 'tick');
    await l.until(() => l.updates(ticker) > updatesBefore, 'an update from the third process');
    expect(await l.text(ticker)).toBe('tick 1');
  });
});

describe('a crash-looping upstream next to a good one', () => {
  const live = suiteResource(() =>
    Live.start(
      {
        servers: { dead: upstreams.fixture('--exit-on-start'), good: upstreams.fixture('--resources', '2') },
        reconnect: { initialDelayMs: 50, maxDelayMs: 400 },
      },
      { logLevel: 'info' },
    ),
  );
  const CEILINGS = [50, 100, 200, 400, 400];

  it('retries with exponential, jittered, capped delays while the good one keeps serving', async () => {
    const l = live();
    const good = await l.stats('good');
    const records: LogRecord[] = [];
    for (const [i, ceiling] of CEILINGS.entries()) {
      const record = await l.nthLog(i + 1, (r) => r.server === 'dead' && r.msg === 'reconnect scheduled', `attempt ${i + 1}`);
      records.push(record);
      expect(record).toMatchObject({ level: 30, attempt: i + 1 });
      expect(record.delayMs).toBeGreaterThanOrEqual(ceiling / 2);
      expect(record.delayMs).toBeLessThanOrEqual(ceiling);
      // The good upstream answers (a live upstream round trip, not the cache), the dead one is not found.
      expect((await l.stats('good')).pid).toBe(good.pid);
      expect(await rpcError(l.client.readResource({ uri: 'dead+fixture://res/0' }))).toEqual(notFound('dead+fixture://res/0'));
    }
    // Each retry waited at least its delay; the delays climb until the cap.
    for (let i = 1; i < records.length; i++) {
      const gap = (records[i]?.time as number) - (records[i - 1]?.time as number);
      expect(gap).toBeGreaterThanOrEqual((records[i - 1]?.delayMs as number) - TIMER_SLACK_MS);
    }
    const delays = records.map((r) => r.delayMs as number);
    expect(delays.slice(0, 4)).toEqual([...delays.slice(0, 4)].sort((x, y) => x - y));
    expect(await l.text('good+fixture://res/0')).toBe(fixtureContent('', 0, 1024).text);
    const list = await listAll(l.client);
    expect(list.items.map((i) => i.uri)).toEqual(catalog('good', 2));
    expect(list.pages.map((p) => p.meta)).toEqual([{ [META_INCOMPLETE]: [{ server: 'dead', reason: 'unavailable' }] }]);
  });

  it('sends no list_changed for failed retries: the upstream never became available, the catalog never changed', async () => {
    // README: list_changed goes out when an upstream becomes available or unavailable; a retry
    // that fails leaves an unavailable upstream unavailable.
    const l = live();
    // Four retries have failed by the fifth record (the first of them 350+ ms earlier, far beyond
    // the 100 ms list_changed window); a round trip flushes anything the proxy sent before it.
    await l.nthLog(5, (r) => r.server === 'dead' && r.msg === 'reconnect scheduled', 'attempt 5');
    await l.stats('good');
    expect(l.listChanged).toBe(0);
  });
});
