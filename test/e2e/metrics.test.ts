// Prometheus metrics through the built CLI: a scripted run over HTTP, then the scrape counts what the run did; promtool parses the exposition.
import { readFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { upstreams } from '../helpers/built-cli.js';
import { within } from '../helpers/gate.js';
import { HttpGatewayProcess } from '../helpers/http-gateway.js';
import { ProxyProcess } from '../helpers/sdk-clients.js';
import { parseExposition, sample } from '../helpers/exposition.js';

const TOKENS = { alice: 'alice-token-0123456789abcdef', bob: 'bob-token-0123456789abcdef' };
const SCRAPE_TOKEN = 'scrape-token-0123456789abcdef';

class Gateway extends HttpGatewayProcess {
  /** Starts on the config `configOf` makes, given a path in the gateway's own temp folder. */
  static async start(configOf: (file: (name: string) => string) => Record<string, unknown>): Promise<Gateway> {
    const g = new Gateway();
    await g.spawn(g.dir.writeConfig(configOf((name) => g.dir.file(name))), { logLevel: 'info' });
    return g;
  }
  async client(token: string): Promise<Client> {
    const client = new Client({ name: 'metrics-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(this.url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    return client;
  }
  scrape(token: string | null = SCRAPE_TOKEN): Promise<Response> {
    return fetch(new URL('/metrics', this.url), token === null ? {} : { headers: { authorization: `Bearer ${token}` } });
  }
}

describe('Prometheus metrics', () => {
  let g: Gateway;
  let exposition = '';
  let startsFile = '';
  const clients: Client[] = [];

  beforeAll(async () => {
    g = await Gateway.start((file) => ({
      servers: { fx: { ...upstreams.fixture('--resources', '3', '--starts-file', (startsFile = file('starts'))), cacheTtlMs: 60_000 } },
      reconnect: { initialDelayMs: 20, maxDelayMs: 100 },
      auth: {
        tokens: [
          { principal: 'alice', roles: ['eng'], token: TOKENS.alice },
          { principal: 'bob', token: TOKENS.bob },
        ],
      },
      policy: { default: 'allow', rules: [{ id: 'no-res-2', effect: 'deny', resources: ['fixture://res/2'] }] },
      limits: { reads: [{ principals: ['bob'], readsPerMinute: 60, burst: 2 }] },
      audit: { file: file('audit.jsonl') },
      metrics: { requireToken: true, token: SCRAPE_TOKEN },
    }));
    await within(g.started, 'the upstreams to start');

    // The scripted run: what the counters must show afterwards.
    const alice = await g.client(TOKENS.alice);
    const bob = await g.client(TOKENS.bob);
    clients.push(alice, bob);
    await alice.readResource({ uri: 'fx+fixture://res/0' }); // miss
    await alice.readResource({ uri: 'fx+fixture://res/0' }); // hit
    await alice.readResource({ uri: 'fx+fixture://res/1' }); // miss
    await expect(alice.readResource({ uri: 'fx+fixture://res/2' })).rejects.toThrow(/not found/i); // denied
    await bob.readResource({ uri: 'fx+fixture://res/0' }); // hit
    await bob.readResource({ uri: 'fx+fixture://res/0' }); // hit
    await expect(bob.readResource({ uri: 'fx+fixture://res/0' })).rejects.toThrow(/rate limit/i); // burst of 2 spent

    // One upstream restart: the child is killed, the gateway reconnects.
    const firstPid = Number(readFileSync(startsFile, 'utf8').trim().split('\n')[0]);
    const back = g.nextLog((r) => r.msg === 'upstream ready');
    process.kill(firstPid, 'SIGKILL');
    await within(back, 'the upstream to come back');

    const res = await g.scrape();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    exposition = await res.text();
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await g?.[Symbol.asyncDispose]();
  });

  it('counts requests by method, server and outcome, and their durations', () => {
    const m = parseExposition(exposition);
    const read = { mcp_method_name: 'resources/read' };
    expect(sample(m, 'mcp_federate_requests_total', { ...read, server: 'fx', outcome: 'ok' })).toBe(5);
    expect(sample(m, 'mcp_federate_requests_total', { ...read, server: 'fx', outcome: 'denied' })).toBe(1);
    expect(sample(m, 'mcp_federate_requests_total', { ...read, server: '', outcome: 'rate_limited' })).toBe(1);
    expect(sample(m, 'mcp_server_operation_duration_seconds_count', { ...read, server: 'fx', outcome: 'ok' })).toBe(5);
    // Upstream: only the two misses went to the upstream.
    expect(sample(m, 'mcp_client_operation_duration_seconds_count', { ...read, server: 'fx', outcome: 'ok' })).toBe(2);
  });

  it('counts cache hits and misses, policy decisions, rate limits and audit writes', () => {
    const m = parseExposition(exposition);
    expect(sample(m, 'mcp_federate_cache_reads_total', { server: 'fx', result: 'hit' })).toBe(3);
    expect(sample(m, 'mcp_federate_cache_reads_total', { server: 'fx', result: 'miss' })).toBe(2);
    expect(sample(m, 'mcp_federate_policy_decisions_total', { mcp_method_name: 'resources/read', effect: 'allow' })).toBe(5);
    expect(sample(m, 'mcp_federate_policy_decisions_total', { mcp_method_name: 'resources/read', effect: 'deny' })).toBe(2);
    expect(sample(m, 'mcp_federate_rate_limited_total', { limit: 'reads' })).toBe(1);
    expect(sample(m, 'mcp_federate_audit_write_duration_seconds_count', {})).toBe(7);
    expect(sample(m, 'mcp_federate_audit_write_failures_total', {})).toBe(0);
    // The restart emptied fx's entries (invalidated on reconnect).
    expect(sample(m, 'mcp_federate_cache_entries', {})).toBe(0);
  });

  it('shows the upstream restart, its status, and the open sessions', () => {
    const m = parseExposition(exposition);
    expect(sample(m, 'mcp_federate_upstream_reconnects_total', { server: 'fx' })).toBe(1);
    expect(sample(m, 'mcp_federate_upstream_last_failure', { server: 'fx', class: 'closed' })).toBe(1);
    expect(sample(m, 'mcp_federate_upstream_up', { server: 'fx' })).toBe(1);
    expect(sample(m, 'mcp_federate_upstream_status', { server: 'fx', state: 'up' })).toBe(1);
    expect(sample(m, 'mcp_federate_upstream_status', { server: 'fx', state: 'down' })).toBe(0);
    expect(sample(m, 'mcp_federate_sessions', { transport: 'http', era: '2025-11-25' })).toBe(2);
    expect(sample(m, 'mcp_federate_principal_limit_use', { limit: 'sessions' })).toBe(2); // alice's and bob's, summed: no principal label
    expect(sample(m, 'process_cpu_seconds_total', {})).toBeGreaterThan(0);
  });

  it('labels nothing with a URI, a token, a session id or a principal', () => {
    expect(exposition).not.toMatch(/fixture:\/\//);
    expect(exposition).not.toContain(TOKENS.alice);
    expect(exposition).not.toContain(SCRAPE_TOKEN);
    expect(exposition).not.toMatch(/alice|bob/);
    expect(exposition).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/); // no session ids (UUIDs)
  });

  it('refuses a scrape without the token, or with a wrong one, and a POST', async () => {
    expect((await g.scrape(null)).status).toBe(401);
    expect((await g.scrape('wrong-token-0123456789abcdef')).status).toBe(401);
    expect((await g.scrape(TOKENS.alice)).status).toBe(401); // an MCP credential is not the scrape token
    const post = await fetch(new URL('/metrics', g.url), { method: 'POST', headers: { authorization: `Bearer ${SCRAPE_TOKEN}` } });
    expect(post.status).toBe(405);
  });

  it('passes promtool check metrics (the only lint findings are prom-client default gauges named *_total)', async () => {
    const own = exposition
      .split('\n')
      .filter((line) => !/^(# (HELP|TYPE) )?(nodejs_|process_)/.test(line))
      .join('\n');
    const ours = await execa('promtool', ['check', 'metrics'], { input: own, reject: false });
    expect(ours.stderr + ours.stdout).toBe('');
    expect(ours.exitCode).toBe(0);
    const all = await execa('promtool', ['check', 'metrics'], { input: exposition, reject: false });
    expect([0, 3]).toContain(all.exitCode); // 3: lint findings only; 1 would be a parse error
    for (const finding of (all.stderr + all.stdout).split('\n').filter(Boolean)) expect(finding).toMatch(/^nodejs_active_\w+_total non-counter/);
  });
});

describe('metrics of a stdio deployment (metrics.listen)', () => {
  it('serves /metrics, /healthz and /readyz on their own port, counting the stdio session and its reads; nothing else there', async () => {
    await using proxy = await ProxyProcess.start(
      { servers: { fx: upstreams.fixture('--resources', '2') }, metrics: { listen: '127.0.0.1:0' } },
      { logLevel: 'info' },
    );
    const listening = await within(
      proxy.waitForLog((r) => r.msg === 'metrics listening'),
      'the metrics listener',
    );
    const base = new URL(listening.url as string);
    await proxy.client.readResource({ uri: 'fx+fixture://res/0' });
    const res = await fetch(new URL('/metrics', base)); // loopback: no token needed (requireToken: auto)
    expect(res.status).toBe(200);
    const m = parseExposition(await res.text());
    expect(sample(m, 'mcp_federate_requests_total', { mcp_method_name: 'resources/read', server: 'fx', outcome: 'ok' })).toBe(1);
    expect(sample(m, 'mcp_federate_sessions', { transport: 'stdio', era: '2025-11-25' })).toBe(1);
    expect((await fetch(new URL('/healthz', base))).status).toBe(200);
    const ready = await fetch(new URL('/readyz', base));
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true, upstreams: [{ server: 'fx', status: 'ready' }] });
    expect((await fetch(new URL('/mcp', base))).status).toBe(404);
    // DNS rebinding: a Host that is not the loopback listener's (fetch cannot set Host: node:http can).
    const rebound = await new Promise<number>((resolve, reject) =>
      httpGet({ host: base.hostname, port: base.port, path: '/metrics', headers: { host: 'evil.example' } }, (r) => resolve(r.resume().statusCode ?? 0)).on(
        'error',
        reject,
      ),
    );
    expect(rebound).toBe(403);
  });
});
