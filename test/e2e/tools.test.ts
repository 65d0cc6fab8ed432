// End to end: tools and prompts federated by the built CLI (stdio), driven by 2025-11-25 clients on SDK v1 and SDK v2 and by SDK v2 (2026-07-28) clients, against server-everything and the tools fixture.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { ROOT, type StdioUpstream, upstreams } from '../helpers/built-cli.js';
import { within } from '../helpers/gate.js';
import { HttpGatewayProcess } from '../helpers/http-gateway.js';
import { rpcError } from '../helpers/rpc-error.js';
import { DirectClient, ProxyProcess, V2Proxy } from '../helpers/sdk-clients.js';
import { disposeAll, suiteResource } from '../helpers/suite.js';
import { TempDir } from '../helpers/temp-dir.js';
import { rawCli } from '../helpers/cli-stdio.js';

const TOOLS_FIXTURE = path.join(ROOT, 'test', 'fixtures', 'tools-server.mjs');
const LONG = `a_tool_whose_name_is_long_enough_that_prefixing_it_would_pass_sixty_four_characters`;
const tools = (name: string, log: string, ...extra: string[]): StdioUpstream => ({
  command: process.execPath,
  args: [TOOLS_FIXTURE, '--name', name, '--log', log, ...extra],
});
const CLIENT_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const upstreamName = (item: { _meta?: Record<string, unknown> }) => item._meta?.['mcp-federate/upstreamName'];

type Tool = { name: string; _meta?: Record<string, unknown> } & Record<string, unknown>;
interface CallOptions {
  onprogress?: (progress: unknown) => void;
  signal?: AbortSignal;
}

/** What these tests ask of a 2025-11-25 client through the gateway: the calls both SDKs have, results as plain data. */
interface Client2025 {
  getServerCapabilities(): Record<string, unknown> | undefined;
  /** One page of tools/list or prompts/list, as the gateway sent it (SDK v2's own listTools walks every page itself). */
  page(method: 'tools/list' | 'prompts/list', cursor?: string): Promise<{ items: Tool[]; nextCursor?: string }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }, options?: CallOptions): Promise<Record<string, unknown>>;
  getPrompt(params: { name: string; arguments?: Record<string, string> }): Promise<unknown>;
  complete(params: { ref: { type: 'ref/prompt'; name: string }; argument: { name: string; value: string } }): Promise<{ completion: { values: string[] } }>;
  readResource(params: { uri: string }): Promise<{ contents: { uri: string }[] }>;
  /** Calls `onLog` with the params of every notifications/message. */
  onLog(onLog: (params: unknown) => void): void;
}

/** The gateway on stdio with a 2025-11-25 client of one SDK. */
interface Sdk {
  name: string;
  /** How the SDK's rejection states an error the gateway sent with `code` and `message`. */
  errorMessage(code: number, message: string): string;
  start(config: unknown): Promise<{ client: Client2025 } & AsyncDisposable>;
}

