// The 2025-11-25 path driven by both SDKs: one set of tests run with an SDK v1 client and with an SDK v2 client held to 2025-11-25, each in memory and over Streamable HTTP, through one proxy core.
import { describe, expect, it } from 'vitest';
import type { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Client as V2Client } from '@modelcontextprotocol/client';
import { legacyInputUpstream, modernInputUpstream, newInputLog, startBridgeRig, type BridgeRig, type ClientAnswers } from '../helpers/input-upstreams.js';
import { createUpstreamServer, newStats, type UpstreamHandle } from '../helpers/upstream-server.mjs';
import { rpcError } from '../helpers/rpc-error.js';
import { testEndpoint } from '../helpers/http-endpoint.js';
import type { HttpEndpoint } from '../../src/serve/http/endpoint.js';
import { counter } from '../helpers/gate.js';

const ADA = { principal: 'ada', roles: [], transport: 'stdio' as const };
const ELICIT = { elicitation: { form: {} } };
const NAME_ADA: ClientAnswers = { elicit: () => ({ action: 'accept', content: { name: 'Ada' } }) };

/** What the tests ask of a 2025-11-25 client: the calls both SDKs have, with the results as plain data. */
interface Client2025 {
  listResources(): Promise<{ resources: { uri: string; name?: string }[] }>;
  listResourceTemplates(): Promise<{ resourceTemplates: { uriTemplate: string }[] }>;
  readResource(params: { uri: string }): Promise<{ contents: { uri: string; text?: string }[] }>;
  subscribeResource(params: { uri: string }): Promise<unknown>;
  unsubscribeResource(params: { uri: string }): Promise<unknown>;
  listTools(): Promise<{ tools: { name: string; _meta?: Record<string, unknown> }[] }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<{ content: unknown[]; isError?: boolean }>;
  listPrompts(): Promise<{ prompts: { name: string }[] }>;
  getPrompt(params: { name: string; arguments?: Record<string, string> }): Promise<{ messages: unknown[] }>;
  complete(params: { ref: { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string }; argument: { name: string; value: string } }): Promise<{
    completion: { values: string[] };
  }>;
  /** Calls `onUpdated` with the URI of every notifications/resources/updated. */
  onUpdated(onUpdated: (uri: string) => void): void;
  /** The last answer the client received, as the gateway sent it (before the SDK maps an error to its own class). */
  lastAnswer(): Record<string, unknown> | undefined;
}

/** Every message the client's transport delivers, kept before the SDK sees it. */
function tap(transport: { onmessage?: ((message: never, extra?: never) => void) | undefined } | undefined): () => Record<string, unknown> | undefined {
  const answers: Record<string, unknown>[] = [];
  const deliver = transport!.onmessage!;
  transport!.onmessage = (message, extra) => {
    if ((message as { method?: unknown }).method === undefined) answers.push(message);
    deliver(message, extra);
  };
  return () => answers.at(-1);
}

/** One SDK's 2025-11-25 client, opened on a started rig: in memory as ADA, or over its HTTP endpoint. */
interface Sdk {
  name: string;
  open(started: Started, capabilities?: Record<string, unknown>, answers?: ClientAnswers): Promise<Client2025>;
}

const SDKS: Sdk[] = [
  {
    name: 'SDK v1',
    async open({ rig, over }, capabilities = {}, answers = {}) {
      const client: V1Client = await rig.legacyClient(ADA, capabilities, answers, over);
      return Object.assign(client as unknown as Client2025, {
        onUpdated: (onUpdated: (uri: string) => void) => client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => onUpdated(n.params.uri)),
        lastAnswer: tap(client.transport as never),
      });
    },
  },
  {
    name: 'SDK v2 (versionNegotiation legacy)',
    async open({ rig, over }, capabilities = {}, answers = {}) {
      const client: V2Client = await rig.modernClient(ADA, capabilities, answers, { mode: 'legacy', ...(over ? { over } : {}) });
      // Held to the 2025 era: initialize, no server/discover, no per-request envelope.
      expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
      return Object.assign(client as unknown as Client2025, {
        onUpdated: (onUpdated: (uri: string) => void) => client.setNotificationHandler('notifications/resources/updated', (n) => onUpdated(n.params.uri)),
        lastAnswer: tap(client.transport as never),
      });
    },
  },
];

