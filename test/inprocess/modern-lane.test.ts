// The edge fast lane of 2026-07-28 stdio connections (beside SDK v2's serveStdio): the same answers, audit records and cancellations as the SDK path, request by request, and every message classified once.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Server as SdkServer } from '@modelcontextprotocol/server';
import { laneHarness, resourcesUpstream, slowReadHarness, toolsUpstream } from '../helpers/lane-upstream.js';
import { counter } from '../helpers/counter.mjs';
import { startHarness } from '../helpers/harness.js';
import { comparableRecords, memoryAudit } from '../helpers/memory-audit.js';
import { RawClient } from '../helpers/raw-client.js';
import { CLIENT_INFO, modernEnvelope, V2026 } from '../helpers/rpc-messages.js';
import { sdkRequestCount } from '../helpers/sdk-requests.js';

const POLICY = { default: 'allow', rules: [{ id: 'no-secret', effect: 'deny', resources: ['a+x://secret*'] }] };

const env = modernEnvelope();
const PV = 'io.modelcontextprotocol/protocolVersion';
const CI = 'io.modelcontextprotocol/clientInfo';
const CC = 'io.modelcontextprotocol/clientCapabilities';

/** Reads (id, params) whose answers must not depend on the lane: plain ones it serves, and every shape it leaves to the SDK. */
const SCRIPT: [number | string, unknown][] = [
  [1, { uri: 'a+x://1', _meta: env }], // the first plain read: to the SDK, which pins the connection
  [2, { uri: 'a+x://1', _meta: env }],
  ['s-3', { uri: 'a+x://2', _meta: env }],
  [4, { uri: 'a+nope://1', _meta: env }],
  [5, { uri: 'a+x://secret-1', _meta: env }],
  [6, { uri: 'a+x://1/../secret-1', _meta: env }],
  [7, { uri: 'zz+x://1', _meta: env }],
  [8, { uri: 'a+x://boom', _meta: env }],
  [9, { uri: 42, _meta: env }],
  [10, { _meta: env }],
  [11, { uri: 'a+x://1', extra: true, _meta: env }],
  [12, { uri: 'a+x://1' }], // no envelope
  [13, { uri: 'a+x://1', _meta: { ...env, [PV]: '2025-11-25' } }],
  [14, { uri: 'a+x://1', _meta: { ...env, [PV]: '2099-01-01' } }],
  [15, { uri: 'a+x://1', _meta: { [PV]: V2026, [CC]: {} } }], // no clientInfo: valid, and plain
  [16, { uri: 'a+x://1', _meta: { ...env, [CC]: 'none' } }],
  [17, { uri: 'a+x://1', _meta: { ...env, [CI]: { name: 7, version: '1' } } }],
  [18, { uri: 'a+x://1', _meta: { ...env, [CI]: { ...CLIENT_INFO, title: 'T' } } }],
  [19, { uri: 'a+x://1', _meta: { ...env, 'io.modelcontextprotocol/logLevel': 'debug' } }],
  [20, { uri: 'a+x://1', _meta: { ...env, progressToken: 'p' } }],
  [21, { uri: 'a+x://1', _meta: { ...env, [CC]: { elicitation: { form: {} } } } }],
  [22, { uri: 'a+x://1', _meta: { ...env, [CC]: { experimental: {} } } }],
  [23, { uri: 'a+x://1', requestState: 'forged', _meta: env }],
  [24, { uri: 'a+x://1', inputResponses: { k: { action: 'decline' } }, _meta: env }],
  [25, { uri: 'a+x://1', _meta: { ...env, [CI]: { name: 'other', version: '2' } } }],
  [27, null],
  [28, ['a+x://1']],
  [29, { uri: 'a+x://2', _meta: env }],
];

/** The methods of the messages serveStdio's entry passed on to its instance (its channel's `deliver`), in order. */
interface Channel {
  deliver?: (m: { method?: string }, e?: unknown) => void;
}
function channelDeliveries(): string[] {
  vi.restoreAllMocks();
  const proto = SdkServer.prototype as unknown as { connect: (t: Channel) => Promise<void> };
  const original = proto.connect;
  const delivered: string[] = [];
  vi.spyOn(proto, 'connect').mockImplementation(function (this: unknown, transport) {
    const deliver = transport.deliver;
    if (typeof deliver === 'function') {
      transport.deliver = function (this: unknown, m, e) {
        delivered.push(m.method ?? 'response');
        return deliver.call(this, m, e);
      };
    }
    return original.call(this, transport);
  });
  return delivered;
}

