// The edge fast lane of 2025-11-25 connections (stdio and HTTP sessions): the same answers, audit records and cancellations as the SDK path, request by request.
import { describe, expect, it } from 'vitest';
import { laneHarness, slowReadHarness } from '../helpers/lane-upstream.js';
import { startHarness } from '../helpers/harness.js';
import { comparableRecords, memoryAudit } from '../helpers/memory-audit.js';
import { RawClient } from '../helpers/raw-client.js';
import { testEndpoint } from '../helpers/http-endpoint.js';
import { legacyInputUpstream, newInputLog } from '../helpers/input-upstreams.js';

const POLICY = {
  default: 'allow',
  rules: [
    { id: 'no-secret', effect: 'deny', resources: ['a+x://secret*'] },
    { id: 'no-secret-tool', effect: 'deny', tools: ['t__secret'] },
  ],
};

/** Requests (id, method, params) whose answers must not depend on the lane: plain ones the lane serves, and every shape it leaves to the SDK. */
const SCRIPT: [number | string, string, unknown][] = [
  [1, 'resources/read', { uri: 'a+x://1' }],
  ['s-2', 'resources/read', { uri: 'a+x://2' }],
  [3, 'resources/read', { uri: 'a+nope://1' }],
  [4, 'resources/read', { uri: 'a+x://secret-1' }],
  [5, 'resources/read', { uri: 'a+x://1/../secret-1' }],
  [6, 'resources/read', { uri: 'zz+x://1' }],
  [7, 'resources/read', { uri: 'a+x://boom' }],
  [8, 'resources/read', null],
  [9, 'resources/read', ['a+x://1']],
  [10, 'resources/read', { uri: 42 }],
  [11, 'resources/read', { uri: 'a+x://1', _meta: { note: 'goes to the SDK' } }],
  [12, 'resources/read', {}],
  [13, 'tools/call', { name: 't__echo', arguments: { text: 'hi', n: [1, 2] } }],
  [14, 'tools/call', { name: 't__echo' }],
  [15, 'tools/call', { name: 't__fails', arguments: {} }],
  [16, 'tools/call', { name: 't__secret', arguments: {} }],
  [17, 'tools/call', { name: 't__missing', arguments: {} }],
  [18, 'tools/call', { name: 't__echo', arguments: ['not', 'an', 'object'] }],
  [19, 'tools/call', { name: 42 }],
  [20, 'tools/call', { name: 'x'.repeat(2000) }],
  [21, 'tools/call', { name: 't__echo', arguments: null }],
  [22, 'resources/read', { uri: 'a+x://1', extra: true }],
  // Found by lane-fuzz.test.ts: the SDK's input-required seam checks a `requestState` in any era; the facade's schema drops a `__proto__` argument.
  [23, 'resources/read', { uri: 'a+x://1', requestState: 1 }],
  [24, 'tools/call', { name: 't__echo', requestState: 7 }],
  [25, 'tools/call', { name: 't__echo', arguments: JSON.parse('{"__proto__":{"x":1},"y":2}') as unknown }],
];

/** The script over a 2025-11-25 HTTP session (real HTTP on 127.0.0.1): each answer as its POST carried it, and the HTTP status. */
async function runHttp(fastLane: boolean) {
  const audit = memoryAudit();
  await using h = await laneHarness(fastLane, { config: { policy: POLICY }, audit, tools: true });
  const endpoint = testEndpoint(h.proxy);
  try {
    await using c = RawClient.http(await endpoint.listen());
    await c.initialize();
    expect(c.carrier.sid).toEqual(expect.any(String));
    const out: Record<string, unknown> = {};
    for (const [id, method, params] of SCRIPT) {
      await c.send({ jsonrpc: '2.0', id, method, params });
      out[String(id)] = { answer: await c.answer(id), status: c.carrier.statusOf(id) };
    }
    const records = comparableRecords(audit);
    return { out, records };
  } finally {
    await endpoint.close();
  }
}

