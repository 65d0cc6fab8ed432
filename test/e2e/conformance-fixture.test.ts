// The conformance fixture on its own over HTTP (`--http`), with real SDK clients of both eras: what `npm run conformance` compares the gateway against.
import { once } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { answerOf, postRpc } from '../helpers/raw-http.js';
import { modernHeaders, modernRequest, V2026 } from '../helpers/rpc-messages.js';
import { ROOT } from '../helpers/built-cli.js';

const SCRIPT = path.join(ROOT, 'test', 'fixtures', 'conformance-server.mjs');
const ALL_CAPABILITIES = { elicitation: {}, sampling: {}, roots: {} };

interface RpcAnswer {
  id?: unknown;
  result?: Record<string, unknown> & { resultType?: string; requestState?: string };
  error?: { code: number; message: string };
}

/** One 2026-07-28 request as its own HTTP POST (envelope, headers), answered with JSON or one SSE response. */
async function post(
  url: string,
  method: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown> = ALL_CAPABILITIES,
): Promise<{ status: number; body: RpcAnswer }> {
  const res = await postRpc(url, modernRequest(7, method, params, capabilities), { headers: modernHeaders(method, params) });
  return { status: res.status, body: await answerOf(res, 7) };
}

describe('the conformance fixture over HTTP', () => {
  let stop: () => Promise<void>;
  let url: string;
  beforeAll(async () => {
    const child = execa(process.execPath, [SCRIPT, '--http'], { reject: false, stdin: 'ignore' });
    const lines = createInterface({ input: child.stdout });
    const [first] = (await once(lines, 'line')) as [string];
    lines.close();
    url = (JSON.parse(first) as { url: string }).url;
    stop = async () => {
      child.kill('SIGTERM');
      await child;
    };
  });
  afterAll(() => stop?.());

  it('asks a 2025-11-25 session with real elicitation/create and sampling/createMessage requests, on the call', async () => {
    const client = new Client({ name: 'legacy', version: '1' }, { capabilities: { elicitation: {}, sampling: {} } });
    const asked: unknown[] = [];
    client.setRequestHandler(ElicitRequestSchema, (req) => {
      asked.push(req.params);
      return { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, (req) => {
      asked.push(req.params);
      return { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'm', stopReason: 'endTurn' };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      const elicited = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
      expect(elicited.content).toEqual([
        { type: 'text', text: 'User response: Elicitation completed: action=accept, content={"username":"ada","email":"ada@example.com"}' },
      ]);
      const sampled = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'Capital of France?' } });
      expect(sampled.content).toEqual([{ type: 'text', text: 'LLM response: Paris' }]);
      expect(asked).toEqual([
        expect.objectContaining({ message: 'Who are you?', requestedSchema: expect.objectContaining({ required: ['username', 'email'] }) }),
        expect.objectContaining({ messages: [{ role: 'user', content: { type: 'text', text: 'Capital of France?' } }], maxTokens: 100 }),
      ]);
    } finally {
      await client.close();
    }
  });

  it('answers a 2025-11-25 client without the capability with isError, never with a request it cannot take', async () => {
    const client = new Client({ name: 'bare', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      expect(await client.callTool({ name: 'test_elicitation', arguments: { message: 'x' } })).toMatchObject({ isError: true });
      expect(await client.callTool({ name: 'test_sampling', arguments: { prompt: 'x' } })).toMatchObject({ isError: true });
    } finally {
      await client.close();
    }
  });

  it('serves a 2026-07-28 client with two input_required rounds that its SDK fulfils', async () => {
    const client = new ModernClient({ name: 'modern', version: '1' }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: 'auto' } });
    const messages: string[] = [];
    client.setRequestHandler('elicitation/create', (req) => {
      const message = String((req.params as { message: string }).message);
      messages.push(message);
      const content: Record<string, string> = message.startsWith('Step 1') ? { name: 'Ada' } : { color: 'blue' };
      return { action: 'accept', content };
    });
    await client.connect(new ModernHttpTransport(new URL(url)));
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(V2026);
      const result = await client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} });
      expect(result.content).toEqual([{ type: 'text', text: 'Ada likes blue' }]);
      expect(messages).toEqual(['Step 1: What is your name?', 'Step 2: What is your favorite color?']);
    } finally {
      await client.close();
    }
  });

  it('refuses a tampered or foreign requestState with -32602, and accepts its own', async () => {
    const name = 'test_input_required_result_request_state';
    const first = await post(url, 'tools/call', { name, arguments: {} });
    expect(first.body.result).toMatchObject({ resultType: 'input_required', inputRequests: { confirm: { method: 'elicitation/create' } } });
    const state = String(first.body.result?.requestState);
    const answer = { confirm: { action: 'accept', content: { ok: true } } };
    const tampered = await post(url, 'tools/call', { name, arguments: {}, inputResponses: answer, requestState: `${state}-TAMPERED` });
    expect(tampered.body.error).toMatchObject({ code: -32602 });
    // A state minted for another tool verifies, but is not this tool's: asked again, not served.
    const other = await post(url, 'tools/call', { name: 'test_input_required_result_multi_round', arguments: {} });
    const foreign = await post(url, 'tools/call', { name, arguments: {}, inputResponses: answer, requestState: other.body.result?.requestState });
    expect(foreign.body.result).toMatchObject({ resultType: 'input_required' });
    const honest = await post(url, 'tools/call', { name, arguments: {}, inputResponses: answer, requestState: state });
    expect(honest.body.result?.content).toEqual([{ type: 'text', text: 'state-ok: confirmed=true' }]);
  });

  it('rejects a call that needs an undeclared capability with -32021 and HTTP 400, and asks only for what was declared', async () => {
    const missing = await post(url, 'tools/call', { name: 'test_missing_capability', arguments: {} }, {});
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } });
    const asked = await post(url, 'tools/call', { name: 'test_input_required_result_capabilities', arguments: {} }, { sampling: {} });
    expect(Object.values(asked.body.result?.inputRequests as Record<string, { method: string }>).map((r) => r.method)).toEqual(['sampling/createMessage']);
  });

  it('answers an unknown tool or prompt with -32602 in both eras', async () => {
    expect((await post(url, 'tools/call', { name: 'no_such_tool', arguments: {} })).body.error).toMatchObject({ code: -32602 });
    expect((await post(url, 'prompts/get', { name: 'no_such_prompt' })).body.error).toMatchObject({ code: -32602 });
    const client = new Client({ name: 'legacy', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    } finally {
      await client.close();
    }
  });
});
