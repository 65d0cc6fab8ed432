// Scale-out through the built CLI: 3 replicas sharing a real redis-server, behind a real haproxy (examples/cluster/haproxy.cfg), both eras.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { PromptListChangedNotificationSchema, ResourceUpdatedNotificationSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { ROOT, runCli } from '../helpers/built-cli.js';
import { counter, within } from '../helpers/gate.js';
import { HttpGatewayProcess } from '../helpers/http-gateway.js';
import { type LogRecord, parseLogLines, readJsonLines } from '../helpers/logs.js';
import { RemoteFixture } from '../helpers/remote-fixture.js';
import { freePort, Haproxy, RedisServer } from '../helpers/services.js';
import { answerOf, postRpc } from '../helpers/raw-http.js';
import { modernHeaders, modernRequest } from '../helpers/rpc-messages.js';

const TOKENS = {
  alice: 'alice-token-0123456789abcdef',
  lim: 'lim-token-0123456789abcdefgh',
  bob: 'bob-token-0123456789abcdefgh',
  big: 'big-token-0123456789abcdefgh',
};
type Who = keyof typeof TOKENS;
// 6 a minute: one refill every 10 s, so at most one lands inside the test; a burst of 9 for the whole cluster.
const LIMIT = { principals: ['lim'], readsPerMinute: 6, burst: 9 };
// 1000 a second, a burst of 1000: large enough to be served from leases (each replica may hold min(250, 100) / 3 = 33).
const BIG_LIMIT = { principals: ['big'], readsPerMinute: 60_000, burst: 1000 };
// Until the reload test replaces it: bob may not see (nor call) the upstream's `secret*` tools.
const SECRET_TOOLS_POLICY = {
  default: 'allow',
  rules: [{ id: 'no-bob-secrets', effect: 'deny', principals: ['bob'], actions: ['list', 'call'], tools: ['fx__secret*'] }],
};

/** One replica: `serve --http` with its own audit file and chain id, the shared Redis. */
class Replica extends HttpGatewayProcess {
  readonly audit = this.dir.file('audit.jsonl');
  configFile = '';

  constructor(readonly lbPort: number) {
    super();
  }

  static async start(chain: string, upstream: string, redis: string, lbPort: number): Promise<Replica> {
    const r = new Replica(lbPort);
    r.configFile = r.dir.writeConfig(r.config(chain, upstream, redis));
    await r.spawn(r.configFile, { logLevel: 'debug', listenMs: 30_000 });
    await within(r.started, 'the upstream to start', 30_000);
    return r;
  }

  config(chain: string, upstream: string, redis: string, policy?: unknown): Record<string, unknown> {
    return {
      servers: { fx: { url: upstream } },
      auth: { tokens: Object.entries(TOKENS).map(([principal, token]) => ({ principal, token })) },
      // Behind the balancer the Host header names it, not this replica's own port.
      http: { allowedHosts: [`127.0.0.1:${this.lbPort}`] },
      // Reads are cached for 10 minutes, and no entry holds an upstream subscription of its own, so
      // a replica that serves nobody subscribed hears of a change only through Redis.
      cache: { ttlMs: 600_000, coherentUris: 0 },
      subscriptions: { coalesceMs: 0 },
      // A list notice leaves as soon as it is decided (so it is on its way before any later barrier).
      listChanged: { coalesceMs: 0 },
      limits: { reads: [LIMIT, BIG_LIMIT] },
      audit: { file: this.audit },
      redis: { url: redis, keyPrefix: 'cluster-test:', replicas: 3, chain, reloadChannel: 'reload', dedupeMs: 2000, timeoutMs: 200 },
      policy: policy ?? SECRET_TOOLS_POLICY,
    };
  }

  /** Log records so far that match. */
  records(match: (r: LogRecord) => boolean): LogRecord[] {
    return parseLogLines(this.log).filter(match);
  }

  /** Resolves once at least `n` log records match. */
  async logged(n: number, match: (r: LogRecord) => boolean, what: string): Promise<void> {
    await this.waitForLog(() => this.records(match).length >= n, what, 20_000);
  }

  auditRecords(): Record<string, unknown>[] {
    return readJsonLines(this.audit);
  }
}