const SDKS: Sdk[] = [
  {
    name: 'SDK v1',
    errorMessage: (code, message) => `MCP error ${code}: ${message}`,
    async start(config) {
      const proxy = await ProxyProcess.start(config);
      const c = proxy.client;
      const client: Client2025 = {
        getServerCapabilities: () => c.getServerCapabilities(),
        page: async (method, cursor) => {
          const params = cursor ? { cursor } : {};
          if (method === 'tools/list') {
            const r = await c.listTools(params);
            return { items: r.tools, ...(r.nextCursor ? { nextCursor: r.nextCursor } : {}) };
          }
          const r = await c.listPrompts(params);
          return { items: r.prompts, ...(r.nextCursor ? { nextCursor: r.nextCursor } : {}) };
        },
        callTool: (params, options) => c.callTool(params, undefined, options),
        getPrompt: (params) => c.getPrompt(params),
        complete: (params) => c.complete(params),
        readResource: (params) => c.readResource(params),
        onLog: (onLog) => c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => onLog(n.params)),
      };
      return { client, [Symbol.asyncDispose]: () => proxy[Symbol.asyncDispose]() };
    },
  },
  {
    name: 'SDK v2 (versionNegotiation legacy)',
    errorMessage: (_code, message) => message,
    async start(config) {
      const proxy = await new V2Proxy(config, 'legacy').start();
      const c = proxy.client;
      expect(c.getNegotiatedProtocolVersion()).toBe('2025-11-25');
      const client: Client2025 = {
        getServerCapabilities: () => c.getServerCapabilities(),
        page: async (method, cursor) => {
          const r = await proxy.raw(method, cursor ? { cursor } : {});
          const items = (method === 'tools/list' ? r.tools : r.prompts) as Tool[];
          return { items, ...(typeof r.nextCursor === 'string' ? { nextCursor: r.nextCursor } : {}) };
        },
        callTool: (params, options) => c.callTool(params, options),
        getPrompt: (params) => c.getPrompt(params),
        complete: (params) => c.complete(params),
        readResource: (params) => c.readResource(params),
        onLog: (onLog) => c.setNotificationHandler('notifications/message', (n) => onLog(n.params)),
      };
      return { client, [Symbol.asyncDispose]: () => proxy[Symbol.asyncDispose]() };
    },
  },
];

interface Suite extends AsyncDisposable {
  client: Client2025;
  everything: DirectClient;
  dir: TempDir;
  log: (name: string) => string[];
}

/** The gateway (server-everything and two tools fixtures behind it) with `sdk`'s client, and a direct client to server-everything. */
async function startSuite(sdk: Sdk): Promise<Suite> {
  const dir = new TempDir();
  const servers = {
    everything: upstreams.everything(),
    'one.v2': tools('one', dir.file('one.log'), '--tools', `shared,${LONG},odd.name`),
    two: tools('two', dir.file('two.log'), '--tools', 'shared'),
  };
  const started = await Promise.allSettled([
    sdk.start({ servers, list: { maxItemsPerPage: 5, firstWaitMs: 60_000 } }),
    DirectClient.start(upstreams.everything()),
  ]);
  const values = started.map((s) => (s.status === 'fulfilled' ? s.value : undefined));
  const all = disposeAll(...values, { [Symbol.asyncDispose]: async () => dir[Symbol.dispose]() });
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await all[Symbol.asyncDispose]();
    throw failed.reason;
  }
  const [proxy, everything] = values as [{ client: Client2025 } & AsyncDisposable, DirectClient];
  const log = (name: string) => {
    try {
      return readFileSync(dir.file(`${name}.log`), 'utf8')
        .split('\n')
        .filter(Boolean);
    } catch {
      return [];
    }
  };
  return { client: proxy.client, everything, dir, log, [Symbol.asyncDispose]: () => all[Symbol.asyncDispose]() };
}

