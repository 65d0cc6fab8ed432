// The 2026-07-28 HTTP lane for plain tools/call (past SDK v2's createMcpHandler): the same statuses, content types, bodies and audit records as the SDK path, request by request; a client going away cancels the call upstream.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Server as ModernServer } from '@modelcontextprotocol/server';
import { Server as LegacyServer } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { resourcesUpstream } from '../helpers/lane-upstream.js';
import { counter } from '../helpers/gate.js';
import { startHarness } from '../helpers/harness.js';
import { testEndpoint } from '../helpers/http-endpoint.js';
import { comparableRecords, memoryAudit } from '../helpers/memory-audit.js';
import { modernEnvelope, V2026 } from '../helpers/rpc-messages.js';
import { sdkRequestCount } from '../helpers/sdk-requests.js';

const env = modernEnvelope();
const LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
const CC = 'io.modelcontextprotocol/clientCapabilities';
const NAME_SCHEMA = { type: 'object' as const, properties: { name: { type: 'string' as const } }, required: ['name'] };
const BIG = 'é0123456789'.repeat(60_000); // 660 KiB of UTF-8: more than one of the lane's write slices

const POLICY = {
  default: 'allow',
  rules: [{ id: 'no-secret-tool', effect: 'deny', tools: ['t__secret'] }],
};

/**
 * A 2025-11-25 upstream (SDK v1) with tools: `echo` (its arguments as text), `fails` (`isError`),
 * `secret` (denied by policy), `throws`, `logs` (two log messages during the call, then its answer),
 * `asks` (elicits during the call: declined for a client that declared nothing), `big` (a 660 KiB
 * text), `hang` (never answers; calls `onHang`, then `onCancelled` when the call is cancelled).
 */
function callsUpstream(onHang?: () => void, onCancelled?: () => void): LegacyServer {
  const server = new LegacyServer({ name: 'tools', version: '1.0.0' }, { capabilities: { tools: {}, logging: {} } });
  const names = ['echo', 'fails', 'secret', 'throws', 'logs', 'asks', 'big', 'hang'];
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: names.map((name) => ({ name, inputSchema: { type: 'object' as const } })) }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });
    switch (req.params.name) {
      case 'echo':
        return text(JSON.stringify(req.params.arguments ?? null));
      case 'fails':
        return { ...text('it failed'), isError: true };
      case 'logs':
        await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: 'working' } });
        await extra.sendNotification({ method: 'notifications/message', params: { level: 'debug', logger: 'x', data: { step: 2 } } });
        return text('logged');
      case 'asks':
        try {
          const r = await server.elicitInput({ mode: 'form', message: 'Your name?', requestedSchema: NAME_SCHEMA }, { relatedRequestId: extra.requestId });
          return text(`answered ${r.action}`);
        } catch (err) {
          return text(`error: ${err instanceof Error ? err.message : String(err)}`);
        }
      case 'big':
        return text(BIG);
      case 'hang':
        onHang?.();
        return new Promise<never>(() => extra.signal.addEventListener('abort', () => onCancelled?.()));
      default:
        throw new Error(`no tool ${req.params.name}`);
    }
  });
  return server;
}

/** A 2026-07-28 upstream (SDK v2): `ask` answers `input_required` (an elicitation, with its own state) until answered, `plain` answers at once. */
function modernCallsUpstream(): ModernServer {
  const server = new ModernServer({ name: 'modern-tools', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', () => ({ tools: ['ask', 'plain'].map((name) => ({ name, inputSchema: { type: 'object' as const } })) }));
  server.setRequestHandler('tools/call', (req, ctx) => {
    const answers = ctx.mcpReq.inputResponses as Record<string, { action?: string; content?: { name?: string } }> | undefined;
    if (req.params.name === 'ask' && !answers?.name) {
      const request = { method: 'elicitation/create', params: { mode: 'form', message: 'Your name?', requestedSchema: NAME_SCHEMA } };
      return { resultType: 'input_required', inputRequests: { name: request }, requestState: 'upstream-state' } as never;
    }
    return { content: [{ type: 'text' as const, text: req.params.name === 'ask' ? `hello ${answers?.name?.content?.name}` : 'plain' }] };
  });
  return server;
}

/** One POST: headers over the standard ones for a `tools/call` of `name` (a header set to undefined is left out), and a body (text as is, else JSON). */
interface Post {
  name?: string;
  headers?: Record<string, string | undefined>;
  body: unknown;
}

const call = (id: unknown, name: unknown, args?: unknown, meta: unknown = env, extra: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, ...(args === undefined ? {} : { arguments: args }), _meta: meta },
  ...extra,
});