/** A 2026 stateless request as `who` to `url`; resolves with the JSON-RPC answer (an HTTP error status as `{ status }`). */
async function modern(url: URL | string, who: Who, id: number, method: string, params: Record<string, unknown>, ms = 10_000): Promise<Record<string, unknown>> {
  const res = await postRpc(url, modernRequest(id, method, params), {
    token: TOKENS[who],
    headers: modernHeaders(method, params),
    signal: AbortSignal.timeout(ms),
  });
  if (res.status !== 200) return { status: res.status, body: await res.text() };
  return answerOf(res);
}

const textOf = (answer: Record<string, unknown>): string | undefined =>
  ((answer.result as { contents?: { text?: string }[] } | undefined)?.contents ?? [])[0]?.text;

/** A client's updates so far, and a counter to wait on. */
interface Heard {
  updates: string[];
  heard: ReturnType<typeof counter>;
}

async function legacy(url: URL, who: Who): Promise<{ client: Client; transport: StreamableHTTPClientTransport } & Heard> {
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${TOKENS[who]}` } } });
  const client = new Client({ name: 'cluster-legacy', version: '1.0.0' });
  const updates: string[] = [];
  const heard = counter();
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updates.push(n.params.uri);
    heard.hit();
  });
  await client.connect(transport);
  return { client, transport, updates, heard };
}

async function listener(url: URL, who: Who, uris: string[]): Promise<{ client: ModernClient; close: () => Promise<void> } & Heard> {
  const client = new ModernClient({ name: 'cluster-modern', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new ModernHttpTransport(url, { requestInit: { headers: { authorization: `Bearer ${TOKENS[who]}` } } }));
  const updates: string[] = [];
  const heard = counter();
  client.setNotificationHandler('notifications/resources/updated', (n) => {
    updates.push(n.params.uri);
    heard.hit();
  });
  const sub = await client.listen({ resourceSubscriptions: uris });
  expect(sub.honoredFilter.resourceSubscriptions).toEqual(uris);
  return {
    client,
    updates,
    heard,
    close: async () => {
      await sub.close().catch(() => undefined);
      await client.close().catch(() => undefined);
    },
  };
}

/** The upstream's own count of reads of `uri` (its stats resource, read through replica `via`, never cached). */
async function upstreamReads(via: URL, uri: string, n: number): Promise<number> {
  const stats = JSON.parse(textOf(await modern(via, 'alice', 9000 + n, 'resources/read', { uri: `fx+fixture://stats?n=${n}` }))!) as {
    readsByUri: Record<string, number>;
  };
  return stats.readsByUri[uri] ?? 0;
}

/** What one client heard of tool and prompt list changes, and of resource updates (the barrier). */
interface ItemsHeard {
  who: string;
  tools: ReturnType<typeof counter>;
  prompts: ReturnType<typeof counter>;
  updates: ReturnType<typeof counter>;
  close: () => Promise<void>;
}

/** A 2025 session as `who` on `url`, subscribed to the `barriers`, counting what it hears. */
async function legacyItems(url: URL, who: Who, barriers: string[], label: string): Promise<ItemsHeard> {
  const s = await legacy(url, who);
  const heard: ItemsHeard = { who: label, tools: counter(), prompts: counter(), updates: s.heard, close: () => s.client.close() };
  s.client.setNotificationHandler(ToolListChangedNotificationSchema, () => heard.tools.hit());
  s.client.setNotificationHandler(PromptListChangedNotificationSchema, () => heard.prompts.hit());
  for (const uri of barriers) await s.client.subscribeResource({ uri });
  return heard;
}

