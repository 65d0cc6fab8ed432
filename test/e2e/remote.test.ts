// End to end: remote upstreams (Streamable HTTP with configured headers, legacy SSE with and without
// an explicit transport), and --log-file, which must never receive the configured credentials.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runCli, upstreams } from '../helpers/built-cli.js';
import { listAll, notFound } from '../helpers/catalog.js';
import { parseLogLines } from '../helpers/logs.js';
import { RemoteFixture } from '../helpers/remote-fixture.js';
import { rpcError } from '../helpers/rpc-error.js';
import { ProxyProcess } from '../helpers/sdk-clients.js';
import { suiteResource } from '../helpers/suite.js';
import { TempDir } from '../helpers/temp-dir.js';

const TOKEN = `e2e-token-${randomUUID()}`;
const httpFixture = suiteResource(() => RemoteFixture.start('http', '--resources', '3'));
const sseFixture = suiteResource(() => RemoteFixture.start('sse', '--resources', '2'));

const catalog = (id: string, n: number) => [
  ...Array.from({ length: n }, (_, i) => `${id}+fixture://res/${i}`),
  `${id}+fixture://ticker`,
  `${id}+fixture://stats`,
];
const text = (r: { contents: unknown[] }) => (r.contents[0] as { text: string }).text;

describe('remote upstreams', () => {
  const proxy = suiteResource(() =>
    ProxyProcess.start(
      {
        servers: {
          http: { url: httpFixture().url, headers: { Authorization: 'Bearer ${TEST_TOKEN}' } },
          'sse-auto': { url: sseFixture().url },
          'sse-explicit': { url: sseFixture().url, transport: 'sse', headers: { 'X-E2e': 'explicit' } },
        },
      },
      { logLevel: 'info', env: { TEST_TOKEN: TOKEN } },
    ),
  );
  const client = () => proxy().client;

  it.each([
    ['http', 'streamable-http'],
    ['sse-auto', 'sse'],
    ['sse-explicit', 'sse'],
  ])('%s connects over %s', async (server, transport) => {
    const ready = await proxy().waitForLog((r) => r.server === server && r.msg === 'upstream ready');
    expect(ready.transport).toBe(transport);
  });

  it('lists every remote upstream’s resources, namespaced, with no _meta', async () => {
    const { items, pages } = await listAll(client());
    expect(items.map((r) => r.uri)).toEqual([...catalog('http', 3), ...catalog('sse-auto', 2), ...catalog('sse-explicit', 2)]);
    expect(pages.map((p) => p.meta)).toEqual([undefined]);
    const templates = await listAll(client(), 'templates');
    expect(templates.items.map((t) => t.uriTemplate)).toEqual(
      ['http', 'sse-auto', 'sse-explicit'].flatMap((id) => [`${id}+fixture://res/{id}`, `${id}+fixture://item/{category}/{id}`]),
    );
  });

  it.each(['http', 'sse-auto', 'sse-explicit'])('reads through %s, and not-found is -32002', async (server) => {
    const read = await client().readResource({ uri: `${server}+fixture://item/gamma/3` });
    expect(read.contents).toEqual([{ uri: `${server}+fixture://item/gamma/3`, mimeType: 'text/plain', text: 'item gamma/3' }]);
    const missing = `${server}+fixture://res/42`;
    expect(await rpcError(client().readResource({ uri: missing }))).toEqual(notFound(missing));
  });

  it('completes through a remote upstream', async () => {
    const result = await client().complete({
      ref: { type: 'ref/resource', uri: 'sse-auto+fixture://item/{category}/{id}' },
      argument: { name: 'category', value: 'g' },
    });
    expect(result.completion.values).toEqual(['gamma']);
  });

  it('sends each upstream its own configured headers, with ${VAR} taken from the proxy’s environment', async () => {
    const stats = async (server: string) =>
      (JSON.parse(text(await client().readResource({ uri: `${server}+fixture://stats` }))) as { lastHeaders: unknown }).lastHeaders;
    expect(await stats('http')).toEqual({ authorization: `Bearer ${TOKEN}` });
    expect(await stats('sse-explicit')).toEqual({ 'x-e2e': 'explicit' });
    expect(await stats('sse-auto')).toEqual({});
  });

  it('never logs the token', () => {
    expect(proxy().logs().length).toBeGreaterThan(0);
    expect(proxy().stderr).not.toContain(TOKEN);
  });
});

