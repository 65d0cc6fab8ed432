// End to end, hostile and broken upstreams behind the built CLI: a raw upstream that answers a read
// with a message nested 5000 levels deep, with one line larger than its maxResponseBytes, or with a
// burst of unsolicited garbage; an upstream whose reads hang forever behind a small queue; and reads
// that fail while the cache keeps upstream subscriptions for what it stores. Waits are on answers,
// log records and exits; a test timeout is the only clock.
import { describe, expect, it } from 'vitest';
import { hostileUpstream, rssBytes, upstreams } from '../helpers/built-cli.js';
import { fixtureText } from '../helpers/catalog.js';
import { type LogRecord } from '../helpers/logs.js';
import { rpcError } from '../helpers/rpc-error.js';
import { ProxyProcess } from '../helpers/sdk-clients.js';
import { rawCli, type RawCliClient } from '../helpers/cli-stdio.js';
import { type Answer } from '../helpers/raw-client.js';

const HUGE_LIMIT = 1024 * 1024;
const HUGE_BYTES = 2 * HUGE_LIMIT;

/** A long per-request timeout: an answer that only comes from timing out would fail the test timeout first. */
const LONG_TIMEOUT_MS = 60_000;

const ready = (server: string) => (r: LogRecord) => r.server === server && r.msg === 'upstream ready';

async function start(config: unknown): Promise<RawCliClient> {
  const s = rawCli(config);
  await s.initialize();
  return s;
}

/**
 * Reads `uri` (of `server`) and expects the text `expected`. The proxy may have dropped that
 * upstream's connection (a permitted answer to a hostile message) and be reconnecting: then the read
 * is -32002, and it is retried once the next `upstream ready` record (after `readyBefore` of them) is
 * written. Bounded: at most three reconnects.
 */
async function readAfterPossibleReconnect(s: RawCliClient, server: string, uri: string, expected: string, readyBefore: number): Promise<void> {
  let answer: Answer | undefined;
  for (let attempt = 1; attempt <= 4; attempt++) {
    answer = await s.request('resources/read', { uri });
    if (answer.error?.code !== -32002) break;
    await s.carrier.waitForLogs(readyBefore + attempt, ready(server), `reconnect #${attempt} of ${server}`);
  }
  expect(answer?.result?.contents, JSON.stringify(answer).slice(0, 500)).toEqual([{ uri, mimeType: 'text/plain', text: expected }]);
}

describe('an upstream that answers with a message nested deeper than wire.maxDepth', () => {
  it('the read is answered -32603; the proxy lives; other reads of that upstream work', async () => {
    await using s = await start({
      servers: {
        h: { ...hostileUpstream(), timeoutMs: LONG_TIMEOUT_MS },
        cat: upstreams.fixture('--resources', '1'),
      },
    });
    expect(await s.readText('h+hostile://ok')).toBe('ok');
    const readyBefore = s.carrier.logCount(ready('h'));
    const answer = await s.request('resources/read', { uri: 'h+hostile://deep' });
    expect(answer.error?.code, JSON.stringify(answer).slice(0, 300)).toBe(-32603);
    expect(answer.result).toBeUndefined();
    expect(s.carrier.alive).toBe(true);
    await readAfterPossibleReconnect(s, 'h', 'h+hostile://ok', 'ok', readyBefore);
    expect(await s.readText('cat+fixture://res/0')).toBe(fixtureText(0, 1024));
  });
});

describe('an upstream message larger than servers.<id>.maxResponseBytes', () => {
  it('the read is answered -32603 "too large" with data.limit at once; that upstream keeps serving', { timeout: 20_000 }, async () => {
    await using s = await start({
      servers: {
        h: { ...hostileUpstream('--huge-bytes', String(HUGE_BYTES)), maxResponseBytes: HUGE_LIMIT, timeoutMs: LONG_TIMEOUT_MS },
        cat: upstreams.fixture('--resources', '1'),
      },
      reconnect: { initialDelayMs: 50, maxDelayMs: 1000 },
    });
    expect(await s.readText('h+hostile://ok')).toBe('ok');
    const readyBefore = s.carrier.logCount(ready('h'));
    // Answered long before the 60 s timeoutMs: the test times out at 20 s otherwise.
    const answer = await s.request('resources/read', { uri: 'h+hostile://huge' }, undefined, 15_000);
    expect(answer.result, 'the oversized result must not be relayed').toBeUndefined();
    expect(answer.error?.code).toBe(-32603);
    expect(String(answer.error?.message)).toMatch(/too large/i);
    expect((answer.error?.data as { limit?: unknown } | undefined)?.limit).toBe(HUGE_LIMIT);
    expect(s.carrier.alive).toBe(true);
    await readAfterPossibleReconnect(s, 'h', 'h+hostile://ok', 'ok', readyBefore);
    expect(await s.readText('cat+fixture://res/0')).toBe(fixtureText(0, 1024));
  });
});

