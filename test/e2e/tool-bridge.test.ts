// Requests for user input during tools/call and prompts/get, bridged through the built CLI: server-everything's elicitation and sampling tools, and the input fixture in both eras, towards 2025-11-25 clients on SDK v1 and SDK v2, and SDK v2 clients on 2026-07-28.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PASS } from '../helpers/passthrough.js';
import { readJsonLines } from '../helpers/logs.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';
import { assertBuilt, CLI, ROOT, upstreams } from '../helpers/built-cli.js';
import { HttpGatewayProcess } from '../helpers/http-gateway.js';
import { elicitingModernClient } from '../helpers/sdk-clients.js';
import { TempDir } from '../helpers/temp-dir.js';

const INPUT = path.join(ROOT, 'test', 'fixtures', 'input-server.mjs');
const CONFIG = {
  servers: {
    everything: upstreams.everything(),
    legacy: { command: process.execPath, args: [INPUT], protocol: '2025-11-25' },
    modern: { command: process.execPath, args: [INPUT], protocol: '2026-07-28' },
  },
};
interface ToolResult {
  content: { type: string; text?: string }[];
  isError?: boolean;
}
const textOf = (r: unknown) => ((r as ToolResult).content[0] as { text: string }).text;
const promptText = (r: unknown) => (r as { messages: { content: { text: string } }[] }).messages[0]!.content.text;

/** What the stdio tests ask of a 2025-11-25 client: the calls both SDKs have. */
interface Client2025 {
  listTools(): Promise<{ tools: { name: string }[] }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  getPrompt(params: { name: string }): Promise<unknown>;
  close(): Promise<void>;
}

/** How the client answers: an elicitation with `{ name: 'Ada' }` accepted, a sampling with a fixed text; each question noted in `asked`. */
interface Answering {
  capabilities: Record<string, unknown>;
  asked?: string[];
}

const answerElicit = (asked: string[] | undefined, message: unknown) => {
  asked?.push(String(message));
  return { action: 'accept' as const, content: { name: 'Ada' } };
};
const answerSample = (asked: string[] | undefined, maxTokens: unknown) => {
  asked?.push(`sampling:${String(maxTokens)}`);
  return { role: 'assistant' as const, model: 'e2e-model', content: { type: 'text' as const, text: 'sampled by the client' } };
};

/** The gateway on stdio, as the built CLI runs it for a client. */
const cliOn = (dir: TempDir, extra: Record<string, unknown>) => ({
  command: process.execPath,
  args: [CLI, '--config', dir.writeConfig({ ...CONFIG, ...extra }), '--log-level', 'warn'],
  env: {},
  cwd: dir.path,
  stderr: 'pipe' as const,
});

/** The two SDKs' 2025-11-25 clients on stdio: SDK v1, and SDK v2 held to 2025-11-25 by its legacy negotiation. */
const SDKS: { name: string; connect(dir: TempDir, answering: Answering, extra?: Record<string, unknown>): Promise<Client2025> }[] = [
  {
    name: 'SDK v1',
    async connect(dir, { capabilities, asked }, extra = {}) {
      assertBuilt();
      const client = new Client({ name: 'e2e-tool-user', version: '1.0.0' }, { capabilities });
      if (capabilities.elicitation) client.setRequestHandler(ElicitRequestSchema, (req) => answerElicit(asked, req.params.message));
      if (capabilities.sampling) client.setRequestHandler(CreateMessageRequestSchema, (req) => answerSample(asked, req.params.maxTokens));
      await client.connect(new StdioClientTransport(cliOn(dir, extra)));
      return client;
    },
  },
  {
    name: 'SDK v2 (versionNegotiation legacy)',
    async connect(dir, { capabilities, asked }, extra = {}) {
      assertBuilt();
      const client = new ModernClient({ name: 'e2e-tool-user', version: '1.0.0' }, { capabilities, versionNegotiation: { mode: 'legacy' } });
      if (capabilities.elicitation) client.setRequestHandler('elicitation/create', (req) => answerElicit(asked, req.params.message));
      if (capabilities.sampling) client.setRequestHandler('sampling/createMessage', (req) => answerSample(asked, req.params.maxTokens));
      await client.connect(new ModernStdioTransport(cliOn(dir, extra)));
      expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
      return client;
    },
  },
];