describe('--log-file', () => {
  it('writes JSON lines to the file (upstream stderr included), nothing to stderr, and never the token', async () => {
    using logDir = new TempDir();
    const logFile = logDir.file('nested/dir/proxy.log');
    let stderr: string;
    {
      await using proxy = await ProxyProcess.start(
        {
          servers: {
            http: { url: httpFixture().url, headers: { Authorization: 'Bearer ${TEST_TOKEN}' } },
            dead: upstreams.fixture('--exit-on-start'),
            fx: upstreams.fixture('--resources', '1'),
          },
        },
        { logLevel: 'trace', args: ['--log-file', logFile], env: { TEST_TOKEN: TOKEN } },
      );
      const { items } = await listAll(proxy.client);
      expect(items.map((r) => r.uri)).toEqual([...catalog('http', 3), ...catalog('fx', 1)]);
      expect(text(await proxy.client.readResource({ uri: 'http+fixture://stats' }))).toContain(TOKEN); // it was sent
      await rpcError(proxy.client.readResource({ uri: 'dead+fixture://res/0' }));
      await proxy[Symbol.asyncDispose]();
      await proxy.closed;
      stderr = proxy.stderr;
    }
    expect(stderr).toBe('');
    const raw = readFileSync(logFile, 'utf8');
    expect(raw).not.toContain(TOKEN);
    const records = parseLogLines(raw);
    expect(records.every((r) => r.name === 'mcp-federate' && typeof r.level === 'number' && typeof r.time === 'number')).toBe(true);
    const find = (pattern: Record<string, unknown>) => records.find((r) => Object.entries(pattern).every(([k, v]) => r[k] === v));
    expect(find({ msg: 'starting' })).toMatchObject({ level: 30, upstreams: ['http', 'dead', 'fx'] });
    expect(find({ msg: 'upstream ready', server: 'http' })).toMatchObject({ transport: 'streamable-http' });
    expect(find({ msg: 'upstream ready', server: 'fx' })).toMatchObject({ transport: 'stdio' });
    expect(find({ msg: 'upstream stderr', server: 'dead' })).toMatchObject({ stderr: 'catalog-server: --exit-on-start' });
    expect(find({ msg: 'upstream failed to start; serving the others', server: 'dead' })).toMatchObject({ level: 50 });
    expect(find({ msg: 'serving on stdio' })).toBeDefined();
    expect(find({ msg: 'request failed', method: 'resources/read' })).toMatchObject({ level: 20, code: 'RESOURCE_NOT_FOUND' });
    // Closing the client ends the proxy's stdin: that (not the SDK's SIGTERM escalation) stops it.
    expect(find({ msg: 'shutting down' })).toMatchObject({ why: 'stdin closed' });
  });
});

describe('a remote answer over the upstream’s maxResponseBytes', () => {
  const MB = 1024 * 1024;
  const bigHttp = suiteResource(() => RemoteFixture.start('http', '--resources', '1', '--size', String(2 * MB)));
  const bigSse = suiteResource(() => RemoteFixture.start('sse', '--resources', '1', '--size', String(2 * MB)));
  const proxy = suiteResource(() =>
    ProxyProcess.start(
      {
        servers: {
          // A lost answer would surface as a -32001 timeout instead.
          http: { url: bigHttp().url, maxResponseBytes: MB, timeoutMs: 20_000 },
          sse: { url: bigSse().url, transport: 'sse', maxResponseBytes: MB, timeoutMs: 20_000 },
        },
      },
      { logLevel: 'info' },
    ),
  );

  // Legacy SSE answers on the GET stream, so there the refused event's own id is what gets answered.
  it.each(['http', 'sse'])('%s: fails that read at once with -32603, logs why, and keeps the connection', async (server) => {
    const error = await rpcError(proxy().client.readResource({ uri: `${server}+fixture://res/0` }));
    expect(error).toEqual({ code: -32603, message: 'MCP error -32603: Resource too large', data: { limit: MB } });
    const refused = await proxy().waitForLog((r) => r.server === server && r.msg === 'upstream message refused');
    expect(refused).toMatchObject({ level: 40, reason: `SSE event over maxResponseBytes (${MB})` });
    const small = await proxy().client.readResource({ uri: `${server}+fixture://item/alpha/1` });
    expect(small.contents).toEqual([{ uri: `${server}+fixture://item/alpha/1`, mimeType: 'text/plain', text: 'item alpha/1' }]);
  });
});

describe('an unreachable remote upstream', () => {
  it('is reported with the Streamable HTTP error first, the SSE fallback’s after it', async () => {
    // A server that answers 404 to everything: both transports fail, each with its own message.
    const server = createServer((_req, res) => res.writeHead(404).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      using dir = new TempDir();
      const file = dir.writeConfig({ servers: { gone: { type: 'http', url: `http://127.0.0.1:${port}/mcp` } } });
      const result = await runCli(['ls', '--config', file]);
      expect(result.exitCode).toBe(1);
      const line = String(result.stderr)
        .split('\n')
        .find((l) => l.startsWith('mcp-federate: gone is unavailable: '));
      expect(line).toBe(
        'mcp-federate: gone is unavailable: Error POSTing to endpoint (HTTP 404 Not Found) (sse fallback: SSE error: Non-200 status code (404))',
      );
    } finally {
      server.close();
    }
  });
});