/** A 2026 listen as `who` on `url` for the `barriers`, asking for tool and prompt list changes only when `asks`. */
async function modernItems(url: URL, who: Who, barriers: string[], asks: boolean, label: string): Promise<ItemsHeard> {
  const client = new ModernClient({ name: 'cluster-items', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new ModernHttpTransport(url, { requestInit: { headers: { authorization: `Bearer ${TOKENS[who]}` } } }));
  const heard: ItemsHeard = { who: label, tools: counter(), prompts: counter(), updates: counter(), close: async () => undefined };
  client.setNotificationHandler('notifications/tools/list_changed', () => heard.tools.hit());
  client.setNotificationHandler('notifications/prompts/list_changed', () => heard.prompts.hit());
  client.setNotificationHandler('notifications/resources/updated', () => heard.updates.hit());
  const sub = await client.listen({ resourceSubscriptions: barriers, ...(asks ? { toolsListChanged: true, promptsListChanged: true } : {}) });
  expect(sub.honoredFilter.toolsListChanged === true).toBe(asks);
  heard.close = async () => {
    await sub.close().catch(() => undefined);
    await client.close().catch(() => undefined);
  };
  return heard;
}

/** The upstream's own count of tools/call it received (its stats resource, never cached). */
async function upstreamToolCalls(via: URL, n: number): Promise<number> {
  return (JSON.parse(textOf(await modern(via, 'alice', 9500 + n, 'resources/read', { uri: `fx+fixture://stats?n=t${n}` }))!) as { toolCalls: number })
    .toolCalls;
}

/** The client names of a 2026 `tools/list` as `who` at `url`. */
async function toolNames(url: URL, who: Who, id: number): Promise<string[]> {
  const answer = await modern(url, who, id, 'tools/list', {});
  return ((answer.result as { tools: { name: string }[] }).tools ?? []).map((t) => t.name).sort();
}

/** examples/cluster/haproxy.cfg, with its loopback ports replaced by the test's. */
function haproxyConfig(port: number, replicas: Replica[]): string {
  let cfg = readFileSync(path.join(ROOT, 'examples', 'cluster', 'haproxy.cfg'), 'utf8').replaceAll('127.0.0.1:7330', `127.0.0.1:${port}`);
  replicas.forEach((r, i) => (cfg = cfg.replace(`127.0.0.1:${7331 + i}`, `127.0.0.1:${r.url.port}`)));
  return cfg;
}

describe('three replicas, one Redis, one haproxy', () => {
  let redis: RedisServer;
  let web: RemoteFixture;
  let haproxy: Haproxy;
  const replicas: Replica[] = [];
  const killed: Replica[] = [];
  let ids = 0;
  const lb = () => haproxy.url;

  beforeAll(async () => {
    redis = await RedisServer.start();
    web = await RemoteFixture.start('http', '--resources', '3', '--subscribe', '--tools');
    const lbPort = await freePort();
    for (const chain of ['r1', 'r2', 'r3']) replicas.push(await Replica.start(chain, web.url, redis.url, lbPort));
    await Promise.all(replicas.map((r) => r.waitForLog((l) => l.msg === 'redis connected: limits, change events and reloads are shared', 'redis')));
    haproxy = await Haproxy.start((port) => haproxyConfig(port, replicas), lbPort);
  }, 120_000);
  afterAll(async () => {
    await haproxy?.[Symbol.asyncDispose]();
    for (const r of [...replicas, ...killed]) await r[Symbol.asyncDispose]().catch(() => undefined);
    await web?.[Symbol.asyncDispose]();
    await redis?.[Symbol.asyncDispose]();
  });

  it('rate limit: reads spread round robin over the replicas get the configured total, within one refill; one round trip each', async () => {
    const evalsBefore = await redisCalls(redis.url);
    const answers: Record<string, unknown>[] = [];
    for (let i = 0; i < 18; i++) answers.push(await modern(lb(), 'lim', ++ids, 'resources/read', { uri: 'fx+fixture://res/0' }));
    const ok = answers.filter((a) => a.result !== undefined).length;
    const limited = answers.filter((a) => (a.error as { message?: string } | undefined)?.message === 'Rate limit exceeded');
    expect(ok + limited.length).toBe(18);
    expect(ok).toBeGreaterThanOrEqual(9);
    expect(ok).toBeLessThanOrEqual(10); // 9, or 10 if the one refill of a 10 s period landed inside
    for (const a of limited) expect((a.error as { data: { retryAfterMs: number } }).data.retryAfterMs).toBeGreaterThan(0);
    // Every replica served some of them (round robin), and each decided on the shared bucket.
    for (const r of replicas) expect(r.auditRecords().filter((a) => a.principal === 'lim').length).toBeGreaterThanOrEqual(5);
    for (const r of replicas) expect(r.auditRecords().every((a) => a.chain === ['r1', 'r2', 'r3'][replicas.indexOf(r)])).toBe(true);
    // An unlimited principal is not limited at all, and costs Redis nothing (cached hits or not).
    for (let i = 0; i < 12; i++) expect(textOf(await modern(lb(), 'alice', ++ids, 'resources/read', { uri: 'fx+fixture://res/0' }))).toBeDefined();
    // Redis's own count: one EVALSHA per limited read, nothing else (the script was loaded at connect).
    expect(roundTrips(evalsBefore, await redisCalls(redis.url))).toEqual({ evalsha: 18 });
  });

  it('rate limit, a large one: reads spread over the replicas are served from leases, fewer round trips than reads', async () => {
    const before = await redisCalls(redis.url);
    for (let i = 0; i < 90; i++) expect(textOf(await modern(lb(), 'big', ++ids, 'resources/read', { uri: 'fx+fixture://res/0' }))).toBeDefined();
    for (const r of replicas) expect(r.auditRecords().filter((a) => a.principal === 'big').length).toBeGreaterThanOrEqual(20);
    // Lease requests (and any give-back) only: without leases this would be 90 EVALSHAs.
    const trips = roundTrips(before, await redisCalls(redis.url));
    expect(Object.keys(trips)).toEqual(['evalsha']);
    expect(trips.evalsha).toBeLessThan(90);
  });

  it('2025 sessions stick to their replica through haproxy (its Mcp-Session-Id): every request of a session is served', async () => {
    const s = await legacy(lb(), 'alice');
    try {
      for (let i = 0; i < 9; i++) expect((await s.client.readResource({ uri: `fx+fixture://res/${i % 3}` })).contents).toHaveLength(1);
      // Exactly one replica knows the session.
      const sid = s.transport.sessionId!;
      const owners = await Promise.all(replicas.map((r) => fetchSession(r.url, sid)));
      expect(owners.filter((status) => status === 200)).toHaveLength(1);
      expect(owners.filter((status) => status === 404)).toHaveLength(2);
    } finally {
      await s.client.close();
    }
  });

  it('a change heard by one replica only reaches the others through Redis: their cached reads are fresh at once', async () => {
    const uri = 'fx+fixture://bumped/one';
    const [r1, r2, r3] = replicas as [Replica, Replica, Replica];
    // r2 and r3 cache the resource (the second read is a hit: the upstream saw one read from each).
    for (const r of [r2, r3])
      for (let i = 0; i < 2; i++) expect(textOf(await modern(r.url, 'alice', ++ids, 'resources/read', { uri }))).toBe('fixture://bumped/one v0');
    expect(await upstreamReads(r1.url, 'fixture://bumped/one', 1)).toBe(2);
    // Only r1 holds an upstream subscription to it.
    const s = await legacy(r1.url, 'alice');
    try {
      await s.client.subscribeResource({ uri });
      const heard = [r2, r3].map((r) => r.records((l) => l.msg === 'change delivered' && l.remote === true).length);
      await modern(r1.url, 'alice', ++ids, 'resources/read', { uri: 'fx+fixture://control/bump/one' });
      await within(
        Promise.all([r2, r3].map((r, i) => r.logged(heard[i]! + 1, (l) => l.msg === 'change delivered' && l.remote === true, 'the change from Redis'))),
        'r2 and r3 to hear the change',
      );
      for (const r of [r2, r3]) expect(textOf(await modern(r.url, 'alice', ++ids, 'resources/read', { uri }))).toBe('fixture://bumped/one v1');
      for (let i = 0; i < 3; i++) expect(textOf(await modern(lb(), 'alice', ++ids, 'resources/read', { uri }))).toBe('fixture://bumped/one v1');
      await within(s.heard.until(1), 'the update on r1');
      expect(s.updates).toEqual([uri]);
    } finally {
      await s.client.close();
    }
  });

  it('a change heard by every replica reaches each 2025 subscriber and 2026 listener on every replica exactly once', async () => {
    const uri = 'fx+fixture://bumped/all';
    const subscribers = await Promise.all(replicas.map((r) => legacy(r.url, 'alice')));
    const listeners = await Promise.all(replicas.map((r) => listener(r.url, 'bob', [uri])));
    try {
      for (const s of subscribers) await s.client.subscribeResource({ uri });
      const copy = (l: LogRecord) => l.msg === 'change delivered' || l.msg.startsWith('change repeated');
      const own = (l: LogRecord) => copy(l) && l.remote === false;
      const fromPeers = (l: LogRecord) => copy(l) && l.remote === true;
      const publishes = (l: LogRecord) => l.msg === 'change delivered' && l.remote === false;
      const before = replicas.map((r) => ({ own: r.records(own).length, peers: r.records(fromPeers).length, published: r.records(publishes).length }));
      await modern(lb(), 'alice', ++ids, 'resources/read', { uri: 'fx+fixture://control/bump/all' });
      // Every replica hears its own upstream's copy. One that hears it before any peer's delivers and
      // publishes it; every other replica then hears each published copy through Redis (delivered if
      // it is the first copy there, else dropped as a repeat). Wait for all of them, then count.
      await within(Promise.all(replicas.map((r, i) => r.logged(before[i]!.own + 1, own, 'its own copy'))), 'every replica’s own copy');
      const publishers = replicas.map((r, i) => r.records(publishes).length - before[i]!.published);
      const published = publishers.reduce((a, b) => a + b, 0);
      expect(published).toBeGreaterThanOrEqual(1);
      await within(
        Promise.all(replicas.map((r, i) => r.logged(before[i]!.peers + published - publishers[i]!, fromPeers, 'the published copies'))),
        'every published copy on every replica',
      );
      const delivered = replicas.map((r) => r.records((l) => l.msg === 'change delivered').length);
      await within(Promise.all([...subscribers, ...listeners].map((c) => c.heard.until(1))), 'every client’s update');
      // Every copy was handled on every replica before this: no later copy can arrive.
      for (const c of [...subscribers, ...listeners]) expect(c.updates).toEqual([uri]);
      expect(replicas.map((r) => r.records((l) => l.msg === 'change delivered').length)).toEqual(delivered);
      for (const r of replicas) expect(textOf(await modern(r.url, 'alice', ++ids, 'resources/read', { uri }))).toBe('fixture://bumped/all v1');
    } finally {
      await Promise.all([...subscribers.map((s) => s.client.close()), ...listeners.map((l) => l.close())]);
    }
  });

  it('a tool or prompt list change reaches each 2025 session and 2026 listener that asked, on every replica, once; not one that did not ask, nor a principal the policy denies the changed tool; no replica routes on the stale list', async () => {
    const [r1, r2, r3] = replicas as [Replica, Replica, Replica];
    // One URI per barrier: a second change of one URI within redis.dedupeMs would be delivered as one.
    const barrier = [1, 2, 3, 4].map((k) => `fx+fixture://bumped/items-${k}`);
    let bumps = 0;
    // Every replica's catalog holds the tool list (a call routed through it).
    for (const r of replicas)
      expect((await modern(r.url, 'alice', ++ids, 'tools/call', { name: 'fx__probe', arguments: {} })).result).toMatchObject({
        content: [{ text: 'called probe' }],
      });
    const clients: ItemsHeard[] = [];
    for (const [i, r] of replicas.entries()) {
      clients.push(await legacyItems(r.url, 'alice', barrier, `r${i + 1} 2025 alice`), await legacyItems(r.url, 'bob', barrier, `r${i + 1} 2025 bob`));
      clients.push(
        await modernItems(r.url, 'alice', barrier, true, `r${i + 1} 2026 alice`),
        await modernItems(r.url, 'bob', barrier, true, `r${i + 1} 2026 bob`),
      );
      clients.push(await modernItems(r.url, 'alice', barrier, false, `r${i + 1} 2026 alice, did not ask`));
    }
    const asked = (c: ItemsHeard) => !c.who.endsWith('did not ask');
    const alice = clients.filter((c) => asked(c) && c.who.endsWith('alice'));
    const bob = clients.filter((c) => asked(c) && c.who.endsWith('bob'));
    const counts = (kind: 'tools' | 'prompts') => Object.fromEntries(clients.map((c) => [c.who, c[kind].count]));
    const expected = (a: number, b: number) => Object.fromEntries(clients.map((c) => [c.who, !asked(c) ? 0 : c.who.endsWith('alice') ? a : b]));
    /**
     * Every client hears one more update of the barrier URI. Each replica sent its list notices
     * before (the clients that must hear them did), on the same streams: any notice a client was
     * not meant to get has arrived by then.
     */
    const barrierPassed = async () => {
      bumps++;
      await modern(lb(), 'alice', ++ids, 'resources/read', { uri: `fx+fixture://control/bump/items-${bumps}` });
      await within(Promise.all(clients.map((c) => c.updates.until(bumps))), 'the barrier update on every client');
    };
    try {
      // 1. A tool bob may not see is added; only r1's upstream session is told: r2 and r3 learn it through Redis.
      await modern(r1.url, 'alice', ++ids, 'resources/read', { uri: 'fx+fixture://control/tools/add/secret-x' });
      await within(Promise.all(alice.map((c) => c.tools.until(1))), 'every asking alice client to hear the tool list change');
      await barrierPassed();
      expect(counts('tools')).toEqual(expected(1, 0));
      for (const r of replicas) expect(await toolNames(r.url, 'alice', ++ids)).toEqual(['fx__keep', 'fx__probe', 'fx__secret-x']);
      for (const r of replicas) expect(await toolNames(r.url, 'bob', ++ids)).toEqual(['fx__keep', 'fx__probe']);

      // 2. At once (well within redis.dedupeMs), through r2: a tool every one may see is removed.
      const callsBefore = await upstreamToolCalls(r1.url, 1);
      await modern(r2.url, 'alice', ++ids, 'resources/read', { uri: 'fx+fixture://control/tools/remove/probe' });
      await within(Promise.all([...alice.map((c) => c.tools.until(2)), ...bob.map((c) => c.tools.until(1))]), 'every asking client to hear the second change');
      await barrierPassed();
      expect(counts('tools')).toEqual(expected(2, 1));
      // No replica routes the removed tool to the upstream: each answers it as unknown itself.
      for (const r of [r1, r2, r3]) expect((await modern(r.url, 'alice', ++ids, 'tools/call', { name: 'fx__probe', arguments: {} })).error).toBeDefined();
      expect(await upstreamToolCalls(r1.url, 2)).toBe(callsBefore);
      for (const r of replicas) expect(await toolNames(r.url, 'alice', ++ids)).toEqual(['fx__keep', 'fx__secret-x']);

      // 3. A prompt is added and every replica's upstream session is told: each replica hears its own
      // copy and the others' through Redis, and each client still hears it once.
      await modern(lb(), 'alice', ++ids, 'resources/read', { uri: 'fx+fixture://control/prompts/add/p2?to=all' });
      await within(Promise.all([...alice, ...bob].map((c) => c.prompts.until(1))), 'every asking client to hear the prompt list change');
      await within(
        Promise.all(replicas.map((r) => r.logged(3, (l) => l.msg === 'list change heard' && l.list === 'prompts', 'its own copy and the two others'))),
        'every copy on every replica',
      );
      // Each copy is announced, found to be nothing new, or folded into a fetch that waits (then found so).
      const handled = (l: LogRecord) =>
        l.list === 'prompts' &&
        ['list change announced', 'list change: nothing new to announce', 'list change: folded into the fetch that waits'].includes(l.msg);
      await within(Promise.all(replicas.map((r) => r.logged(3, handled, 'every copy handled'))), 'every copy handled on every replica');
      await barrierPassed();
      expect(counts('prompts')).toEqual(expected(1, 1));

      // 4. Forged and garbled messages on the change channel: dropped, or (well-formed) found to change nothing; no replica falls over.
      const { createClient } = await import('redis');
      const raw = createClient({ url: redis.url });
      await raw.connect();
      try {
        for (const junk of [
          'nope',
          '{"o":"x","kind":"list","server":"fx","list":"secrets"}',
          '{"o":"x","kind":"list","server":"nope","list":"tools"}',
          JSON.stringify({ o: 'x', kind: 'list', server: 'fx', list: 'tools', extra: 'x'.repeat(20_000) }),
          '{"o":"forger","kind":"list","server":"fx","list":"tools"}',
        ])
          await raw.publish('cluster-test:changes', junk);
      } finally {
        await raw.close();
      }
      await within(
        Promise.all(
          replicas.map((r) =>
            r.logged(1, (l) => l.msg === 'list change: nothing new to announce' && l.list === 'tools' && l.remote === true, 'the forged change'),
          ),
        ),
        'the forged change on every replica',
      );
      await barrierPassed();
      expect(counts('tools')).toEqual(expected(2, 1));
      expect(counts('prompts')).toEqual(expected(1, 1));
      for (const r of replicas) expect(await toolNames(r.url, 'bob', ++ids)).toEqual(['fx__keep']);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it('a SIGHUP to one replica reaches every replica (redis.reloadChannel) within a second', async () => {
    const [r1, r2, r3] = replicas as [Replica, Replica, Replica];
    const uri = 'fx+fixture://res/2';
    const policy = {
      default: 'allow',
      rules: [{ id: 'no-bob-res2', effect: 'deny', principals: ['bob'], actions: ['read'], resources: ['fx+fixture://res/2'] }],
    };
    for (const [i, r] of replicas.entries()) r.dir.writeConfig(r.config(`r${i + 1}`, web.url, redis.url, policy));
    for (const r of replicas) expect(textOf(await modern(r.url, 'bob', ++ids, 'resources/read', { uri }))).toBeDefined();
    const reloaded = [r1, r2, r3].map((r) => r.nextLog((l) => l.msg === 'configuration reloaded'));
    const sent = performance.now();
    process.kill(r1.pid, 'SIGHUP');
    await within(Promise.all(reloaded), 'every replica to reload');
    const took = performance.now() - sent;
    expect(took).toBeLessThan(1000);
    for (const r of replicas) expect((await modern(r.url, 'bob', ++ids, 'resources/read', { uri })).error).toMatchObject({ message: 'Resource not found' });
    expect(r2.records((l) => l.msg === 'reload published by another replica')).toHaveLength(1);
  });

  it('Redis restarted under load: limits fall back to limit / replicas at once, nothing hangs, and the replicas share again once it is back', async () => {
    let stop = false;
    const ok = counter();
    const outcomes = { limited: 0, other: [] as unknown[] };
    const load = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const a: Record<string, unknown> = await modern(
          lb(),
          w % 2 ? 'alice' : 'lim',
          ++ids,
          'resources/read',
          { uri: `fx+fixture://res/${i % 3}` },
          5000,
        ).catch((e: unknown) => ({ thrown: String(e) }));
        if (a.result) ok.hit();
        else if ((a.error as { message?: string } | undefined)?.message === 'Rate limit exceeded') outcomes.limited++;
        else outcomes.other.push(a);
      }
    });
    const down = replicas.map((r) => r.nextLog((l) => typeof l.msg === 'string' && l.msg.startsWith('redis unreachable')));
    await redis.kill();
    await within(Promise.all(down), 'every replica to notice Redis is gone');
    await within(ok.until(ok.count + 20), 'reads to go on without Redis');
    const up = replicas.map((r) => r.nextLog((l) => l.msg === 'redis connected: limits, change events and reloads are shared'));
    await redis.restart();
    await within(Promise.all(up), 'every replica to reconnect');
    await within(ok.until(ok.count + 20), 'reads to go on after Redis is back');
    stop = true;
    await within(Promise.all(load), 'the load to stop (no request hangs)');
    expect(outcomes.other).toEqual([]);
    expect(outcomes.limited).toBeGreaterThan(0);
    // With Redis back the replicas decide on the shared bucket again: the fresh Redis holds it, drained by the load.
    const { createClient } = await import('redis');
    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      const bucket = await client.hGetAll('cluster-test:rl:reads:lim');
      expect(Number(bucket.t)).toBeLessThan(1);
    } finally {
      await client.close();
    }
  });

  it('a replica SIGKILLed under load: 2026 requests go on through the others (only those it had in flight fail); its 2025 session gets 404 and re-initializes elsewhere', async () => {
    // A 2025 session, then the replica that holds it is the one killed.
    let session = await legacy(lb(), 'alice');
    const sid = session.transport.sessionId!;
    const owners = await Promise.all(replicas.map((r) => fetchSession(r.url, sid)));
    const victim = replicas[owners.indexOf(200)]!;
    let stop = false;
    const ok = counter();
    const outcomes = { failed: 0, statuses: [] as unknown[] };
    const WORKERS = 4;
    let killedAt = Infinity;
    const load = Array.from({ length: WORKERS }, async () => {
      for (let i = 0; !stop; i++) {
        const sent = performance.now();
        const a = await modern(lb(), 'alice', ++ids, 'resources/read', { uri: `fx+fixture://res/${i % 3}` }, 5000).catch((e: unknown) => ({
          thrown: String(e),
        }));
        if ((a as Record<string, unknown>).result) ok.hit();
        else {
          outcomes.failed++;
          outcomes.statuses.push({ ...a, sentBeforeKill: sent < killedAt });
        }
      }
    });
    const waitOk = (n: number, what: string) => within(ok.until(ok.count + n), what);
    await waitOk(30, 'load through all three');
    killedAt = performance.now();
    process.kill(victim.pid, 'SIGKILL');
    await victim.process;
    await waitOk(60, 'load through the two others');
    stop = true;
    await within(Promise.all(load), 'the load to stop (no request hangs)');
    // Only requests already sent when the replica died may fail (those it had in flight; each worker has one in flight).
    expect(outcomes.statuses.filter((s) => !(s as { sentBeforeKill: boolean }).sentBeforeKill)).toEqual([]);
    expect(outcomes.failed).toBeLessThanOrEqual(WORKERS);
    // The session's replica is gone: haproxy sends it elsewhere, which does not know it (404); the
    // client opens a new session and goes on.
    const lost = await fetchSession(lb(), sid);
    expect(lost).toBe(404);
    await session.client.close().catch(() => undefined);
    session = await legacy(lb(), 'alice');
    expect((await session.client.readResource({ uri: 'fx+fixture://res/0' })).contents).toHaveLength(1);
    await session.client.close();
    // Its audit file stays (disposed with the others at the end): every record it answered with is in it, and verifies below.
    replicas.splice(replicas.indexOf(victim), 1);
    killed.push(victim);
  });

  it('audit: the three replicas’ chains verify together after the run', async () => {
    for (const r of replicas) await r.stop();
    const files = [...replicas, ...killed].map((r) => r.audit);
    const { exitCode, stdout } = await runCli(['audit', 'verify', ...files]);
    expect(String(stdout)).toMatch(/^3 chains: 3 verified, 0 broken, \d+ records$/m);
    for (const chain of ['r1', 'r2', 'r3']) expect(String(stdout)).toMatch(new RegExp(`^chain ${chain}: verified \\d+ records`, 'm'));
    expect(exitCode).toBe(0);
  });
});