describe.each(SDKS)('tools/call and prompts/get bridged through the built CLI to a 2025-11-25 client on $name (stdio)', (sdk) => {
  it('with elicitation and sampling: server-everything asks it, and both fixture eras ask it', async () => {
    using dir = new TempDir();
    const asked: string[] = [];
    const client = await sdk.connect(dir, { capabilities: { elicitation: { form: {} }, sampling: {} }, asked }, { audit: { file: dir.file('audit.jsonl') } });
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(
        expect.arrayContaining(['everything__trigger-elicitation-request', 'everything__trigger-sampling-request', 'legacy__ask', 'modern__ask']),
      );
      // 2025 upstream → 2025 client: server-everything's own requests, answered by this client's handlers.
      const elicited = (await client.callTool({ name: 'everything__trigger-elicitation-request', arguments: {} })) as ToolResult;
      expect(elicited.isError).not.toBe(true);
      expect(JSON.stringify(elicited.content)).toContain('Ada');
      const sampled = (await client.callTool({ name: 'everything__trigger-sampling-request', arguments: { prompt: 'hi', maxTokens: 7 } })) as ToolResult;
      expect(sampled.isError).not.toBe(true);
      expect(textOf(sampled)).toContain('sampled by the client');
      // The fixture in both eras, on a tool and on a prompt.
      expect(textOf(await client.callTool({ name: 'legacy__ask', arguments: {} }))).toBe('hello Ada (state fixture-state:tool:ask)');
      expect(textOf(await client.callTool({ name: 'modern__ask', arguments: {} }))).toBe('hello Ada (state fixture-state:tool:ask)');
      expect(promptText(await client.getPrompt({ name: 'legacy__greet' }))).toBe('hello Ada (state fixture-state:prompt:greet)');
      expect(promptText(await client.getPrompt({ name: 'modern__greet' }))).toBe('hello Ada (state fixture-state:prompt:greet)');
      expect(asked).toEqual(['Please provide inputs for the following fields:', 'sampling:7', 'Your name?', 'Your name?', 'Your name?', 'Your name?']);
    } finally {
      await client.close();
    }
    // The calls keep their records; each relayed request has its own, naming the tool and the user's answer, never the content.
    const records = readJsonLines(dir.file('audit.jsonl'));
    const pick = (r: Record<string, unknown>) => [r.method, r.name, r.server, r.outcome];
    expect(records.filter((r) => r.method === 'tools/call').map(pick)).toEqual([
      ['tools/call', 'everything__trigger-elicitation-request', 'everything', 'ok'],
      ['tools/call', 'everything__trigger-sampling-request', 'everything', 'ok'],
      ['tools/call', 'legacy__ask', 'legacy', 'ok'],
      ['tools/call', 'modern__ask', 'modern', 'ok'],
    ]);
    const relayed = records.filter((r) => r.method === 'elicitation/create' || r.method === 'sampling/createMessage');
    expect(relayed.map(pick)).toEqual(
      expect.arrayContaining([
        ['elicitation/create', 'everything__trigger-elicitation-request', 'everything', 'accept'],
        ['sampling/createMessage', 'everything__trigger-sampling-request', 'everything', 'ok'],
        ['elicitation/create', 'modern__ask', 'modern', 'accept'],
        ['elicitation/create', 'legacy__greet', 'legacy', 'accept'],
      ]),
    );
    expect(relayed).toHaveLength(6);
    expect(JSON.stringify(relayed)).not.toContain('Ada');
  });

  it('without the capabilities: each request is declined with a clear reason, and nothing is asked', async () => {
    using dir = new TempDir();
    const client = await sdk.connect(dir, { capabilities: {} });
    try {
      const elicited = (await client.callTool({ name: 'everything__trigger-elicitation-request', arguments: {} })) as ToolResult;
      expect(elicited.isError).toBe(true);
      expect(textOf(elicited)).toContain('elicitation/create declined: the calling client did not declare the capability');
      const sampled = (await client.callTool({ name: 'everything__trigger-sampling-request', arguments: { prompt: 'hi' } })) as ToolResult;
      expect(sampled.isError).toBe(true);
      expect(textOf(sampled)).toContain('sampling/createMessage declined: the calling client did not declare the capability');
      // A 2026 upstream's embedded question fails the call itself.
      await expect(client.callTool({ name: 'modern__ask', arguments: {} })).rejects.toMatchObject({
        code: -32600,
        message: expect.stringContaining('elicitation/create declined') as unknown,
      });
    } finally {
      await client.close();
    }
  });
});

