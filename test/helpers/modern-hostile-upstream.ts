// A 2026-07-28 upstream (SDK v2 Server) for the upstream fast path's differential tests: hinted, large, odd and failing reads, input_required, hangs, progress; what reached it recorded.
import { ProtocolError, ResourceNotFoundError, Server } from '@modelcontextprotocol/server';
import { vi } from 'vitest';
import { counter } from './gate.js';

/** What the hostile upstream saw, shared by its instances. */
export interface HostileLog {
  /** Hit when a hanging read or call starts. */
  hung: ReturnType<typeof counter>;
  /** Hit when a hanging read or call is aborted (cancelled by the gateway). */
  aborted: ReturnType<typeof counter>;
}

export function newHostileLog(): HostileLog {
  return { hung: counter(), aborted: counter() };
}

const BIG = 'b'.repeat(300_000);
const TOOLS = ['echo', 'fails', 'throws', 'ask', 'hang', 'progress', 'ticker', 'structured', 'secret', 'bad'];

/**
 * The upstream. Reads: `m://doc/<n>` (hinted public 60 s), `m://private` (hinted private), `m://big`
 * (300 kB), `m://blob`, `m://odd` (extra fields everywhere, a result `_meta`), `m://many` (2000
 * contents), `m://boom` (throws), `m://coded` (a -32021 error with data), `m://invalid-params`,
 * `m://ask` (input_required), `m://hang` (never answers), anything else not found. Tools: see {@link TOOLS}.
 * With `listAsks`, the second page of its resource list is an `input_required` answer (to a request
 * that cannot take one: the Client's own seam handles it).
 */
export function hostileModernUpstream(log: HostileLog, options: { listAsks?: boolean } = {}): Server {
  const server = new Server({ name: 'hostile-modern', version: '1.0.0' }, { capabilities: { resources: {}, tools: {} } });
  const hang = (signal: AbortSignal) => {
    log.hung.hit();
    return new Promise<never>(() => signal.addEventListener('abort', () => log.aborted.hit(), { once: true }));
  };
  server.setRequestHandler('resources/list', (req) => {
    const cursor = req.params?.cursor;
    if (cursor === undefined) return { resources: [{ uri: 'm://doc/1', name: 'doc 1' }], nextCursor: options.listAsks ? 'ask' : 'page-2' };
    if (cursor === 'ask') return { resultType: 'input_required', inputRequests: { r: { method: 'roots/list' } } } as never;
    if (cursor === 'page-2') return { resources: [{ uri: 'm://doc/2', name: 'doc 2', _meta: { 'x/odd': [1, { deep: true }] } }] };
    throw new ProtocolError(-32602, 'Invalid cursor', { cursor });
  });
  server.setRequestHandler('resources/read', (req, ctx) => {
    const { uri } = req.params;
    if (uri.startsWith('m://doc/')) return { contents: [{ uri, mimeType: 'text/plain', text: `doc ${uri.slice(8)}` }], ttlMs: 60_000, cacheScope: 'public' };
    if (uri === 'm://private') return { contents: [{ uri, text: 'mine' }], ttlMs: 5_000, cacheScope: 'private' };
    if (uri === 'm://big') return { contents: [{ uri, text: BIG }] };
    if (uri === 'm://blob') return { contents: [{ uri, mimeType: 'application/octet-stream', blob: Buffer.from('\u0000\u0001binary').toString('base64') }] };
    if (uri === 'm://odd')
      return {
        contents: [{ uri, text: 'odd \u2028 \\"quoted\\" \ud83d\ude00', annotations: { priority: 0.5 }, _meta: { 'x/k': null }, extra: { nested: [1, 2] } }],
        _meta: { 'x/result': 'meta' },
        somethingElse: 42,
      } as never;
    if (uri === 'm://many') return { contents: Array.from({ length: 2000 }, (_, i) => ({ uri: `${uri}#${i}`, text: String(i) })) };
    if (uri === 'm://boom') throw new Error('boom');
    if (uri === 'm://coded') throw new ProtocolError(-32021, 'Header mismatch', { header: 'Mcp-Method' });
    if (uri === 'm://invalid-params') throw new ProtocolError(-32602, 'Invalid params: nope');
    if (uri === 'm://ask')
      return {
        resultType: 'input_required',
        inputRequests: {
          name: { method: 'elicitation/create', params: { mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: {} } } },
        },
        requestState: 'state-1',
      } as never;
    if (uri === 'm://hang') return hang(ctx.mcpReq.signal);
    throw new ResourceNotFoundError(uri);
  });
  server.setRequestHandler('tools/list', () => ({ tools: TOOLS.map((name) => ({ name, inputSchema: { type: 'object' as const } })) }));
  server.setRequestHandler('tools/call', async (req, ctx) => {
    const { name, arguments: args } = req.params;
    if (name === 'echo') return { content: [{ type: 'text', text: JSON.stringify(args ?? null) }] };
    if (name === 'fails') return { content: [{ type: 'text', text: 'it failed' }], isError: true };
    if (name === 'throws') throw new Error('tool threw');
    if (name === 'ask') return { resultType: 'input_required', requestState: 'only-state' } as never;
    if (name === 'hang') return hang(ctx.mcpReq.signal);
    if (name === 'structured') return { content: [{ type: 'text', text: '{"n":1}' }], structuredContent: { n: 1 }, _meta: { 'x/t': 1 } };
    if (name === 'bad') return { content: 'not an array' } as never;
    if (name === 'ticker') {
      // Progress every 50 ms until cancelled.
      const token = req.params._meta?.progressToken;
      if (token === undefined) throw new Error('no progress token');
      let n = 0;
      const timer = setInterval(
        () => void ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: ++n } }).catch(() => undefined),
        50,
      );
      ctx.mcpReq.signal.addEventListener('abort', () => clearInterval(timer), { once: true });
      return hang(ctx.mcpReq.signal);
    }
    if (name === 'progress') {
      const token = req.params._meta?.progressToken;
      if (token !== undefined) {
        await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2, message: 'half' } });
        await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: 2, total: 2 } });
      }
      return { content: [{ type: 'text', text: `progress token ${token === undefined ? 'absent' : 'present'}` }] };
    }
    throw new ProtocolError(-32602, `Unknown tool: ${name}`);
  });
  return server;
}