/** Redis's own command counts (`INFO commandstats`) by command, without this client's own (HELLO, CLIENT SETINFO, INFO). */
async function redisCalls(url: string): Promise<Record<string, number>> {
  const { createClient } = await import('redis');
  const client = createClient({ url });
  await client.connect();
  try {
    const calls: Record<string, number> = {};
    for (const m of (await client.info('commandstats')).matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm)) {
      if (!['hello', 'client|setinfo', 'info'].includes(m[1]!)) calls[m[1]!] = Number(m[2]);
    }
    return calls;
  } finally {
    await client.close();
  }
}

/** The commands sent to Redis between two counts; those a script runs inside it (TIME, HMGET, HSET, PEXPIRE) are not round trips. */
function roundTrips(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [cmd, n] of Object.entries(after)) {
    if (['time', 'hmget', 'hset', 'pexpire'].includes(cmd)) continue;
    if (n - (before[cmd] ?? 0) > 0) out[cmd] = n - (before[cmd] ?? 0);
  }
  return out;
}

/** The HTTP status of a 2025 `ping` on session `sid` at `url` (200: the session lives there; 404: unknown). */
async function fetchSession(url: URL, sid: string): Promise<number> {
  const res = await postRpc(url, { jsonrpc: '2.0', id: 77, method: 'ping' }, { token: TOKENS.alice, sid, signal: AbortSignal.timeout(10_000) });
  await res.body?.cancel();
  return res.status;
}