describe.each(SDKS)('tools and prompts through the gateway (a 2025-11-25 client on $name)', (sdk) => {
  const suite = suiteResource(() => startSuite(sdk));
  const client = () => suite().client;

  async function allTools() {
    const out: Tool[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client().page('tools/list', cursor);
      out.push(...page.items);
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 100);
    return { tools: out, pages };
  }

  it('declares tools, prompts and logging because its upstreams have them', () => {
    expect(client().getServerCapabilities()).toMatchObject({ tools: { listChanged: true }, prompts: { listChanged: true }, logging: {} });
  });

  it('merges every tool of every upstream, all pages walked, with client names that fit ^[A-Za-z0-9_-]{1,64}$ and the upstream name in _meta', async () => {
    const { tools: listed, pages } = await allTools();
    expect(pages).toBeGreaterThan(3); // 5 per page
    const direct = (await suite().everything.client.listTools()).tools;
    const names = listed.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    for (const t of listed) expect(t.name).toMatch(CLIENT_NAME);
    // server-everything's tools, each kept whole (title, annotations, schemas) under its namespaced name.
    for (const d of direct) {
      const mine = listed.find((t) => t.name === `everything__${d.name}`);
      expect(mine, d.name).toBeDefined();
      expect({ ...mine, name: d.name, _meta: undefined }).toEqual({ ...d, _meta: undefined });
      expect(upstreamName(mine as never)).toBe(d.name);
    }
    // Colliding names stay apart; a dotted server id becomes "-"; a long name and one with "." get a readable short form.
    expect(names).toEqual(expect.arrayContaining(['one-v2__shared', 'two__shared', 'one-v2__echo', 'two__echo']));
    const long = listed.find((t) => upstreamName(t as never) === LONG);
    expect(long?.name).toMatch(new RegExp(`^one-v2__${LONG.slice(0, 64 - 'one-v2__'.length - 9)}_[0-9a-f]{8}$`));
    expect(long?.name.length).toBe(64);
    expect(listed.find((t) => upstreamName(t as never) === 'odd.name')?.name).toMatch(/^one-v2__odd-name_[0-9a-f]{8}$/);
  });

  it('routes calls by client name: colliding names reach their own upstream, a short form reaches the long name', async () => {
    const { tools: listed } = await allTools();
    expect(await client().callTool({ name: 'one-v2__shared', arguments: { message: 'm' } })).toEqual({ content: [{ type: 'text', text: 'one:shared:m' }] });
    expect(await client().callTool({ name: 'two__shared', arguments: { message: 'm' } })).toEqual({ content: [{ type: 'text', text: 'two:shared:m' }] });
    const long = listed.find((t) => upstreamName(t as never) === LONG)!;
    expect(await client().callTool({ name: long.name, arguments: { message: 'x' } })).toEqual({ content: [{ type: 'text', text: `one:${LONG}:x` }] });
    expect(suite().log('one')).toContain(`call ${LONG} {"message":"x"}`);
  });

  it('returns results intact (content, structuredContent, isError, _meta) with resource links and embedded resources namespaced, and readable through the gateway', async () => {
    const structured = await client().callTool({ name: 'two__structured', arguments: {} });
    expect(structured).toEqual({
      content: [
        { type: 'text', text: '{"n":7}' },
        { type: 'resource_link', uri: 'two+fixture://doc/1', name: 'doc 1' },
        { type: 'resource', resource: { uri: 'two+fixture://doc/2', text: 'two' } },
      ],
      structuredContent: { n: 7 },
      _meta: { 'fixture/extra': true },
    });
    expect(await client().callTool({ name: 'two__fail', arguments: {} })).toEqual({ content: [{ type: 'text', text: 'it failed' }], isError: true });
    // server-everything: the same as it answers directly, its resource links in its namespace, and they read.
    const args = { count: 2 };
    const direct = await suite().everything.client.callTool({ name: 'get-resource-links', arguments: args });
    const mine = await client().callTool({ name: 'everything__get-resource-links', arguments: args });
    const relinked = (direct.content as Record<string, unknown>[]).map((b) => (b.type === 'resource_link' ? { ...b, uri: `everything+${String(b.uri)}` } : b));
    expect(mine.content).toEqual(relinked);
    const link = (mine.content as Record<string, unknown>[]).find((b) => b.type === 'resource_link')!;
    expect((await client().readResource({ uri: link.uri as string })).contents[0]?.uri).toBe(link.uri);
    const sum = await client().callTool({ name: 'everything__get-structured-content', arguments: { location: 'New York' } });
    expect(sum).toEqual(await suite().everything.client.callTool({ name: 'get-structured-content', arguments: { location: 'New York' } }));
  });

  it('answers an unknown tool with the spec error for one, -32602, and never calls anyone', async () => {
    const before = [...suite().log('one'), ...suite().log('two')].length;
    for (const name of ['two__nope', 'nobody__echo', 'echo', '']) {
      expect(await rpcError(client().callTool({ name, arguments: {} }))).toMatchObject({
        code: -32602,
        message: sdk.errorMessage(-32602, `Unknown tool: ${name}`),
      });
    }
    expect([...suite().log('one'), ...suite().log('two')].length).toBe(before);
  });

  it('relays progress to the caller (the long-running tool of server-everything, and the fixture), under the caller own token', async () => {
    const steps: unknown[] = [];
    const r = await client().callTool({ name: 'two__progress', arguments: { steps: 4 } }, { onprogress: (p) => steps.push(p) });
    expect(r).toEqual({ content: [{ type: 'text', text: 'done 4' }] });
    // The gateway writes all four before the result (the raw-client test below pins that), but an SDK
    // client drops a progress notification it reads in the same chunk as the result, which a loaded
    // machine can make happen to the last ones: what it hears is the first ones, in order.
    expect(steps.length).toBeGreaterThan(0);
    expect(steps).toEqual([1, 2, 3, 4].slice(0, steps.length).map((progress) => ({ progress, total: 4 })));
    const everything: unknown[] = [];
    await client().callTool(
      { name: 'everything__trigger-long-running-operation', arguments: { duration: 1, steps: 2 } },
      {
        onprogress: (p) => everything.push(p),
      },
    );
    expect(everything.length).toBeGreaterThan(0);
    expect(everything[0]).toMatchObject({ progress: 1, total: 2 });
  });

  it('relays the upstream log message sent during a call to its caller', async () => {
    const messages: unknown[] = [];
    client().onLog((params) => void messages.push(params));
    await client().callTool({ name: 'two__chatty', arguments: {} });
    await within(
      (async () => {
        while (messages.length === 0) await new Promise((r) => setImmediate(r));
      })(),
      'the log message',
    );
    expect(messages).toContainEqual(expect.objectContaining({ level: 'info', data: 'working on it' }));
  });

  it('forwards a client cancellation upstream', async () => {
    const abort = new AbortController();
    const call = client().callTool({ name: 'two__hang', arguments: {} }, { signal: abort.signal });
    await within(
      (async () => {
        while (!suite().log('two').includes('call hang {}')) await new Promise((r) => setTimeout(r, 10));
      })(),
      'the call to reach the upstream',
    );
    abort.abort();
    await expect(call).rejects.toThrow();
    await within(
      (async () => {
        while (!suite().log('two').includes('cancelled hang')) await new Promise((r) => setTimeout(r, 10));
      })(),
      'the upstream to hear the cancellation',
    );
  });

  it('merges prompts, gets them with arguments (resource content namespaced) and completes their arguments at the owner', async () => {
    const names: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client().page('prompts/list', cursor);
      names.push(...page.items.map((p) => p.name));
      cursor = page.nextCursor;
    } while (cursor);
    expect(names).toEqual(expect.arrayContaining(['everything__args-prompt', 'everything__completable-prompt', 'one-v2__greet', 'two__greet']));
    for (const n of names) expect(n).toMatch(CLIENT_NAME);
    expect(await client().getPrompt({ name: 'two__greet', arguments: { who: 'ann' } })).toEqual({
      messages: [{ role: 'user', content: { type: 'text', text: 'hello ann' } }],
    });
    expect(await client().getPrompt({ name: 'one-v2__with-resource' })).toEqual({
      messages: [{ role: 'user', content: { type: 'resource', resource: { uri: 'one.v2+fixture://doc/3', text: 'three' } } }],
    });
    expect(await client().getPrompt({ name: 'everything__args-prompt', arguments: { city: 'Paris' } })).toEqual(
      await suite().everything.client.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris' } }),
    );
    expect(await rpcError(client().getPrompt({ name: 'two__nope' }))).toMatchObject({
      code: -32602,
      message: sdk.errorMessage(-32602, 'Unknown prompt: two__nope'),
    });
    const completed = await client().complete({
      ref: { type: 'ref/prompt', name: 'everything__completable-prompt' },
      argument: { name: 'department', value: 'E' },
    });
    expect(completed).toEqual(
      await suite().everything.client.complete({ ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'department', value: 'E' } }),
    );
    expect((await client().complete({ ref: { type: 'ref/prompt', name: 'two__greet' }, argument: { name: 'who', value: 'al' } })).completion.values).toEqual([
      'alice',
      'albert',
    ]);
    expect(suite().log('two')).toContain('complete greet');
  });

  it('fails a call at once, with a clear error, when its upstream dies during it', async () => {
    const error = await rpcError(client().callTool({ name: 'one-v2__die', arguments: {} }));
    expect(error).toMatchObject({ code: -32603, message: sdk.errorMessage(-32603, 'Upstream unavailable') });
  });
});