async function run(fastLane: boolean) {
  const audit = memoryAudit();
  await using h = await laneHarness(fastLane, {
    config: { policy: POLICY, limits: [{ principals: ['*'], readsPerMinute: 6000, burst: 1000 }] },
    audit,
    tools: true,
  });
  await using c = await RawClient.memory((t) => h.proxy.connect(t));
  await c.initialize();
  const out: Record<string, unknown> = {};
  for (const [id, method, params] of SCRIPT) {
    await c.send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
    out[String(id)] = await c.answer(id);
  }
  // What the audit log holds, without what differs between runs (times, durations, the session id).
  const records = comparableRecords(audit);
  return { out, records };
}

describe('the edge fast lane (2025-11-25 stdio)', () => {
  it('answers every request, plain or not, exactly as the SDK path does, with the same audit records', async () => {
    const lane = await run(true);
    const sdk = await run(false);
    expect(lane.out).toEqual(sdk.out);
    expect(lane.records).toEqual(sdk.records);
    // The script covers what it means to: answers, not-found in this era's code, a policy denial that looks like a miss, tools.
    expect(lane.out['1']).toMatchObject({ result: { contents: [{ uri: 'a+x://1', text: 'text of x://1' }] } });
    expect(lane.out['s-2']).toMatchObject({ id: 's-2', result: {} });
    expect(lane.out['4']).toEqual({ jsonrpc: '2.0', id: 4, error: { code: -32002, message: 'Resource not found', data: { uri: 'a+x://secret-1' } } });
    expect((lane.out['3'] as { error: { code: number } }).error.code).toBe(-32002);
    expect(lane.out['13']).toMatchObject({ result: { content: [{ text: '{"text":"hi","n":[1,2]}' }, { uri: 't+x://1' }] } });
    expect(lane.out['15']).toMatchObject({ result: { isError: true } });
    expect(lane.records.length).toBeGreaterThanOrEqual(12);
  });

  it('over a 2025-11-25 HTTP session too: the same answers on each POST, the same HTTP statuses and audit records', async () => {
    const lane = await runHttp(true);
    const sdk = await runHttp(false);
    expect(lane.out).toEqual(sdk.out);
    expect(lane.records).toEqual(sdk.records);
    expect(lane.out['1']).toMatchObject({ status: 200, answer: { id: 1, result: { contents: [{ uri: 'a+x://1' }] } } });
    expect(lane.out['4']).toMatchObject({ status: 200, answer: { error: { code: -32002, data: { uri: 'a+x://secret-1' } } } });
    expect(lane.records.every((r) => r.transport === 'http')).toBe(true);
  });

  it('a cancelled read is cancelled upstream and never answered; the connection goes on', async () => {
    const { h: harness, slow, cancelled } = await slowReadHarness(true);
    await using h = harness;
    await using c = await RawClient.memory((t) => h.proxy.connect(t));
    await c.initialize();
    await c.send({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'a+x://slow' } });
    await slow.until(1);
    await c.notify('notifications/cancelled', { requestId: 1, reason: 'changed my mind' });
    await cancelled.until(1);
    expect(await c.request('resources/read', { uri: 'a+x://1' }, 2)).toMatchObject({ result: { contents: [{ text: 'text of x://1' }] } });
    expect(c.answers(1)).toEqual([]);
  });

  it('stays off for a client that can be asked for input: its reads keep the bridge; a plain client is declined, as on the SDK path', async () => {
    for (const fastLane of [true, false]) {
      const log = newInputLog();
      await using h = await startHarness({ upstreams: { a: () => legacyInputUpstream(log) }, serverFields: { a: { cache: false } }, fastLane });
      await using asker = await RawClient.memory((t) => h.proxy.connect(t), {
        answerRequest: (request) => (request.method === 'elicitation/create' ? { action: 'accept', content: { name: 'Ada' } } : undefined),
      });
      await asker.initialize({ elicitation: { form: {} } });
      expect(await asker.request('resources/read', { uri: 'a+ask://name' })).toMatchObject({ result: { contents: [{ text: 'hello Ada' }] } });
      await using plain = await RawClient.memory((t) => h.proxy.connect(t));
      await plain.initialize();
      expect(await plain.request('resources/read', { uri: 'a+ask://name' })).toMatchObject({
        result: { contents: [{ text: expect.stringMatching(/^error: /) }] },
      });
    }
  });
});
