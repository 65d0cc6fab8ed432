// The upstream fast path to a 2026-07-28 upstream: the same answers, audit records, cancellations and wire messages as the SDK Client's path, request by request, for both eras' callers.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { startHarness } from '../helpers/harness.js';
import { comparableRecords, memoryAudit } from '../helpers/memory-audit.js';
import { RawClient, type Answer } from '../helpers/raw-client.js';
import { modernEnvelope } from '../helpers/rpc-messages.js';
import { deliveredTo, hostileModernUpstream, newHostileLog } from '../helpers/modern-hostile-upstream.js';

const POLICY = {
  default: 'allow',
  rules: [
    { id: 'no-secret', effect: 'deny', resources: ['m+m://secret*'] },
    { id: 'no-secret-tool', effect: 'deny', tools: ['m__secret'] },
  ],
};

/** Requests (method, params) every caller sends in turn: reads, lists and calls of every kind the upstream answers. */
const SCRIPT: [string, Record<string, unknown>][] = [
  ['resources/read', { uri: 'm+m://doc/1' }],
  ['resources/read', { uri: 'm+m://doc/1' }], // cached by its hint
  ['resources/read', { uri: 'm+m://private' }],
  ['resources/read', { uri: 'm+m://big' }],
  ['resources/read', { uri: 'm+m://blob' }],
  ['resources/read', { uri: 'm+m://odd' }],
  ['resources/read', { uri: 'm+m://many' }],
  ['resources/read', { uri: 'm+m://boom' }],
  ['resources/read', { uri: 'm+m://coded' }],
  ['resources/read', { uri: 'm+m://invalid-params' }],
  ['resources/read', { uri: 'm+m://ask' }],
  ['resources/read', { uri: 'm+m://nope' }],
  ['resources/read', { uri: 'm+m://secret-1' }],
  ['resources/read', { uri: 's+m://doc/3' }],
  ['resources/list', {}],
  ['resources/templates/list', {}],
  ['tools/list', {}],
  ['tools/call', { name: 'm__echo', arguments: { a: [1, 'two', null] } }],
  ['tools/call', { name: 'm__fails', arguments: {} }],
  ['tools/call', { name: 'm__throws', arguments: {} }],
  ['tools/call', { name: 'm__ask', arguments: {} }],
  ['tools/call', { name: 'm__structured', arguments: {} }],
  ['tools/call', { name: 'm__bad', arguments: {} }],
  ['tools/call', { name: 'm__secret', arguments: {} }],
  ['tools/call', { name: 'm__nope', arguments: {} }],
  ['tools/call', { name: 'm__progress', arguments: {}, _meta: { progressToken: 'pt' } }],
  ['tools/call', { name: 's__echo', arguments: { b: 2 } }],
];

/** An answer without what differs between two runs: the gateway's sealed `requestState` (its key is random). */
function comparable(answer: Answer): unknown {
  const result = answer.result;
  if (result && typeof result.requestState === 'string') return { ...answer, result: { ...result, requestState: '#' } };
  return answer;
}

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

/** Runs the script through a gateway, the upstream fast path on or off (`MCP_FEDERATE_SDK_REQUESTS`), the edge lanes on either way. */
async function run(fast: boolean) {
  vi.restoreAllMocks(); // a spy over a spy would call itself
  const audit = memoryAudit();
  const log = newHostileLog();
  const servers = new WeakSet();
  const delivered = deliveredTo(servers);
  const proto = ModernClient.prototype as unknown as { request: (r: { method: string }, ...rest: unknown[]) => unknown };
  const request = proto.request;
  let sdkRequests = 0;
  vi.spyOn(proto, 'request').mockImplementation(function (this: unknown, r, ...rest) {
    if (r.method === 'resources/read' || r.method === 'tools/call') sdkRequests++;
    return request.call(this, r, ...rest);
  });
  const make = () => {
    const server = hostileModernUpstream(log);
    servers.add(server);
    return server;
  };
  vi.stubEnv('MCP_FEDERATE_SDK_REQUESTS', fast ? '0' : '1');
  await using h = await startHarness({
    upstreams: {
      m: { era: 'modern', make },
      u: { era: 'modern', make },
      s: { era: 'modern', make },
      q: {
        era: 'modern',
        make: () => {
          const server = hostileModernUpstream(log, { listAsks: true });
          servers.add(server);
          return server;
        },
      },
    },
    serverFields: { u: { cache: false }, s: { timeoutMs: 300, cache: false } },
    config: { policy: POLICY },
    audit,
    fastLane: true,
    clock: { now: () => 1_000_000 }, // cached answers' ttlMs do not age between the runs
    // The item catalog refetches a tool list on an unknown name (m__nope) only when its list is ≥ 1 s old by this clock: on the real clock that
    // happened in one run and not the other on a loaded machine (an extra tools/list upstream). Held still, it never refetches in either.
    now: () => 1_000_000,
  });
  vi.unstubAllEnvs();
  const out: Record<string, unknown> = {};
  let hung = 0;
  for (const era of ['legacy', 'modern'] as const) {
    await using c = await RawClient.memory((t) => h.proxy.connect(t));
    const env = era === 'modern' ? modernEnvelope() : undefined;
    const withEnv = (params: Record<string, unknown>) => (env ? { ...params, _meta: { ...env, ...(params._meta as object | undefined) } } : params);
    if (env) out[`${era}:open`] = await c.request('server/discover', { _meta: env }, 'd');
    else out[`${era}:open`] = await c.initialize();
    for (const [i, [method, params]] of SCRIPT.entries()) out[`${era}:${i}`] = comparable(await c.request(method, withEnv(params), i));
    // A hanging read (uncached: a cached one is shared, not cancelled) and a hanging call, cancelled by the caller: the upstream hears of each.
    for (const [id, method, params] of [
      ['h-read', 'resources/read', { uri: 'u+m://hang' }],
      ['h-call', 'tools/call', { name: 'm__hang', arguments: {} }],
    ] as const) {
      await c.send({ jsonrpc: '2.0', id, method, params: withEnv(params) });
      await log.hung.until(++hung);
      await c.notify('notifications/cancelled', withEnv({ requestId: id, reason: 'stop' }));
      await log.aborted.until(hung);
    }
    // A read past its upstream's timeoutMs: -32001, and the upstream hears of it.
    out[`${era}:timeout`] = await c.request('resources/read', withEnv({ uri: 's+m://hang' }), 't');
    await log.aborted.until(++hung);
    out[`${era}:after`] = await c.request('resources/read', withEnv({ uri: 'm+m://doc/2' }), 'after');
    out[`${era}:cancelledAnswers`] = [c.answers('h-read').length, c.answers('h-call').length];
    out[`${era}:progress`] = c.lines.map((l) => l.parsed).filter((m) => m?.method === 'notifications/progress');
    for (const [i] of SCRIPT.entries()) expect(c.answers(i)).toHaveLength(1);
  }
  return { out, records: comparableRecords(audit), delivered: JSON.stringify(delivered), sdkRequests, log };
}