/** Calls whose answers must not depend on the lane: plain calls it serves, and every shape it leaves to the SDK. */
const SCRIPT: Post[] = [
  { body: call(2, 't__echo', { text: 'hi' }) },
  { body: call('s-3', 't__echo') }, // no arguments
  { body: call(4, 't__fails', {}) },
  { body: call(5, 't__secret', {}) }, // denied: looks exactly like a missing tool
  { body: call(6, 't__nope', {}) },
  { body: call(7, 'zz__echo', {}) },
  { body: call(8, 't__throws', {}) },
  { body: call(9, 't__logs', {}) }, // upstream messages during the call: an SSE answer, on both paths
  { body: call(10, 't__asks', {}) }, // an elicitation the caller cannot answer: declined
  { body: call(11, 'm__ask', {}) }, // input_required for a caller that declared nothing
  { body: call(12, 'm__plain', {}) },
  { body: call(13, 't__big', {}) },
  { body: call(14, 't__echo', { deep: { list: [1, 'two', null, { x: true }], n: -0.5e-7 }, 'é\u2028': '\u0000' }) },
  {
    body: '{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"t__echo","arguments":{"__proto__":{"x":1}},"_meta":' + JSON.stringify(env) + '}}',
    name: 't__echo',
  },
  { body: call(16, 't__echo', [1, 2]) },
  { body: call(17, 't__echo', null) },
  { body: call(18, 't__echo', 'text') },
  { body: call(19, 42, {}), name: '42' },
  { body: call(20, 't__echo', {}), headers: { 'mcp-name': 't__fails' } },
  { body: call(21, 't__echo', {}), headers: { 'mcp-name': undefined } },
  { body: call(22, 't__echo', {}), headers: { 'mcp-name': '=?base64?dF9fZWNobw==?=' } },
  { body: call(23, 't__echo', {}), headers: { 'mcp-method': undefined } },
  { body: call(24, 't__echo', {}), headers: { 'mcp-method': 'resources/read' } },
  { body: call(25, 't__echo', {}), headers: { 'mcp-protocol-version': undefined } },
  { body: call(26, 't__echo', {}), headers: { 'mcp-protocol-version': '2099-01-01' } },
  { body: call(27, 't__echo', {}), headers: { accept: 'application/json' } },
  { body: call(28, 't__echo', {}, { ...env, progressToken: 'p' }) },
  { body: call(29, 't__logs', {}, { ...env, progressToken: 7 }) },
  { body: call(30, 't__logs', {}, { ...env, [LOG_LEVEL]: 'info' }) },
  { body: call(31, 't__echo', {}, { ...env, [LOG_LEVEL]: 'debug' }) },
  { body: call(32, 'm__ask', {}, modernEnvelope({ elicitation: { form: {} } })) }, // input_required with the gateway's sealed requestState
  { body: call(33, 't__asks', {}, modernEnvelope({ elicitation: { form: {} } })) },
  { body: { ...call(34, 'm__ask', {}), params: { name: 'm__ask', arguments: {}, inputResponses: { name: { action: 'decline' } }, _meta: env } } },
  { body: { ...call(35, 't__echo', {}), params: { name: 't__echo', arguments: {}, requestState: 'forged', _meta: env } } },
  { body: call(36, 't__echo', {}, env, { extra: 1 }) },
  { body: { ...call(37, 't__echo', {}), params: { name: 't__echo', arguments: {}, more: true, _meta: env } } },
  { body: { ...call(38, 't__echo', {}), jsonrpc: '1.0' } },
  { body: call(null, 't__echo', {}) },
  { body: call(40, 't__echo', {}, { ...env, [CC]: 'none' }) },
  { body: call(41, 't__echo', {}, { ...env, 'io.modelcontextprotocol/protocolVersion': '2025-11-25' }) },
  { body: call(42, 't__echo', {}, 'not an object') },
  { body: call(43, 'x'.repeat(1025), {}) },
  { body: call(44, 'a b', {}), name: 'a b' },
  {
    body: '{"jsonrpc":"2.0","id":4.5e1,"method":"tools/call","params":{"name":"t__echo","arguments":{},"_meta":' + JSON.stringify(env) + '}}',
    name: 't__echo',
  },
  { body: call(46, 't__echo', { n: 46 }) },
  { body: call(47, 't__echo', { n: 47 }) }, // over the call rate limit from here on
  { body: call(48, 't__echo', { n: 48 }), headers: { 'mcp-name': undefined } },
  { body: call(49, 't__logs', {}) },
];