/** Requests (id, method, params) sent once the connection is pinned: none of them a plain read. */
const AFTER_PIN: [number | string, string, unknown][] = [
  [1, 'tools/list', { _meta: env }],
  [2, 'tools/call', { name: 't__echo', arguments: { text: 'hi' }, _meta: env }],
  [3, 'tools/call', { name: 't__fails', arguments: {}, _meta: env }],
  [4, 'tools/call', { name: 't__secret', arguments: {}, _meta: env }],
  [5, 'tools/call', { name: 't__missing', arguments: {}, _meta: env }],
  [6, 'tools/call', { name: 42, _meta: env }],
  ['s-7', 'tools/call', { name: 't__echo', arguments: [1], _meta: env }],
  [8, 'resources/list', { _meta: env }],
  [9, 'resources/templates/list', { _meta: env }],
  [10, 'prompts/list', { _meta: env }],
  [11, 'ping', { _meta: env }],
  [12, 'no/such/method', { _meta: env }],
  [13, 'resources/read', { uri: 'a+x://1', _meta: { ...env, progressToken: 'p' } }],
  [14, 'resources/read', { uri: 'a+x://secret-1', _meta: { ...env, progressToken: 'q' } }],
  [15, 'tools/list', {}],
  [16, 'tools/list', { _meta: { ...env, [PV]: '2099-01-01' } }],
  [17, 'tools/list', { _meta: { ...env, [CC]: 'none' } }],
  [18, 'server/discover', { _meta: env }],
  [19, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: CLIENT_INFO }],
  [20, 'resources/subscribe', { uri: 'a+x://1', _meta: env }],
  [21, 'tools/call', { name: 't__echo', _meta: env }],
  [22, 'tools/call', { name: 'x'.repeat(1024), arguments: {}, _meta: env }],
  [23, 'tools/call', { name: 'x'.repeat(1025), arguments: {}, _meta: env }],
  [24, 'tools/call', { name: 't__echo', arguments: {}, _meta: { ...env, 'io.modelcontextprotocol/logLevel': 'debug' } }],
  [25, 'tools/call', { name: 't__echo', arguments: {}, _meta: { ...env, progressToken: 7 } }],
  [26, 'tools/call', { name: 't__echo', arguments: null, _meta: env }],
  [27, 'tools/call', { name: 't__echo', arguments: {}, extra: 1, _meta: env }],
  [28, 'tools/call', { name: 't__echo', arguments: {}, _meta: { ...env, [CC]: { sampling: {} } } }],
  [29, 'tools/call', { name: 't__echo', arguments: JSON.parse('{"__proto__":{"x":1},"y":2}') as unknown, _meta: env }], // the facade's schema drops the key
];

async function runAfterPin(fastLane: boolean) {
  const audit = memoryAudit();
  const delivered = channelDeliveries();
  const calls = sdkRequestCount(['tools/call'], false);
  await using h = await laneHarness(fastLane, {
    config: { policy: { ...POLICY, rules: [...POLICY.rules, { id: 'no-secret-tool', effect: 'deny', tools: ['t__secret'] }] } },
    audit,
    tools: true,
  });
  await using c = await RawClient.memory((t) => h.proxy.connect(t));
  const out: Record<string, unknown> = {};
  out.discover = await c.request('server/discover', { _meta: env }, 'd');
  out.pin = await c.request('tools/list', { _meta: env }, 'pin');
  for (const [id, method, params] of AFTER_PIN) {
    await c.send({ jsonrpc: '2.0', id, method, params });
    if (id === 11) {
      // Notifications between requests: one the Protocol ignores, a cancel of nothing in flight.
      await c.notify('notifications/roots/list_changed', { _meta: env });
      await c.notify('notifications/cancelled', { requestId: 'none', _meta: env });
    }
    out[String(id)] = await c.answer(id);
  }
  for (const [id] of AFTER_PIN) expect(c.answers(id)).toHaveLength(1);
  const records = comparableRecords(audit);
  return { out, records, delivered: [...delivered], sdkCalls: calls.count() };
}

afterEach(() => {
  vi.restoreAllMocks();
});