describe('the upstream fast path to a 2026-07-28 upstream', () => {
  it('answers, records, cancels and writes exactly as the SDK Client does, for 2025 and 2026 callers', async () => {
    const fast = await run(true);
    const sdk = await run(false);
    expect(fast.out).toEqual(sdk.out);
    expect(fast.records).toEqual(sdk.records);
    // The same messages reached the upstream, in the same order, with the same keys in the same order.
    expect(fast.delivered).toBe(sdk.delivered);
    // The fast path took every read and call; the SDK path none.
    expect(fast.sdkRequests).toBe(0);
    expect(sdk.sdkRequests).toBeGreaterThanOrEqual(40);
    // The script covers what it means to: hints, large and odd results, errors, input_required both ways, a timeout, cancellations, progress.
    const o = fast.out as Record<string, { result?: Record<string, unknown>; error?: { code: number } }>;
    expect(o['modern:0']).toMatchObject({ result: { contents: [{ text: 'doc 1' }], ttlMs: 60_000, resultType: 'complete' } });
    expect(o['modern:2']).toMatchObject({ result: { ttlMs: 5_000, cacheScope: 'private' } });
    expect((o['legacy:3']!.result!.contents as { text: string }[])[0]!.text).toHaveLength(300_000);
    expect(o['legacy:5']).toMatchObject({ result: { somethingElse: 42, _meta: { 'x/result': 'meta' } } });
    expect(o['legacy:6']!.result!.contents).toHaveLength(2000);
    expect(o['legacy:7']!.error!.code).toBe(-32603); // the upstream threw
    expect(o['modern:9']!.error!.code).toBe(-32602);
    expect(o['legacy:10']!.error!.code).toBe(-32600); // input_required, asked of a caller that cannot answer
    expect(o['modern:10']!.error!.code).toBe(-32021);
    expect(o['modern:12']!.error).toEqual({ code: -32602, message: 'Resource not found', data: { uri: 'm+m://secret-1' } }); // denied: as missing
    expect(o['legacy:22']!.error!.code).toBe(-32603); // a result the SDK's codec refuses
    expect(o['modern:20']).toMatchObject({ result: { resultType: 'input_required', requestState: '#' } });
    expect(o['legacy:timeout']!.error!.code).toBe(-32001);
    expect(o['legacy:cancelledAnswers']).toEqual([0, 0]);
    expect(o['modern:progress']).toEqual([
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1, total: 2, message: 'half', progressToken: 'pt' } },
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 2, total: 2, progressToken: 'pt' } },
    ]);
    // The list's input_required page (a request that cannot take one) reached the upstream on both paths.
    expect(fast.delivered).toContain('"cursor":"ask"');
    expect(fast.delivered).toContain('"method":"notifications/cancelled"');
    expect(fast.delivered).toContain('"io.modelcontextprotocol/protocolVersion":"2026-07-28"');
  });

  it('progress moves a long call deadline, never past timeouts.callMaxMs: then -32001, and the upstream is told', async () => {
    const log = newHostileLog();
    await using h = await startHarness({
      upstreams: { m: { era: 'modern', make: () => hostileModernUpstream(log) } },
      config: { timeouts: { callMs: 400, callMaxMs: 900 } },
      fastLane: true,
    });
    await using c = await RawClient.memory((t) => h.proxy.connect(t));
    await c.initialize();
    const started = performance.now();
    const answer = c.request('tools/call', { name: 'm__ticker', arguments: {}, _meta: { progressToken: 'tick' } }, 'tick');
    expect((await answer).error?.code).toBe(-32001);
    const lived = performance.now() - started;
    // The SDK Client (MCP_FEDERATE_SDK_REQUESTS=1) gives up at its maxTotalTimeout without telling the upstream; the fast path tells it.
    if (process.env.MCP_FEDERATE_SDK_REQUESTS !== '1') await log.aborted.until(1);
    // It lived past callMs on its progress (each tick moved the deadline) until callMaxMs, and the caller heard the ticks.
    expect(lived).toBeGreaterThan(800);
    expect(c.lines.filter((l) => l.parsed?.method === 'notifications/progress').length).toBeGreaterThan(1);
  });
});