describe('tools/call and prompts/get bridged through the built CLI to a 2026-07-28 client (HTTP)', () => {
  it('HTTP, a 2026-07-28 client: a 2025 upstream’s tool call held across its retry, a 2026 upstream’s state sealed, tampered and replayed states refused', async () => {
    using dir = new TempDir();
    await using gw = await HttpGatewayProcess.serve(dir.writeConfig(CONFIG));
    await gw.started;
    const client = await elicitingModernClient(gw.url, 'e2e-modern-tool-user', 'Grace');
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const rpc = (method: string, params: Record<string, unknown>, options?: Record<string, unknown>) =>
        client.request({ method, params } as never, PASS as never, options as never) as Promise<Record<string, unknown>>;
      // The SDK client fulfils each input_required and retries.
      expect(textOf(await rpc('tools/call', { name: 'legacy__ask', arguments: {} }))).toBe('hello Grace (state fixture-state:tool:ask)');
      expect(textOf(await rpc('tools/call', { name: 'modern__ask', arguments: {} }))).toBe('hello Grace (state fixture-state:tool:ask)');
      expect(promptText(await rpc('prompts/get', { name: 'modern__greet' }))).toBe('hello Grace (state fixture-state:prompt:greet)');
      expect(promptText(await rpc('prompts/get', { name: 'legacy__greet' }))).toBe('hello Grace (state fixture-state:prompt:greet)');
      // By hand: the input_required reaches the client intact, with the gateway's state, not the upstream's.
      const first = await rpc('tools/call', { name: 'modern__ask', arguments: {} }, { allowInputRequired: true });
      expect(first.resultType).toBe('input_required');
      expect(first.inputRequests).toEqual({
        name: { method: 'elicitation/create', params: expect.objectContaining({ message: 'Your name?' }) as unknown },
      });
      const state = first.requestState as string;
      expect(state).not.toContain('fixture-state');
      const answers = { name: { action: 'accept', content: { name: 'Eve' } } };
      const tampered = `${state.slice(0, -2)}${state.endsWith('AA') ? 'AB' : 'AA'}`;
      await expect(rpc('tools/call', { name: 'modern__ask', arguments: {}, requestState: tampered, inputResponses: answers })).rejects.toMatchObject({
        code: -32602,
      });
      // Replayed against another item (the prompt of the same upstream): refused the same way.
      await expect(rpc('prompts/get', { name: 'modern__greet', requestState: state, inputResponses: answers })).rejects.toMatchObject({ code: -32602 });
      // The genuine retry still works, and the upstream saw its own state.
      expect(textOf(await rpc('tools/call', { name: 'modern__ask', arguments: {}, requestState: state, inputResponses: answers }))).toBe(
        'hello Eve (state fixture-state:tool:ask)',
      );
      // A held call's state (2025 upstream), tampered: refused; the held call is then answered by its genuine retry.
      const held = await rpc('tools/call', { name: 'legacy__ask', arguments: {} }, { allowInputRequired: true });
      expect(held.resultType).toBe('input_required');
      const heldState = held.requestState as string;
      const key = Object.keys(held.inputRequests as object)[0]!;
      const heldTampered = `${heldState.slice(0, -2)}${heldState.endsWith('AA') ? 'AB' : 'AA'}`;
      await expect(
        rpc('tools/call', { name: 'legacy__ask', arguments: {}, requestState: heldTampered, inputResponses: { [key]: answers.name } }),
      ).rejects.toMatchObject({
        code: -32602,
      });
      expect(textOf(await rpc('tools/call', { name: 'legacy__ask', arguments: {}, requestState: heldState, inputResponses: { [key]: answers.name } }))).toBe(
        'hello Eve (state fixture-state:tool:ask)',
      );
    } finally {
      await client.close();
    }
  });

  it('HTTP, a 2026-07-28 client without elicitation: the 2026 upstream’s question is refused with -32021 naming the capability, never forwarded', async () => {
    using dir = new TempDir();
    await using gw = await HttpGatewayProcess.serve(dir.writeConfig(CONFIG));
    await gw.started;
    const client = new ModernClient({ name: 'e2e-modern-no-caps', version: '1.0.0' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } } as never);
    await client.connect(new ModernHttpTransport(gw.url));
    try {
      await expect(
        client.request({ method: 'tools/call', params: { name: 'modern__ask', arguments: {} } } as never, PASS as never, { allowInputRequired: true } as never),
      ).rejects.toMatchObject({ code: -32021, data: { requiredCapabilities: { elicitation: { form: {} } } } });
    } finally {
      await client.close();
    }
  });
});
