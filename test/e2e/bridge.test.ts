// Requests for user input bridged through the built CLI: a 2025-11-25 client on stdio and a 2026-07-28 client over HTTP, each in front of upstreams of both eras.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PASS } from '../helpers/passthrough.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { assertBuilt, CLI, ROOT } from '../helpers/built-cli.js';
import { HttpGatewayProcess } from '../helpers/http-gateway.js';
import { elicitingModernClient } from '../helpers/sdk-clients.js';
import { TempDir } from '../helpers/temp-dir.js';
import { postRpc } from '../helpers/raw-http.js';

const INPUT = path.join(ROOT, 'test', 'fixtures', 'input-server.mjs');
const CONFIG = {
  servers: {
    legacy: { command: process.execPath, args: [INPUT], protocol: '2025-11-25' },
    modern: { command: process.execPath, args: [INPUT], protocol: '2026-07-28' },
  },
};
const textOf = (r: { contents: unknown[] }) => (r.contents[0] as { text: string }).text;

describe('bridging through the built CLI', () => {
  it('stdio, a 2025-11-25 client: asked by a 2025 upstream (forwarded) and by a 2026 upstream (its input_required asked, then retried)', async () => {
    assertBuilt();
    using dir = new TempDir();
    const client = new Client({ name: 'e2e-user', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, (req) => {
      asked.push(String(req.params.message));
      return { action: 'accept', content: { name: 'Ada' } };
    });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, '--config', dir.writeConfig(CONFIG), '--log-level', 'warn'],
        env: {},
        cwd: dir.path,
        stderr: 'pipe',
      }),
    );
    try {
      expect(textOf(await client.readResource({ uri: 'legacy+ask://name' }))).toBe('hello Ada (state fixture-state:ask://name)');
      expect(textOf(await client.readResource({ uri: 'modern+ask://name' }))).toBe('hello Ada (state fixture-state:ask://name)');
      expect(asked).toEqual(['Your name?', 'Your name?']);
    } finally {
      await client.close();
    }
  });

  it('HTTP, a 2026-07-28 client: a 2025 upstream’s call held between its requests, a 2026 upstream’s state sealed', async () => {
    using dir = new TempDir();
    await using gw = await HttpGatewayProcess.serve(dir.writeConfig(CONFIG), { logLevel: 'info' });
    await gw.started;
    const client = await elicitingModernClient(gw.url, 'e2e-modern-user', 'Grace');
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const read = (uri: string) => client.request({ method: 'resources/read', params: { uri } } as never, PASS as never) as Promise<{ contents: unknown[] }>;
      expect(textOf(await read('legacy+ask://name'))).toBe('hello Grace (state fixture-state:ask://name)');
      expect(textOf(await read('modern+ask://name'))).toBe('hello Grace (state fixture-state:ask://name)');
      // By hand: the gateway's state hides the upstream's, and a tampered one is refused.
      const first = (await client.request(
        { method: 'resources/read', params: { uri: 'modern+ask://name' } } as never,
        PASS as never,
        {
          allowInputRequired: true,
        } as never,
      )) as { requestState: string };
      expect(first.requestState).not.toContain('fixture-state');
      const tampered = `${first.requestState.slice(0, -2)}${first.requestState.endsWith('AA') ? 'AB' : 'AA'}`;
      await expect(
        client.request(
          {
            method: 'resources/read',
            params: { uri: 'modern+ask://name', requestState: tampered, inputResponses: { name: { action: 'accept', content: { name: 'Eve' } } } },
          } as never,
          PASS as never,
        ),
      ).rejects.toMatchObject({ code: -32602 });
    } finally {
      await client.close();
    }
  });

  it('HTTP, a 2025-11-25 session: the upstreams’ requests reach it on its stream and its answers come back', async () => {
    using dir = new TempDir();
    await using gw = await HttpGatewayProcess.serve(dir.writeConfig(CONFIG));
    await gw.started;
    const client = new Client({ name: 'e2e-http-user', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { name: 'Hopper' } }));
    await client.connect(new StreamableHTTPClientTransport(gw.url));
    try {
      expect(textOf(await client.readResource({ uri: 'legacy+ask://name' }))).toBe('hello Hopper (state fixture-state:ask://name)');
      expect(textOf(await client.readResource({ uri: 'modern+ask://name' }))).toBe('hello Hopper (state fixture-state:ask://name)');
    } finally {
      await client.close();
    }
  });

  it('HTTP, a 2025-11-25 session with no stream open: the relayed request fails at once and the read is answered', async () => {
    using dir = new TempDir();
    await using gw = await HttpGatewayProcess.serve(dir.writeConfig(CONFIG));
    await gw.started;
    const post = async (body: unknown, sid?: string) => {
      const res = await postRpc(gw.url, body, sid ? { sid } : {});
      return { sid: res.headers.get('mcp-session-id') ?? undefined, body: res.status === 202 ? undefined : ((await res.json()) as Record<string, unknown>) };
    };
    const init = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: { elicitation: { form: {} } }, clientInfo: { name: 'no-stream', version: '1' } },
    });
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, init.sid);
    // No GET stream: the elicitation cannot reach this client, so the upstream is told at once (it fails the read).
    const read = await post({ jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'legacy+ask://name' } }, init.sid);
    expect((read.body?.error as { code?: number } | undefined)?.code).toBe(-32603);
  });
});