describe('progress on the wire', () => {
  it('the gateway writes every progress notification, in order and under the caller own token, before the result', async () => {
    using dir = new TempDir();
    await using wire = rawCli({ servers: { two: tools('two', dir.file('two.log')) } }, { logLevel: 'warn' });
    await wire.initialize();
    const answer = await wire.request('tools/call', { name: 'two__progress', arguments: { steps: 4 }, _meta: { progressToken: 'mine' } }, 7);
    expect(answer.result).toEqual({ content: [{ type: 'text', text: 'done 4' }] });
    const messages = wire.rawLines.map((l) => JSON.parse(l) as { id?: unknown; method?: string; params?: unknown });
    const answered = messages.findIndex((m) => m.id === 7);
    const progress = messages.filter((m) => m.method === 'notifications/progress');
    expect(progress.map((m) => m.params)).toEqual([1, 2, 3, 4].map((n) => ({ progress: n, total: 4, progressToken: 'mine' })));
    for (const m of progress) expect(messages.indexOf(m)).toBeLessThan(answered);
  });
});

describe('tools and prompts through the gateway (SDK v2 client, 2026-07-28)', () => {
  it('lists with honest ttlMs/cacheScope, calls and gets', async () => {
    const dir = new TempDir();
    await using v2 = await new V2Proxy({ servers: { two: tools('two', dir.file('two.log')) }, list: { firstWaitMs: 60_000 } }).start();
    const listed = await v2.raw('tools/list');
    // A 2025 upstream gives no cache hint: no basis to reuse the list, for anyone.
    expect(listed).toMatchObject({ ttlMs: 0, cacheScope: 'private' });
    expect((listed.tools as { name: string }[]).map((t) => t.name)).toEqual(expect.arrayContaining(['two__echo', 'two__structured']));
    const called = await v2.raw('tools/call', { name: 'two__echo', arguments: { message: 'v2' } });
    expect(called).toMatchObject({ content: [{ type: 'text', text: 'two:echo:v2' }] });
    const structured = await v2.raw('tools/call', { name: 'two__structured', arguments: {} });
    expect(structured).toMatchObject({
      structuredContent: { n: 7 },
      content: expect.arrayContaining([{ type: 'resource_link', uri: 'two+fixture://doc/1', name: 'doc 1' }]),
    });
    expect(await v2.raw('prompts/list')).toMatchObject({ prompts: expect.arrayContaining([expect.objectContaining({ name: 'two__greet' })]), ttlMs: 0 });
    expect(await v2.raw('prompts/get', { name: 'two__greet', arguments: { who: 'zed' } })).toMatchObject({
      messages: [{ role: 'user', content: { type: 'text', text: 'hello zed' } }],
    });
    const unknown = await rpcError(v2.raw('tools/call', { name: 'two__nope', arguments: {} }));
    expect(unknown).toMatchObject({ code: -32602 });
    expect(String((unknown as { message: string }).message)).toContain('Unknown tool: two__nope');
    dir[Symbol.dispose]();
  });
});