/** Tools `echo` and `fail`, prompt `greet`, on an SDK v1 upstream. */
function toolsAndPrompts(server: Server): void {
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      { name: 'echo', description: 'echoes', inputSchema: { type: 'object' as const, properties: { message: { type: 'string' } } } },
      { name: 'fail', description: 'answers isError', inputSchema: { type: 'object' as const } },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, (req) => {
    if (req.params.name === 'echo') return { content: [{ type: 'text', text: `echo:${String(req.params.arguments?.message)}` }] };
    if (req.params.name === 'fail') return { content: [{ type: 'text', text: 'it failed' }], isError: true };
    throw new McpError(-32602, `Unknown tool: ${req.params.name}`);
  });
  server.setRequestHandler(ListPromptsRequestSchema, () => ({
    prompts: [{ name: 'greet', description: 'greets', arguments: [{ name: 'who', required: true }] }],
  }));
  server.setRequestHandler(GetPromptRequestSchema, (req) => ({
    messages: [{ role: 'user' as const, content: { type: 'text' as const, text: `hello ${String(req.params.arguments?.who)}` } }],
  }));
}

/** How the client reaches the proxy core. */
interface Carriage {
  name: string;
  /** Serves the rig's proxy on a real HTTP endpoint, when the client is to come that way. */
  endpoint?: (rig: BridgeRig) => HttpEndpoint;
}

const CARRIAGES: Carriage[] = [{ name: 'in memory (stdio’s shape)' }, { name: 'Streamable HTTP', endpoint: (rig) => testEndpoint(rig.proxy) }];

/** A started rig, the upstream's counters and its latest connection, and the HTTP endpoint a client comes through (if any). */
interface Started extends AsyncDisposable {
  rig: BridgeRig;
  stats: ReturnType<typeof newStats>;
  upstream: () => UpstreamHandle;
  over: URL | undefined;
}

/** A rig with `cat` (a 2025 upstream with resources, templates, subscriptions, completion, tools and prompts) and the two input-asking upstreams. */
async function start(carriage: Carriage): Promise<Started> {
  const stats = newStats();
  const log = newInputLog();
  let cat!: UpstreamHandle;
  const rig = await startBridgeRig({
    upstreams: {
      cat: {
        era: 'legacy',
        make: () =>
          (cat = createUpstreamServer(
            {
              name: 'catalog',
              resources: [0, 1, 2].map((i) => ({ uri: `x://${i}`, name: `x ${i}` })),
              templates: [{ uriTemplate: 'x://item/{id}', name: 'item' }],
              subscribe: true,
              complete: (p) => ['alpha', 'albert', 'beta'].filter((v) => v.startsWith(p.argument.value)),
              capabilities: { tools: {}, prompts: {} },
              extend: toolsAndPrompts,
            },
            stats,
          )).server,
      },
      old: { era: 'legacy', make: () => legacyInputUpstream(log) },
      new: { era: 'modern', make: () => modernInputUpstream(newInputLog()) },
    },
    config: { subscriptions: { coalesceMs: 0 } },
  });
  const endpoint = carriage.endpoint?.(rig);
  const over = endpoint ? await endpoint.listen() : undefined;
  return {
    rig,
    stats,
    upstream: () => cat,
    over,
    async [Symbol.asyncDispose]() {
      await rig[Symbol.asyncDispose]();
      await endpoint?.close();
    },
  };
}

const CASES = SDKS.flatMap((sdk) => CARRIAGES.map((carriage) => ({ sdk, carriage, name: `${sdk.name}, ${carriage.name}` })));

