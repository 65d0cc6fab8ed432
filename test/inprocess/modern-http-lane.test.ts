// The 2026-07-28 HTTP lane (plain reads past SDK v2's createMcpHandler): the same statuses, bodies and audit records as the SDK path, request by request.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { laneHarness, slowReadHarness } from '../helpers/lane-upstream.js';
import { startHarness } from '../helpers/harness.js';
import { testEndpoint } from '../helpers/http-endpoint.js';
import { createUpstreamServer } from '../helpers/upstream-server.mjs';
import { comparableRecords, memoryAudit } from '../helpers/memory-audit.js';
import { modernEnvelope, V2026 } from '../helpers/rpc-messages.js';
import { sdkRequestCount } from '../helpers/sdk-requests.js';

const POLICY = { default: 'allow', rules: [{ id: 'no-secret', effect: 'deny', resources: ['a+x://secret*'] }] };
const env = modernEnvelope();

/** One POST: extra headers over the standard ones for `uri` (a header set to undefined is left out), and a body (text as is, else JSON). */
interface Post {
  uri?: string;
  headers?: Record<string, string | undefined>;
  body: unknown;
}

const read = (id: unknown, uri: unknown, meta: unknown = env, extra: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'resources/read',
  params: { uri, _meta: meta },
  ...extra,
});

/** Requests whose answers must not depend on the lane: plain reads it serves, and every shape it leaves to the SDK. */
const SCRIPT: Post[] = [
  { body: read(2, 'a+x://1') },
  { body: read('s-3', 'a+x://2'), uri: 'a+x://2' },
  { body: read(4, 'a+nope://1'), uri: 'a+nope://1' },
  { body: read(5, 'a+x://secret-1'), uri: 'a+x://secret-1' },
  { body: read(6, 'a+x://1/../secret-1'), uri: 'a+x://1/../secret-1' },
  { body: read(7, 'zz+x://1'), uri: 'zz+x://1' },
  { body: read(8, 'a+x://boom'), uri: 'a+x://boom' },
  { body: read(9, 'a+x://1'), headers: { 'mcp-name': 'a+x://2' } },
  { body: read(10, 'a+x://1'), headers: { 'mcp-name': undefined } },
  { body: read(11, 'a+x://1'), headers: { 'mcp-method': undefined } },
  { body: read(12, 'a+x://1'), headers: { 'mcp-method': 'tools/call' } },
  { body: read(13, 'a+x://1'), headers: { 'mcp-protocol-version': '2099-01-01' } },
  { body: read(14, 'a+x://1'), headers: { accept: 'text/event-stream' } },
  { body: read(15, 'a+x://1'), headers: { accept: 'application/json' } },
  { body: read(16, 'a+x://1'), headers: { accept: undefined } },
  { body: '{"jsonrpc":"2.0","id":1.7e1,"method":"resources/read","params":{"uri":"a+x://1","_meta":' + JSON.stringify(env) + '}}' },
  { body: read(18, 'a+x://1', env, { extra: 1 }) },
  { body: { ...read(19, 'a+x://1'), params: { uri: 'a+x://1', more: true, _meta: env } } },
  { body: read(20, 'a+x://1', { ...env, 'io.modelcontextprotocol/logLevel': 'debug' }) },
  { body: read(21, 'a+x://1', modernEnvelope({ elicitation: { form: {} } })) },
  { body: read(22, 'a+x://a b'), uri: 'a+x://a b' },
  { body: read(23, 'a+x://1', { ...env, 'io.modelcontextprotocol/protocolVersion': '2025-11-25' }) },
  { body: { ...read(24, 'a+x://1'), jsonrpc: '1.0' } },
  { body: read(null, 'a+x://1') },
  { body: read(26, 42), uri: '42' },
  { body: read(27, 'a+x://1', 'not an object') },
  { body: read(28, 'a+x://1', { ...env, 'io.modelcontextprotocol/clientCapabilities': 'none' }) },
  { body: read(29, 'a+x://1'), headers: { 'mcp-name': '=?base64?YSt4Oi8vMQ==?=' } },
  { body: read(30, '=?base64?YSt4Oi8vMQ==?='), uri: '=?base64?YSt4Oi8vMQ==?=' },
  { body: read(31, 'a+x://1') },
  { body: read(32, 'a+x://1', { 'io.modelcontextprotocol/protocolVersion': V2026, 'io.modelcontextprotocol/clientCapabilities': {} }) },
  { body: read(33, 'a+x://1', { ...env, 'io.modelcontextprotocol/clientInfo': 'me' }) },
  { body: read(34, 'a+x://1', { ...env, 'io.modelcontextprotocol/clientInfo': undefined }) },
  { body: read(35.5, 'a+x://1') }, // found by lane-fuzz.test.ts: the SDK's entry answers a fractional id 400, not the read
];

afterEach(() => {
  vi.restoreAllMocks();
});

async function post(url: URL, { uri = 'a+x://1', headers = {}, body }: Post, signal?: AbortSignal): Promise<Record<string, unknown>> {
  const all: Record<string, string | undefined> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': V2026,
    'mcp-method': 'resources/read',
    'mcp-name': uri,
    ...headers,
  };
  const sent = Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined));
  const res = await fetch(url, { method: 'POST', headers: sent, body: typeof body === 'string' ? body : JSON.stringify(body), ...(signal ? { signal } : {}) });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  return { status: res.status, type, body: type.startsWith('application/json') && text ? (JSON.parse(text) as unknown) : text };
}