describe('list changes', () => {
  it('relays an upstream tools/list_changed and the new tool is callable at once; an upstream going away is announced', async () => {
    using dir = new TempDir();
    await using proxy = await ProxyProcess.start({
      servers: { two: tools('two', dir.file('two.log')) },
      listChanged: { coalesceMs: 200 },
      list: { firstWaitMs: 60_000 },
    });
    let heard = 0;
    let first: () => void = () => undefined;
    const once = new Promise<void>((resolve) => (first = resolve));
    proxy.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      heard++;
      first();
    });
    expect(await rpcError(proxy.client.callTool({ name: 'two__added', arguments: {} }))).toMatchObject({ code: -32602 });
    await proxy.client.callTool({ name: 'two__announce', arguments: {} });
    await within(once, 'tools/list_changed');
    expect((await proxy.client.listTools()).tools.map((t) => t.name)).toContain('two__added');
    expect(await proxy.client.callTool({ name: 'two__added', arguments: { message: 'new' } })).toEqual({ content: [{ type: 'text', text: 'two:added:new' }] });
    expect(heard).toBeGreaterThanOrEqual(1); // the two upstream notifications are coalesced (see test/unit/list-changed.test.ts)
    // An upstream that goes away is announced too.
    const before = heard;
    const gone = within(
      (async () => {
        while (heard === before) await new Promise((r) => setImmediate(r));
      })(),
      'tools/list_changed when the upstream went away',
    );
    await rpcError(proxy.client.callTool({ name: 'two__die', arguments: {} }));
    await gone;
  });
});