describe.each(CASES)('a 2025-11-25 client on $name', ({ sdk, carriage }) => {
  it('lists the merged resources and templates, reads them, and gets -32002 with data.uri for a missing one', async () => {
    await using started = await start(carriage);
    const c = await sdk.open(started);
    const uris = (await c.listResources()).resources.map((r) => r.uri);
    expect(uris).toEqual(expect.arrayContaining(['cat+x://0', 'cat+x://1', 'cat+x://2']));
    expect((await c.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toContain('cat+x://item/{id}');
    const read = await c.readResource({ uri: 'cat+x://1' });
    expect(read.contents).toEqual([{ uri: 'cat+x://1', mimeType: 'text/plain', text: 'content of x://1' }]);
    expect(read).not.toHaveProperty('ttlMs');
    // On the wire the 2025 code, -32002 (SDK v2 then raises its ResourceNotFoundError, whose own code is -32602).
    for (const uri of ['cat+x://nope', 'nobody+x://1']) {
      expect(await rpcError(c.readResource({ uri }))).toMatchObject({ data: { uri } });
      expect(c.lastAnswer()).toMatchObject({ error: { code: -32002, message: 'Resource not found', data: { uri } } });
    }
  });

  it('subscribes: the upstream is subscribed once, its update reaches the client under the namespaced URI, and unsubscribe reaches it', async () => {
    await using started = await start(carriage);
    const { stats, upstream } = started;
    const c = await sdk.open(started);
    const updated: string[] = [];
    const arrived = counter();
    c.onUpdated((uri) => {
      updated.push(uri);
      arrived.hit();
    });
    await c.subscribeResource({ uri: 'cat+x://1' });
    expect(stats.subscribes).toEqual(['x://1']);
    await upstream().server.sendResourceUpdated({ uri: 'x://1' });
    await arrived.until(1);
    expect(updated).toEqual(['cat+x://1']);
    await c.unsubscribeResource({ uri: 'cat+x://1' });
    expect(stats.unsubscribes).toEqual(['x://1']);
  });

  it('completes a template argument and a prompt argument at the owning upstream', async () => {
    await using started = await start(carriage);
    const { stats } = started;
    const c = await sdk.open(started);
    const byTemplate = await c.complete({ ref: { type: 'ref/resource', uri: 'cat+x://item/{id}' }, argument: { name: 'id', value: 'al' } });
    expect(byTemplate.completion.values).toEqual(['alpha', 'albert']);
    const byPrompt = await c.complete({ ref: { type: 'ref/prompt', name: 'cat__greet' }, argument: { name: 'who', value: 'b' } });
    expect(byPrompt.completion.values).toEqual(['beta']);
    expect(stats.completions).toBe(2);
  });

  it('lists and calls tools by their namespaced names; an unknown tool is -32602', async () => {
    await using started = await start(carriage);
    const c = await sdk.open(started);
    const tools = (await c.listTools()).tools;
    expect(tools.map((t) => t.name).sort()).toEqual(['cat__echo', 'cat__fail']);
    expect(tools.find((t) => t.name === 'cat__echo')?._meta).toMatchObject({ 'mcp-federate/upstreamName': 'echo' });
    expect(await c.callTool({ name: 'cat__echo', arguments: { message: 'hi' } })).toEqual({ content: [{ type: 'text', text: 'echo:hi' }] });
    expect(await c.callTool({ name: 'cat__fail', arguments: {} })).toEqual({ content: [{ type: 'text', text: 'it failed' }], isError: true });
    expect(await rpcError(c.callTool({ name: 'cat__nope', arguments: {} }))).toMatchObject({ code: -32602 });
  });

  it('lists prompts and gets one with its arguments', async () => {
    await using started = await start(carriage);
    const c = await sdk.open(started);
    expect((await c.listPrompts()).prompts.map((p) => p.name)).toEqual(['cat__greet']);
    expect(await c.getPrompt({ name: 'cat__greet', arguments: { who: 'ann' } })).toEqual({
      messages: [{ role: 'user', content: { type: 'text', text: 'hello ann' } }],
    });
  });

  it('is asked for elicitation by a 2025 upstream (forwarded) and by a 2026 one (input_required turned into elicitation/create)', async () => {
    await using started = await start(carriage);
    const c = await sdk.open(started, ELICIT, NAME_ADA);
    expect((await c.readResource({ uri: 'old+ask://name' })).contents[0]?.text).toBe('hello Ada');
    expect((await c.readResource({ uri: 'new+ask://name' })).contents[0]?.text).toBe('hello Ada (state modern-state-ask://name)');
    expect(started.rig.proxy.bridge.stats()).toEqual({ inFlight: 0, held: 0 });
  });

  it('is asked for sampling by upstreams of both eras, and answers with its own model', async () => {
    await using started = await start(carriage);
    const c = await sdk.open(
      started,
      { sampling: {} },
      { sample: () => ({ role: 'assistant', model: 'm', content: { type: 'text', text: 'from the user’s model' } }) },
    );
    expect((await c.readResource({ uri: 'old+sample://x' })).contents[0]?.text).toBe('sampled from the user’s model');
    expect((await c.readResource({ uri: 'new+sample://x' })).contents[0]?.text).toBe('sampled');
  });

  it('without the capability, is never asked: the request is declined with the reason, in each upstream era', async () => {
    await using started = await start(carriage);
    const c = await sdk.open(started);
    expect((await c.readResource({ uri: 'old+ask://name' })).contents[0]?.text).toBe(
      'error: MCP error -32600: elicitation/create declined: the calling client did not declare the capability',
    );
    const e = await rpcError(c.readResource({ uri: 'new+ask://name' }));
    expect(e.code).toBe(-32600);
    expect(e.message).toContain('elicitation/create declined: the calling client did not declare the capability');
    expect(e.data).toEqual({ method: 'elicitation/create', reason: 'capability' });
  });
});