async function run(fastLane: boolean) {
  const audit = memoryAudit();
  const reads = sdkRequestCount(['resources/read']);
  await using h = await laneHarness(fastLane, { config: { policy: POLICY, limits: [{ principals: ['*'], readsPerMinute: 6000, burst: 1000 }] }, audit });
  await using c = await RawClient.memory((t) => h.proxy.connect(t));
  const out: Record<string, unknown> = {};
  out.discover = await c.request('server/discover', { _meta: env }, 'd');
  for (const [id, params] of SCRIPT) {
    await c.send({ jsonrpc: '2.0', id, method: 'resources/read', ...(params === undefined ? {} : { params }) });
    out[String(id)] = await c.answer(id);
  }
  // What the audit log holds, without what differs between runs (times, durations, the session id).
  const records = comparableRecords(audit);
  // The answers' bytes as written: the lane builds its results in the SDK's own key order.
  const raw = c.lines.filter((l) => l.parsed !== undefined && 'id' in l.parsed).map((l) => l.raw);
  return { out, records, raw, sdkReads: reads.count() };
}

describe('the edge fast lane (2026-07-28 stdio)', () => {
  it('answers every read, plain or not, exactly as serveStdio and the SDK Protocol do, with the same audit records', async () => {
    const lane = await run(true);
    const sdk = await run(false);
    expect(lane.out).toEqual(sdk.out);
    expect(lane.raw).toEqual(sdk.raw);
    expect(lane.raw.length).toBe(SCRIPT.length + 1);
    expect(lane.records).toEqual(sdk.records);
    // The lane took the plain reads after the first (2, s-3, 4–8, 15: no clientInfo, 25: another client's name, 29); the SDK every other one.
    expect(sdk.sdkReads).toBe(SCRIPT.length - 2); // params null or an array: answered at the edge, before either
    expect(lane.sdkReads).toBe(sdk.sdkReads - 10);
    // The script covers what it means to: the 2026 answer's fields, not-found as -32602, a denial that looks like a miss.
    const serverInfo = { 'io.modelcontextprotocol/serverInfo': { name: 'mcp-federate', version: expect.any(String) } };
    expect(lane.out['2']).toEqual({
      jsonrpc: '2.0',
      id: 2,
      result: { _meta: serverInfo, contents: [{ uri: 'a+x://1', text: 'text of x://1' }], resultType: 'complete', ttlMs: 0, cacheScope: 'private' },
    });
    expect(lane.out['s-3']).toMatchObject({ id: 's-3', result: { resultType: 'complete' } });
    expect(lane.out['5']).toEqual({ jsonrpc: '2.0', id: 5, error: { code: -32602, message: 'Resource not found', data: { uri: 'a+x://secret-1' } } });
    expect(lane.out['4']).toMatchObject({ error: { code: -32602, message: 'Resource not found' } });
    expect(lane.out['12']).toMatchObject({ error: { code: -32602, message: expect.stringContaining('_meta envelope') } });
    expect(lane.records.length).toBeGreaterThanOrEqual(10);
  });

  it('a request whose _meta is not an object gets one -32602 answer (before a read pins the connection, serveStdio drops it unanswered), lane on or off', async () => {
    for (const [fastLane, pinned] of [
      [true, false],
      [false, false],
      [true, true],
      [false, true],
    ]) {
      await using h = await startHarness({ upstreams: { a: () => resourcesUpstream() }, fastLane });
      await using c = await RawClient.memory((t) => h.proxy.connect(t));
      expect(await c.request('server/discover', { _meta: env }, 'd')).toMatchObject({ result: {} });
      if (pinned) expect(await c.request('resources/read', { uri: 'a+x://1', _meta: env }, 0)).toMatchObject({ result: { resultType: 'complete' } });
      for (const [id, meta] of [
        [1, []],
        [2, 'x'],
        [3, null],
        [4, 7],
      ] as const) {
        expect(await c.request('resources/read', { uri: 'a+x://1', _meta: meta }, id)).toEqual({
          jsonrpc: '2.0',
          id,
          error: { code: -32602, message: 'Invalid params: _meta: expected an object' },
        });
      }
      expect(await c.request('resources/read', { uri: 'a+x://1', _meta: env }, 5)).toMatchObject({ result: { contents: [{ text: 'text of x://1' }] } });
      for (const id of [1, 2, 3, 4]) expect(c.answers(id)).toHaveLength(1);
    }
  });

  it('a cancelled read is cancelled upstream and never answered; the connection goes on', async () => {
    for (const fastLane of [true, false]) {
      const reads = sdkRequestCount(['resources/read']);
      const { h: harness, slow, cancelled } = await slowReadHarness(fastLane);
      await using h = harness;
      await using c = await RawClient.memory((t) => h.proxy.connect(t));
      // The first read makes serveStdio's instance, the second pins the connection (both on the SDK); the lane takes the rest.
      for (const id of [0, 'pin'])
        expect(await c.request('resources/read', { uri: 'a+x://1', _meta: env }, id)).toMatchObject({ result: { resultType: 'complete' } });
      await c.send({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'a+x://slow', _meta: env } });
      await slow.until(1);
      await c.notify('notifications/cancelled', { requestId: 1, reason: 'changed my mind', _meta: env });
      await cancelled.until(1);
      expect(await c.request('resources/read', { uri: 'a+x://1', _meta: env }, 2)).toMatchObject({ result: { contents: [{ text: 'text of x://1' }] } });
      expect(c.answers(1)).toEqual([]);
      expect(reads.count()).toBe(fastLane ? 2 : 4);
    }
  });

  it('once a request pins the connection, every message serveStdio would only pass on reaches the Protocol straight from the edge, with the same answers', async () => {
    const lane = await runAfterPin(true);
    const sdk = await runAfterPin(false);
    expect(lane.out).toEqual(sdk.out);
    expect(lane.records).toEqual(sdk.records);
    // Without the lane, serveStdio's entry passes every message but the rejected initialize on to its instance.
    const passed = AFTER_PIN.filter(([, method]) => method !== 'initialize').map(([, method]) => method);
    passed.splice(passed.indexOf('ping') + 1, 0, 'notifications/roots/list_changed', 'notifications/cancelled');
    expect(sdk.delivered).toEqual(['server/discover', 'tools/list', ...passed]);
    // With it, only the opening exchange and what the entry serves itself take that way (a cancel: it may end a listen).
    expect(lane.delivered).toEqual(['server/discover', 'tools/list', 'notifications/cancelled']);
    // Plain calls (a name, plain arguments or none, the bare envelope) are the lane's; the SDK gets the rest.
    expect(sdk.sdkCalls).toBe(AFTER_PIN.filter(([, method]) => method === 'tools/call').length);
    expect(lane.sdkCalls).toBe(9); // 6, s-7, 23 (a name too long), 24–28 (a log level, a progress token, null arguments, another param, capabilities), 29 (a `__proto__` argument)
    // What the script covers: a 2026 tool answer, a denial that looks like a missing tool, the Protocol's own envelope check.
    expect(lane.out['2']).toMatchObject({ result: { resultType: 'complete', content: [{ type: 'text', text: '{"text":"hi"}' }, { uri: 't+x://1' }] } });
    expect(lane.out['4']).toEqual({ jsonrpc: '2.0', id: 4, error: { code: -32602, message: 'Unknown tool: t__secret' } });
    expect(lane.out['5']).toEqual({ jsonrpc: '2.0', id: 5, error: { code: -32602, message: 'Unknown tool: t__missing' } });
    expect(lane.out['15']).toMatchObject({ error: { code: -32602, message: expect.stringContaining('_meta envelope') } });
    expect(lane.out['19']).toMatchObject({ error: {} });
  });

  it('a cancelled plain tool call is cancelled upstream and never answered; the connection goes on', async () => {
    for (const fastLane of [true, false]) {
      const hang = counter();
      const cancelled = counter();
      const calls = sdkRequestCount(['tools/call']);
      await using h = await startHarness({
        upstreams: {
          t: () =>
            toolsUpstream(
              () => hang.hit(),
              () => cancelled.hit(),
            ),
        },
        fastLane,
      });
      await using c = await RawClient.memory((t) => h.proxy.connect(t));
      // Discovery makes serveStdio's instance, the first call pins the connection (on the SDK); the lane takes the rest.
      expect(await c.request('server/discover', { _meta: env }, 'd')).toMatchObject({ result: {} });
      expect(await c.request('tools/call', { name: 't__echo', arguments: { n: 0 }, _meta: env }, 'pin')).toMatchObject({ result: { resultType: 'complete' } });
      await c.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 't__hang', _meta: env } });
      await hang.until(1);
      await c.notify('notifications/cancelled', { requestId: 1, reason: 'changed my mind', _meta: env });
      await cancelled.until(1);
      expect(await c.request('tools/call', { name: 't__echo', arguments: { n: 2 }, _meta: env }, 2)).toMatchObject({
        result: {
          content: [
            { type: 'text', text: '{"n":2}' },
            { type: 'resource_link', uri: 't+x://1', name: 'one' },
          ],
        },
      });
      expect(c.answers(1)).toEqual([]);
      expect(calls.count()).toBe(fastLane ? 1 : 3);
    }
  });
});