describe('tool call timeouts and both transports', () => {
  it('times a silent call out after timeouts.callMs (cancelled upstream), while progress keeps a longer call alive', async () => {
    using dir = new TempDir();
    await using proxy = await ProxyProcess.start({
      servers: { two: tools('two', dir.file('two.log')) },
      timeouts: { callMs: 1500, callMaxMs: 60_000 },
      list: { firstWaitMs: 60_000 },
    });
    const steps: unknown[] = [];
    const long = await proxy.client.callTool({ name: 'two__progress', arguments: { steps: 6, stepMs: 400 } }, undefined, {
      onprogress: (p) => steps.push(p),
      timeout: 60_000,
    });
    expect(long).toEqual({ content: [{ type: 'text', text: 'done 6' }] });
    expect(steps.length).toBe(6);
    expect(await rpcError(proxy.client.callTool({ name: 'two__hang', arguments: {} }, undefined, { timeout: 60_000 }))).toMatchObject({
      code: -32001,
      message: 'MCP error -32001: Upstream request timed out',
    });
    await within(
      (async () => {
        while (!readFileSync(dir.file('two.log'), 'utf8').includes('cancelled hang')) await new Promise((r) => setTimeout(r, 20));
      })(),
      'the upstream to be told the call is cancelled',
    );
  });

  it('over HTTP: a 2025 session gets its progress on the POST stream, a 2026 request its result', async () => {
    using dir = new TempDir();
    const token = 'tools-http-token-0123456789abcdef';
    await using gateway = await HttpGatewayProcess.serve(
      dir.writeConfig({
        servers: { two: tools('two', dir.file('two.log')), everything: upstreams.everything() },
        auth: { tokens: [{ principal: 'hana', token }] },
        list: { firstWaitMs: 60_000 },
      }),
    );
    await within(gateway.started, 'the upstreams to start');
    const headers = { authorization: `Bearer ${token}` };
    const legacy = new Client({ name: 'tools-http', version: '1' });
    await legacy.connect(new StreamableHTTPClientTransport(gateway.url, { requestInit: { headers } }));
    const steps: unknown[] = [];
    expect(await legacy.callTool({ name: 'two__progress', arguments: { steps: 3 } }, undefined, { onprogress: (p) => steps.push(p) })).toEqual({
      content: [{ type: 'text', text: 'done 3' }],
    });
    expect(steps).toEqual([1, 2, 3].map((progress) => ({ progress, total: 3 })));
    expect((await legacy.callTool({ name: 'everything__echo', arguments: { message: 'over http' } })).content).toEqual([
      { type: 'text', text: 'Echo: over http' },
    ]);
    await legacy.close();
    const modern = new ModernClient({ name: 'tools-http-2026', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await modern.connect(new ModernHttpTransport(gateway.url, { requestInit: { headers } }));
    const listed = (await modern.listTools()).tools.map((t) => t.name);
    expect(listed).toEqual(expect.arrayContaining(['two__echo', 'everything__echo']));
    expect((await modern.callTool({ name: 'two__echo', arguments: { message: 'm' } })).content).toEqual([{ type: 'text', text: 'two:echo:m' }]);
    expect((await modern.getPrompt({ name: 'two__greet', arguments: { who: 'h' } })).messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'hello h' } },
    ]);
    await modern.close();
  });
});