describe('an upstream that writes unsolicited garbage', () => {
  it('non-JSON, bad UTF-8, unknown response ids and deep unsolicited messages do not bring the proxy down', async () => {
    await using s = await start({
      servers: {
        h: { ...hostileUpstream(), timeoutMs: LONG_TIMEOUT_MS },
        cat: upstreams.fixture('--resources', '1'),
      },
      reconnect: { initialDelayMs: 50, maxDelayMs: 1000 },
    });
    expect(await s.readText('h+hostile://ok')).toBe('ok');
    const readyBefore = s.carrier.logCount(ready('h'));
    // The fixture writes its garbage, then answers this read: the answer arrives after all of it was read.
    const answer = await s.request('resources/read', { uri: 'h+hostile://garbage' });
    expect(answer.jsonrpc).toBe('2.0');
    expect(s.carrier.alive).toBe(true);
    await readAfterPossibleReconnect(s, 'h', 'h+hostile://ok', 'ok', readyBefore);
    expect(await s.readText('cat+fixture://res/0')).toBe(fixtureText(0, 1024));
    // Nothing of it leaked to the client: every stdout line is a JSON-RPC message.
    expect(s.lines.filter((l) => l.parsed?.jsonrpc !== '2.0').map((l) => l.raw.slice(0, 200))).toEqual([]);
  });
});

describe('an upstream whose reads never answer, behind a small queue', () => {
  const HUNG = 40;

  // One hung URI read 40 times: a fair share per URI keeps a slot for every other URI. (With 40
  // distinct hung URIs and two slots no per-URI share could: each would be a URI of its own.)
  it(`${HUNG} reads of a hung URI do not starve a normal read, and all of them time out within about one timeoutMs`, { timeout: 15_000 }, async () => {
    // timeoutMs 1000 and concurrency 2: served strictly in arrival order with the deadline starting
    // only when a request leaves the queue, the hung reads would take 20 s and the normal read behind them longer.
    await using proxy = await ProxyProcess.start(
      {
        servers: {
          hang: { ...upstreams.fixture('--resources', '2', '--hang-prefix', 'fixture://hang/'), timeoutMs: 1_000, concurrency: 2, cache: false },
        },
      },
      { logLevel: 'info' },
    );
    const { client } = proxy;
    // timeoutMs also bounds the upstream's start: on a loaded machine its first attempt may miss it
    // and the proxy retries with backoff. Wait for it to be up rather than for a fixed time.
    await proxy.waitForLog((r) => r.msg === 'upstream ready' && r.server === 'hang');
    expect((await client.readResource({ uri: 'hang+fixture://res/1' })).contents).toHaveLength(1); // upstream up
    const hung = Array.from({ length: HUNG }, () => rpcError(client.readResource({ uri: 'hang+fixture://hang/forever' })));
    const normal = await client.readResource({ uri: 'hang+fixture://res/0' });
    expect(normal.contents).toEqual([{ uri: 'hang+fixture://res/0', mimeType: 'text/plain', text: fixtureText(0, 1024) }]);
    const errors = await Promise.all(hung);
    expect(errors.map((e) => e.code)).toEqual(Array<number>(HUNG).fill(-32001));
  });
});

describe('reads that fail while the cache holds upstream subscriptions for what it stores', () => {
  const READS = 1000;
  const BATCH = 100;
  /** Distinct, long (~1 KiB) URIs the fixture does not have. */
  const missing = (i: number) => `fixture://missing/${i}/${'m'.repeat(1000)}`;
  /** Modest growth allowed for 1000 failed reads (their URIs alone are ~1 MB). */
  const RSS_GROWTH_LIMIT = 64 * 1024 * 1024;

  it(`${READS} not-found reads leave no upstream subscription behind and do not grow the proxy`, { timeout: 30_000 }, async () => {
    await using proxy = await ProxyProcess.start({
      servers: { s: upstreams.fixture('--subscribe', '--resources', '2') },
      cache: { ttlMs: 60_000 },
    });
    const { client } = proxy;
    // The test's own subscription: the stats below must show it (they can show subscriptions at all).
    await client.subscribeResource({ uri: 's+fixture://res/0' });
    const readBatch = async (from: number, to: number) => {
      const uris = Array.from({ length: to - from }, (_, k) => `s+${missing(from + k)}`);
      const errors = await Promise.all(uris.map((uri) => rpcError(client.readResource({ uri }))));
      const wrong = errors.flatMap((e, k) => (e.code === -32002 ? [] : [`${uris[k]?.slice(0, 40)}...: ${e.code} ${e.message}`]));
      expect(wrong).toEqual([]);
    };
    await readBatch(0, BATCH); // warm-up: code paths compiled, heap sized
    const before = rssBytes(proxy.pid);
    for (let from = BATCH; from < READS + BATCH; from += BATCH) await readBatch(from, from + BATCH);
    const after = rssBytes(proxy.pid);

    // Stats are read through the proxy: each read a new URI (never a cached answer). A release sent
    // after the failed reads were answered is queued to the same upstream ahead of the stats read;
    // a few more round trips give a lazier implementation its chance (bounded).
    let leaked: string[] = [];
    let subscribed: string[] = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      const stats = await client.readResource({ uri: `s+fixture://stats?leak=${attempt}` });
      subscribed = (JSON.parse((stats.contents[0] as { text: string }).text) as { subscribed: string[] }).subscribed;
      leaked = subscribed.filter((u) => u.startsWith('fixture://missing/'));
      if (leaked.length === 0) break;
    }
    expect(subscribed).toContain('fixture://res/0');
    expect(leaked.length, `upstream subscriptions left for not-found URIs, e.g. ${leaked[0]?.slice(0, 40)}...`).toBe(0);
    expect(after - before, `RSS grew from ${before} to ${after} bytes`).toBeLessThan(RSS_GROWTH_LIMIT);
  });
});