afterEach(() => {
  vi.restoreAllMocks();
});

async function post(url: URL, { name, headers = {}, body }: Post, signal?: AbortSignal): Promise<Record<string, unknown>> {
  const named = name ?? (body as { params?: { name?: unknown } }).params?.name;
  const all: Record<string, string | undefined> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': V2026,
    'mcp-method': 'tools/call',
    'mcp-name': typeof named === 'string' ? named : undefined,
    ...headers,
  };
  const sent = Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined));
  const res = await fetch(url, { method: 'POST', headers: sent, body: typeof body === 'string' ? body : JSON.stringify(body), ...(signal ? { signal } : {}) });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  // The gateway's sealed requestState is random (its key, a nonce): the same length, but never the same text twice.
  const unsealed = text.replace(/"requestState":"[^"]*"/g, (m) => `"requestState":"sealed:${m.length}"`);
  return { status: res.status, type, body: type.startsWith('application/json') && text ? (JSON.parse(unsealed) as unknown) : unsealed };
}

/** Where a call goes, lane on or off: upstreams `a` (resources), `t` (2025 tools), `m` (2026 tools), policy, a call limit, an audit log. */
function callHarness(fastLane: boolean, audit = memoryAudit(), hang?: { started: () => void; cancelled: () => void }) {
  return startHarness({
    upstreams: {
      a: () => resourcesUpstream(),
      t: () => callsUpstream(hang?.started, hang?.cancelled),
      m: { era: 'modern', make: modernCallsUpstream },
    },
    serverFields: { a: { cache: false }, m: { protocol: '2026-07-28' } },
    config: { policy: POLICY, limits: { calls: [{ callsPerMinute: 1, burst: 29 }] } },
    audit,
    fastLane,
    now: () => 0, // the call bucket never refills: the limit trips at the same call both ways
  });
}

async function run(fastLane: boolean) {
  const audit = memoryAudit();
  const calls = sdkRequestCount(['tools/call']);
  await using h = await callHarness(fastLane, audit);
  const endpoint = testEndpoint(h.proxy);
  try {
    const url = await endpoint.listen();
    const out: Record<string, unknown>[] = [];
    out.push(await post(url, { body: call(1, 't__echo', {}) })); // the SDK serves the first: its Server becomes the lane's codec
    for (const p of SCRIPT) out.push(await post(url, p));
    return { out, records: comparableRecords(audit), sdkCalls: calls.count() };
  } finally {
    await endpoint.close();
  }
}

