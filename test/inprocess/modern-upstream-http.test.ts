// The upstream fast path to a 2026-07-28 upstream over HTTP (the lean client and the SDK's): the same outcomes, upstream-side messages and cancellations as the SDK Client's path.
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { LazyAbort } from '../../src/cancel.js';
import { parseConfig } from '../../src/config/load.js';
import { ProxyError } from '../../src/errors.js';
import { createLogger } from '../../src/logger.js';
import { CallToolResult, ListResourcesResult, ReadResult } from '../../src/protocol.js';
import { defaultTransportFactory } from '../../src/upstream/transports.js';
import { Upstream } from '../../src/upstream/upstream.js';
import { jsonLinesSink } from '../helpers/logs.js';
import { hostileModernUpstream, newHostileLog, type HostileLog } from '../helpers/modern-hostile-upstream.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.allSettled(closers.splice(0).map((close) => close()));
});

/** The hostile upstream behind SDK v2's stateless `createMcpHandler` on 127.0.0.1, and what its handlers were asked (ids and tokens masked). */
async function httpUpstream(log: HostileLog, seen: string[]): Promise<string> {
  const handler = createMcpHandler(() => {
    const server = hostileModernUpstream(log);
    type Entry = (m: { method: string; params?: Record<string, unknown> }, e?: unknown) => void;
    const entries = server as unknown as { _onrequest: Entry; _onnotification: Entry };
    for (const key of ['_onrequest', '_onnotification'] as const) {
      const original = entries[key];
      entries[key] = function (this: unknown, message, extra) {
        const params = structuredClone(message.params ?? {}) as { _meta?: Record<string, unknown>; requestId?: unknown };
        if (params._meta && 'progressToken' in params._meta) params._meta.progressToken = '#';
        if ('requestId' in params) params.requestId = '#';
        seen.push(JSON.stringify({ method: message.method, params }));
        original.call(this, message, extra);
      };
    }
    return server;
  });
  const node = toNodeHandler(handler);
  const http: HttpServer = createServer((req, res) => void node(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
}

/** An outcome as a caller of `Upstream` sees it. */
async function outcome(p: Promise<unknown>): Promise<unknown> {
  try {
    return { result: await p };
  } catch (err) {
    if (!(err instanceof ProxyError)) throw err;
    return { error: { code: err.code, message: err.message, details: err.details } };
  }
}

async function run(fastPath: boolean, httpClient: 'lean' | 'sdk') {
  const log = newHostileLog();
  const seen: string[] = [];
  const url = await httpUpstream(log, seen);
  const config = parseConfig({ servers: { h: { url, protocol: '2026-07-28', httpClient, timeoutMs: 400 } } }, { env: {} });
  const upstream = new Upstream('h', config.servers.h!, {
    transportFactory: defaultTransportFactory,
    limits: config.wire,
    logger: createLogger({ level: 'debug', destination: jsonLinesSink().destination }),
    clientInfo: { name: 'mcp-federate', version: '0.0.0-test' },
    fastPath,
  });
  closers.push(() => upstream.close());
  await upstream.connect();
  expect(upstream.releasesSignals).toBe(fastPath);
  const out: Record<string, unknown> = {};
  const read = (uri: string, extras?: { allowInputRequired: true }) => upstream.request('resources/read', { uri }, ReadResult, undefined, 'p', extras);
  for (const uri of ['m://doc/1', 'm://private', 'm://big', 'm://odd', 'm://many', 'm://boom', 'm://coded', 'm://invalid-params', 'm://nope']) {
    out[uri] = await outcome(read(uri));
  }
  out.askBridged = await outcome(read('m://ask', { allowInputRequired: true }));
  out.askPlain = await outcome(read('m://ask'));
  out.list = await outcome(upstream.request('resources/list', undefined, ListResourcesResult));
  out.page2 = await outcome(upstream.request('resources/list', { cursor: 'page-2' }, ListResourcesResult));
  out.badCursor = await outcome(upstream.request('resources/list', { cursor: 'nope' }, ListResourcesResult));
  const progress: unknown[] = [];
  const call = (name: string, extras?: { allowInputRequired: true }) =>
    upstream.call(
      'tools/call',
      { name, arguments: { k: 1 } },
      CallToolResult,
      { timeoutMs: 5_000, maxTotalMs: 10_000, onProgress: (p) => progress.push(p) },
      extras,
    );
  for (const name of ['echo', 'fails', 'throws', 'structured', 'bad', 'progress']) out[`call:${name}`] = await outcome(call(name));
  out.askCallBridged = await outcome(call('ask', { allowInputRequired: true }));
  out.progress = progress;
  // A hanging read cancelled by its caller, and one past timeoutMs: the upstream hears of both (its request stream aborted).
  const cancel = new LazyAbort();
  const hanging = outcome(upstream.request('resources/read', { uri: 'm://hang' }, ReadResult, cancel));
  await log.hung.until(1);
  cancel.abort(new Error('stop'));
  out.cancelled = await hanging;
  await log.aborted.until(1);
  out.timeout = await outcome(read('m://hang'));
  await log.aborted.until(2);
  // A long call past its timeoutMs (no progress to move it): the same.
  out.callTimeout = await outcome(upstream.call('tools/call', { name: 'hang', arguments: {} }, CallToolResult, { timeoutMs: 300, maxTotalMs: 600 }));
  await log.aborted.until(3);
  out.after = await outcome(read('m://doc/2'));
  await upstream.close();
  return { out, seen };
}

describe('the upstream fast path to a 2026-07-28 HTTP upstream', () => {
  for (const httpClient of ['lean', 'sdk'] as const) {
    it(`gives the same outcomes, upstream-side messages and cancellations as the SDK Client (httpClient: ${httpClient})`, async () => {
      const fast = await run(true, httpClient);
      const sdk = await run(false, httpClient);
      expect(fast.out).toEqual(sdk.out);
      expect(fast.seen).toEqual(sdk.seen);
      // The script covers what it means to.
      const o = fast.out as Record<string, { result?: Record<string, unknown>; error?: { code: string; details?: Record<string, unknown> } }>;
      expect(o['m://doc/1']).toMatchObject({ result: { contents: [{ text: 'doc 1' }], ttlMs: 60_000, cacheScope: 'public' } });
      expect(o['m://boom']).toMatchObject({ error: { code: 'UPSTREAM_ERROR', details: { rpcCode: -32603 } } });
      expect(o['m://coded']).toMatchObject({ error: { details: { rpcCode: -32021 } } });
      expect(o.askBridged).toMatchObject({ error: { details: { rpcCode: -32021 } } }); // we declared no elicitation: the upstream refuses to ask
      expect(o.askCallBridged).toMatchObject({ result: { resultType: 'input_required', requestState: 'only-state', inputRequests: {} } });
      expect(o['call:bad']).toMatchObject({ error: { code: 'UPSTREAM_ERROR' } });
      expect(o.cancelled).toMatchObject({ error: { code: 'CANCELLED' } });
      expect(o.timeout).toMatchObject({ error: { code: 'UPSTREAM_TIMEOUT' } });
      expect(o.callTimeout).toMatchObject({ error: { code: 'UPSTREAM_TIMEOUT' } });
      expect(o.progress).toEqual([
        { progress: 1, total: 2, message: 'half' },
        { progress: 2, total: 2 },
      ]);
      expect(fast.seen.join('\n')).toContain('"io.modelcontextprotocol/clientInfo":{"name":"mcp-federate","version":"0.0.0-test"}');
    });
  }
});