async function run(fastLane: boolean) {
  const audit = memoryAudit();
  const reads = sdkRequestCount(['resources/read']);
  await using h = await laneHarness(fastLane, { config: { policy: POLICY }, audit });
  const endpoint = testEndpoint(h.proxy);
  try {
    const url = await endpoint.listen();
    const out: Record<string, unknown>[] = [];
    out.push(await post(url, { body: read(1, 'a+x://1') })); // the SDK serves the first: its Server becomes the lane's codec
    for (const p of SCRIPT) out.push(await post(url, p));
    const records = comparableRecords(audit);
    return { out, records, sdkReads: reads.count() };
  } finally {
    await endpoint.close();
  }
}

describe('the 2026-07-28 HTTP lane', () => {
  it('answers every request, plain or not, with the status, type, body and audit record the SDK handler gives it', async () => {
    const lane = await run(true);
    const sdk = await run(false);
    expect(lane.out).toEqual(sdk.out);
    expect(lane.records).toEqual(sdk.records);
    // The lane took the plain reads after the first (2, s-3, 4–8, 14–16: the Accept header changes nothing, 31, 32: no clientInfo, 34: the same once sent); the SDK every other one.
    expect(sdk.sdkReads - lane.sdkReads).toBe(13);
    // What the script covers: a 2026 answer's fields, not-found as -32602 on a 200, a denial that looks like a miss.
    const serverInfo = { 'io.modelcontextprotocol/serverInfo': { name: 'mcp-federate', version: expect.any(String) } };
    expect(lane.out[1]).toEqual({
      status: 200,
      type: 'application/json',
      body: {
        jsonrpc: '2.0',
        id: 2,
        result: { _meta: serverInfo, contents: [{ uri: 'a+x://1', text: 'text of x://1' }], resultType: 'complete', ttlMs: 0, cacheScope: 'private' },
      },
    });
    expect(lane.out[4]).toEqual({
      status: 200,
      type: 'application/json',
      body: { jsonrpc: '2.0', id: 5, error: { code: -32602, message: 'Resource not found', data: { uri: 'a+x://secret-1' } } },
    });
    expect(lane.out[3]).toMatchObject({ status: 200, body: { error: { code: -32602, message: 'Resource not found' } } });
    expect(lane.out[8]).toMatchObject({ status: 400 }); // Mcp-Name that is not the body's URI
  });

  it('a read whose client goes away is cancelled upstream; the endpoint goes on', async () => {
    for (const fastLane of [true, false]) {
      const reads = sdkRequestCount(['resources/read']);
      const { h: harness, slow, cancelled } = await slowReadHarness(fastLane);
      await using h = harness;
      const endpoint = testEndpoint(h.proxy);
      try {
        const url = await endpoint.listen();
        expect(await post(url, { body: read(1, 'a+x://1') })).toMatchObject({ status: 200, body: { result: { resultType: 'complete' } } });
        const gone = new AbortController();
        const pending = post(url, { body: read(2, 'a+x://slow'), uri: 'a+x://slow' }, gone.signal).catch((err: unknown) => err);
        await slow.until(1);
        gone.abort(); // the client closes its connection
        await cancelled.until(1);
        expect(await pending).toBeInstanceOf(Error);
        expect(await post(url, { body: read(3, 'a+x://2'), uri: 'a+x://2' })).toMatchObject({
          status: 200,
          body: { id: 3, result: { contents: [{ text: 'text of x://2' }] } },
        });
        expect(reads.count()).toBe(fastLane ? 1 : 3);
      } finally {
        await endpoint.close();
      }
    }
  });

  it('a large answer (written a slice at a time, with its Content-Length) arrives whole and the same as the SDK sends it', async () => {
    const text = 'é0123456789'.repeat(60_000); // 660 KiB of UTF-8, more than one slice, with a multi-byte character at every start
    const bodies: unknown[] = [];
    for (const fastLane of [true, false]) {
      await using h = await startHarness({
        upstreams: { b: () => createUpstreamServer({ read: (uri) => ({ contents: [{ uri, text }] }) }).server },
        serverFields: { b: { cache: false } },
        fastLane,
      });
      const endpoint = testEndpoint(h.proxy);
      try {
        const url = await endpoint.listen();
        expect(await post(url, { body: read(1, 'b+x://1'), uri: 'b+x://1' })).toMatchObject({ status: 200 }); // the SDK's
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'mcp-protocol-version': V2026, 'mcp-method': 'resources/read', 'mcp-name': 'b+x://2' },
          body: JSON.stringify(read(2, 'b+x://2')),
        });
        const bytes = Buffer.from(await res.arrayBuffer());
        if (fastLane) expect(res.headers.get('content-length')).toBe(String(bytes.length));
        const body = JSON.parse(bytes.toString('utf8')) as { result: { contents: { text: string }[] } };
        expect(body.result.contents[0]?.text).toBe(text);
        bodies.push(body);
      } finally {
        await endpoint.close();
      }
    }
    expect(bodies[0]).toEqual(bodies[1]);
  });
});