describe('the 2026-07-28 HTTP lane for tools/call', () => {
  it('answers every call, plain or not, with the status, type, body and audit record the SDK handler gives it', async () => {
    const lane = await run(true);
    const sdk = await run(false);
    for (let i = 0; i < sdk.out.length; i++) expect({ i, ...lane.out[i] }).toEqual({ i, ...sdk.out[i] });
    expect(lane.records).toEqual(sdk.records);
    // The lane took the plain calls after the first: 2–14, 27 (Accept changes nothing), 46, 47 (limited), 49; not 15 (a `__proto__` argument, which the facade's schema drops), nor 45 (an id JSON spells otherwise).
    expect(sdk.sdkCalls - lane.sdkCalls).toBe(17);
    const at = (id: number | string) => lane.out[SCRIPT.findIndex((p) => (p.body as { id?: unknown }).id === id) + 1]!;
    const serverInfo = { 'io.modelcontextprotocol/serverInfo': { name: 'mcp-federate', version: expect.any(String) } };
    // What the script covers: a 2026 call result, a denied tool that looks like a missing one, upstream messages as SSE frames,
    // input_required checked against what the caller declared, a large result whole, the rate limit.
    expect(at(2)).toEqual({
      status: 200,
      type: 'application/json',
      body: { jsonrpc: '2.0', id: 2, result: { _meta: serverInfo, content: [{ type: 'text', text: '{"text":"hi"}' }], resultType: 'complete' } },
    });
    expect(JSON.stringify(at(5).body).replaceAll('t__secret', 't__nope').replace('"id":5', '"id":6')).toBe(JSON.stringify(at(6).body));
    expect(at(5)).toMatchObject({ status: 200, body: { error: { code: -32602 } } });
    expect(at(9)).toMatchObject({ status: 200, type: 'text/event-stream' });
    expect(at(9).body).toBe(
      'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}\n\n' +
        'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","logger":"x","data":{"step":2}}}\n\n' +
        `event: message\ndata: ${JSON.stringify({ result: { content: [{ type: 'text', text: 'logged' }], resultType: 'complete', _meta: (at(2).body as { result: { _meta: unknown } }).result._meta }, jsonrpc: '2.0', id: 9 })}\n\n`,
    );
    expect(at(10)).toMatchObject({ status: 200, body: { result: { content: [{ text: expect.stringMatching(/^error: /) }] } } });
    expect(at(11)).toMatchObject({ status: 400, body: { error: { code: -32021 } } });
    expect(at(32)).toMatchObject({ status: 200, body: { result: { resultType: 'input_required', requestState: expect.any(String) } } });
    expect((at(13).body as { result: { content: { text: string }[] } }).result.content[0]?.text).toBe(BIG);
    expect(at(47)).toMatchObject({ status: 200, body: { error: { message: expect.stringMatching(/rate limit/i) } } });
    expect(at(46)).toMatchObject({ status: 200, body: { result: { resultType: 'complete' } } });
    expect(at(49)).toMatchObject({ status: 200, type: 'application/json', body: { error: { code: -32000 } } }); // limited before any message: no stream
  });

  it('a call whose client goes away is cancelled upstream; the endpoint goes on', async () => {
    for (const fastLane of [true, false]) {
      const calls = sdkRequestCount(['tools/call']);
      const started = counter();
      const cancelled = counter();
      await using h = await callHarness(fastLane, memoryAudit(), { started: () => started.hit(), cancelled: () => cancelled.hit() });
      const endpoint = testEndpoint(h.proxy);
      try {
        const url = await endpoint.listen();
        expect(await post(url, { body: call(1, 't__echo', {}) })).toMatchObject({ status: 200, body: { result: { resultType: 'complete' } } });
        const gone = new AbortController();
        const pending = post(url, { body: call(2, 't__hang', {}) }, gone.signal).catch((err: unknown) => err);
        await started.until(1);
        gone.abort(); // the client closes its connection
        await cancelled.until(1); // the upstream saw notifications/cancelled
        expect(await pending).toBeInstanceOf(Error);
        expect(await post(url, { body: call(3, 't__echo', { n: 3 }) })).toMatchObject({
          status: 200,
          body: { id: 3, result: { content: [{ text: '{"n":3}' }] } },
        });
        expect(calls.count()).toBe(fastLane ? 1 : 3);
      } finally {
        await endpoint.close();
      }
    }
  });

  it('a call whose client goes away while its upstream messages stream is cancelled upstream', async () => {
    // `hang` after a message: the lane's answer is already an SSE stream when the client leaves.
    for (const fastLane of [true, false]) {
      const cancelled = counter();
      const started = counter();
      const server = (): LegacyServer => {
        const s = new LegacyServer({ name: 'chatty', version: '1.0.0' }, { capabilities: { tools: {}, logging: {} } });
        s.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: 'wait', inputSchema: { type: 'object' as const } }] }));
        s.setRequestHandler(CallToolRequestSchema, async (_req, extra) => {
          await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: 'started' } });
          started.hit();
          return new Promise<never>(() => extra.signal.addEventListener('abort', () => cancelled.hit()));
        });
        return s;
      };
      await using h = await startHarness({ upstreams: { c: server }, fastLane });
      const endpoint = testEndpoint(h.proxy);
      try {
        const url = await endpoint.listen();
        await post(url, { body: call(1, 'c__nothing', {}) }); // the SDK's: its Server becomes the lane's codec
        const res = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': V2026,
            'mcp-method': 'tools/call',
            'mcp-name': 'c__wait',
          },
          body: JSON.stringify(call(2, 'c__wait', {})),
        });
        expect(res.headers.get('content-type')).toBe('text/event-stream');
        const reader = res.body!.getReader();
        const first = new TextDecoder().decode((await reader.read()).value);
        expect(first).toContain('"data":"started"');
        await started.until(1);
        await reader.cancel(); // the client closes its connection
        await cancelled.until(1);
      } finally {
        await endpoint.close();
      }
    }
  });
});