/** One message as it reached an upstream, its ids (ours or the SDK's) replaced by a mark. */
export interface Delivered {
  kind: 'request' | 'notification';
  method: string;
  params: unknown;
}

/**
 * Records every request and notification reaching a Server of `servers` (the upstreams' instances,
 * not the gateway's own facade), with the ids the gateway chose (request ids, progress tokens,
 * cancelled requestIds) replaced by `#`: the two paths number differently, and must send the rest alike.
 */
export function deliveredTo(servers: WeakSet<object>): Delivered[] {
  const proto = Server.prototype as unknown as {
    _onrequest: (m: { method: string; params?: unknown }, e?: unknown) => void;
    _onnotification: (m: { method: string; params?: unknown }, e?: unknown) => void;
  };
  const delivered: Delivered[] = [];
  const onrequest = proto._onrequest;
  const onnotification = proto._onnotification;
  vi.spyOn(proto, '_onrequest').mockImplementation(function (this: object, message, extra) {
    if (servers.has(this)) delivered.push({ kind: 'request', method: message.method, params: masked(message.params) });
    return onrequest.call(this, message, extra);
  });
  vi.spyOn(proto, '_onnotification').mockImplementation(function (this: object, message, extra) {
    if (servers.has(this)) delivered.push({ kind: 'notification', method: message.method, params: masked(message.params) });
    return onnotification.call(this, message, extra);
  });
  return delivered;
}

function masked(params: unknown): unknown {
  if (typeof params !== 'object' || params === null) return params;
  const copy = structuredClone(params) as Record<string, unknown> & { _meta?: Record<string, unknown> };
  if (copy._meta && 'progressToken' in copy._meta) copy._meta.progressToken = '#';
  if ('requestId' in copy) copy.requestId = '#';
  return copy;
}
