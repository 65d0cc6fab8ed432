// Upstream requests on the fast path (own ids, one pending map, one deadline timer): timeouts, cancellations and long calls' progress reach the upstream and the caller.
import { describe, expect, it } from 'vitest';
import { createUpstreamServer } from '../helpers/upstream-server.mjs';
import { startHarness } from '../helpers/harness.js';
import { rpcError } from '../helpers/rpc-error.js';
import { counter } from '../helpers/gate.js';
import { Server as LegacyServer } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

describe('upstream requests on the fast path', () => {
  it('a timed-out read is answered -32001 and cancelled upstream; reads started later time out by their own deadlines', async () => {
    const started = counter();
    const cancelled = counter();
    await using h = await startHarness({
      upstreams: {
        a: () =>
          createUpstreamServer({
            read: (_uri, signal) =>
              new Promise(() => {
                signal.addEventListener('abort', () => cancelled.hit()); // the upstream saw notifications/cancelled
                started.hit();
              }),
          }).server,
      },
      serverFields: { a: { timeoutMs: 300, concurrency: 8, cache: false } },
    });
    const c = await h.client();
    const first = rpcError(c.readResource({ uri: 'a+x://1' }));
    await started.until(1);
    const later = rpcError(c.readResource({ uri: 'a+x://2' }));
    await started.until(2);
    expect((await first).code).toBe(-32001);
    expect((await later).code).toBe(-32001);
    await cancelled.until(2);
  });

  it('an upstream error keeps its code and message; a malformed result fails that read only', async () => {
    await using h = await startHarness({
      upstreams: {
        a: () =>
          createUpstreamServer({
            read: (uri) => {
              if (uri === 'bad:1') return { contents: 'not a list' };
              if (uri === 'ok:1') return { contents: [{ uri, text: 'fine' }] };
              throw new Error('boom');
            },
          }).server,
      },
      serverFields: { a: { cache: false } },
    });
    const c = await h.client();
    expect((await rpcError(c.readResource({ uri: 'a+boom:1' }))).code).toBe(-32603);
    expect((await rpcError(c.readResource({ uri: 'a+bad:1' }))).code).toBe(-32603);
    expect((await c.readResource({ uri: 'a+ok:1' })).contents[0]).toMatchObject({ text: 'fine' });
  });
});

describe('long calls on the fast path', () => {
  /** An upstream whose `ticker` tool reports progress every 50 ms until cancelled, and whose `steps` tool reports 3 steps, then answers. */
  function progressUpstream(cancelled: ReturnType<typeof counter>) {
    const server = new LegacyServer({ name: 'ticks', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: ['ticker', 'steps'].map((name) => ({ name, inputSchema: { type: 'object' as const } })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
      const token = req.params._meta?.progressToken;
      if (token === undefined) throw new Error('no progress token sent upstream');
      const tick = (progress: number) => extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress } });
      if (req.params.name === 'steps') {
        for (let i = 1; i <= 3; i++) await tick(i);
        return { content: [{ type: 'text' as const, text: 'done' }] };
      }
      return new Promise((_resolve, reject) => {
        let n = 0;
        const timer = setInterval(() => void tick(++n).catch(() => undefined), 50);
        extra.signal.addEventListener('abort', () => {
          clearInterval(timer);
          cancelled.hit();
          reject(new Error('cancelled'));
        });
      });
    });
    return server;
  }

  it('progress moves a call deadline, never past timeouts.callMaxMs: then -32001, cancelled upstream', async () => {
    const cancelled = counter();
    await using h = await startHarness({
      upstreams: { t: () => progressUpstream(cancelled) },
      config: { timeouts: { callMs: 400, callMaxMs: 900 } },
    });
    const c = await h.client();
    const heard: number[] = [];
    const started = performance.now();
    const ticking = rpcError(
      c.callTool({ name: 't__ticker', arguments: {} }, undefined, { onprogress: () => heard.push(performance.now() - started), timeout: 60_000 }),
    );
    expect((await ticking).code).toBe(-32001);
    // The SDK Client (MCP_FEDERATE_SDK_REQUESTS=1) gives up at its maxTotalTimeout without telling the upstream; the fast path tells it.
    if (process.env.MCP_FEDERATE_SDK_REQUESTS !== '1') await cancelled.until(1);
    // It lived past callMs on its progress (each tick moved the deadline): the caller heard, under its
    // own token, a tick sent after callMs had passed (however slowly a loaded machine ticks).
    expect(Math.max(...heard)).toBeGreaterThan(400);
    expect(await c.callTool({ name: 't__steps', arguments: {} })).toMatchObject({ content: [{ text: 'done' }] });
  });
});

describe('what a call carries upstream', () => {
  /** A 2025-11-25 upstream whose `meta` tool answers with the `_meta` keys its request carried. */
  function metaUpstream() {
    const server = new LegacyServer({ name: 'meta', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: 'meta', inputSchema: { type: 'object' as const } }] }));
    server.setRequestHandler(CallToolRequestSchema, (req) => ({
      content: [{ type: 'text' as const, text: JSON.stringify(Object.keys(req.params._meta ?? {}).sort()) }],
    }));
    return server;
  }

  it('a 2025-11-25 upstream gets no log-level key (it ignores it), only the progress token of ours and the caller’s own keys', async () => {
    await using h = await startHarness({ upstreams: { t: metaUpstream } });
    const c = await h.client();
    const keys = async (params: Record<string, unknown>) => {
      const result = await c.callTool(params as { name: string });
      return JSON.parse((result.content as { text: string }[])[0]!.text) as string[];
    };
    expect(await keys({ name: 't__meta', arguments: {} })).toEqual(['progressToken']);
    expect(await keys({ name: 't__meta', arguments: {}, _meta: { mine: 1 } })).toEqual(['mine', 'progressToken']);
  });
});
