// Policy and audit through the built CLI: an audit file that survives SIGKILL and verifies; two principals with different policies on one HTTP gateway.
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { runCli, upstreams } from '../helpers/built-cli.js';
import { notFound } from '../helpers/catalog.js';
import { within } from '../helpers/gate.js';
import { HttpGatewayProcess } from '../helpers/http-gateway.js';
import { rpcError } from '../helpers/rpc-error.js';
import { ProxyProcess } from '../helpers/sdk-clients.js';
import { TempDir } from '../helpers/temp-dir.js';

const POLICY = {
  default: 'deny',
  rules: [
    { id: 'eng-all', effect: 'allow', roles: ['eng'] },
    { id: 'ops-res-1', effect: 'allow', principals: ['olga'], resources: ['fx+fixture://res/1', 'fixture://ticker'] },
    { id: 'no-res-2', effect: 'deny', resources: ['fixture://res/2'] },
  ],
};

describe('audit log through the CLI', () => {
  it('N answered reads leave N records even after SIGKILL, a hostile URI stays one record, and the chain verifies', async () => {
    using dir = new TempDir();
    const auditFile = dir.file('audit.jsonl');
    const proxy = await ProxyProcess.start({
      servers: { fx: upstreams.fixture('--resources', '3') },
      stdio: { principal: 'erin', roles: ['eng'] },
      policy: POLICY,
      audit: { file: auditFile },
    });
    const N = 25;
    for (let i = 0; i < N; i++) await proxy.client.readResource({ uri: `fx+fixture://res/${i % 2}` });
    const hostile = 'fx+fixture://res/9\n{"forged":true}\u2028x';
    expect(await rpcError(proxy.client.readResource({ uri: hostile }))).toEqual(notFound(hostile));
    expect(await rpcError(proxy.client.readResource({ uri: 'fx+fixture://res/2' }))).toEqual(notFound('fx+fixture://res/2'));
    process.kill(proxy.pid, 'SIGKILL');
    await proxy.closed;
    const lines = readFileSync(auditFile, 'utf8').split('\n').filter(Boolean);
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const reads = records.filter((r) => r.method === 'resources/read');
    expect(reads.length).toBe(N + 2);
    expect(reads.slice(0, N).every((r) => r.outcome === 'ok' && r.principal === 'erin' && r.transport === 'stdio' && r.decision === 'allow')).toBe(true);
    expect(reads[N]).toMatchObject({ uri: hostile, decision: 'deny', rule: 'invalid-uri', outcome: 'denied' }); // control characters: refused outright
    expect(reads[N + 1]).toMatchObject({ uri: 'fx+fixture://res/2', decision: 'deny', rule: 'no-res-2', outcome: 'denied' });
    expect(lines.some((l) => l.includes('\u2028'))).toBe(false); // escaped: the line cannot be split
    const verify = await runCli(['audit', 'verify', auditFile]);
    expect(verify.exitCode).toBe(0);
    expect(String(verify.stdout)).toMatch(new RegExp(`verified ${records.length} records`));
    await proxy[Symbol.asyncDispose]();
  });
});

describe('two principals on one HTTP gateway', () => {
  it('each sees exactly what policy allows, reads and subscriptions interleaved; a cached entry read by one never reaches the other', async () => {
    using dir = new TempDir();
    const config = dir.writeConfig({
      servers: { fx: upstreams.fixture('--resources', '3', '--subscribe') },
      auth: {
        tokens: [
          { principal: 'erin', roles: ['eng'], token: 'erin-token-0123456789' },
          { principal: 'olga', roles: ['ops'], token: 'olga-token-0123456789' },
        ],
      },
      policy: POLICY,
      cache: { ttlMs: 60_000 },
      subscriptions: { coalesceMs: 0 },
    });
    const gw = await HttpGatewayProcess.serve(config);
    try {
      const { url } = gw;
      const connect = async (token: string) => {
        const client = new Client({ name: 'c', version: '1' });
        await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
        return client;
      };
      const erin = await connect('erin-token-0123456789');
      const olga = await connect('olga-token-0123456789');
      const uris = async (c: Client) => (await c.listResources()).resources.map((r) => r.uri).filter((u) => u.startsWith('fx+fixture://res/'));
      expect(await uris(erin)).toEqual(['fx+fixture://res/0', 'fx+fixture://res/1']);
      expect(await uris(olga)).toEqual(['fx+fixture://res/1']);
      // erin caches res/0; olga may not read it, cache or not.
      await erin.readResource({ uri: 'fx+fixture://res/0' });
      expect(await rpcError(olga.readResource({ uri: 'fx+fixture://res/0' }))).toEqual(notFound('fx+fixture://res/0'));
      await olga.readResource({ uri: 'fx+fixture://res/1' });
      // Subscriptions interleaved: the ticker update reaches olga (allowed) and erin (eng).
      const heard = (c: Client) => new Promise<string>((resolve) => c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params.uri)));
      const [erinHeard, olgaHeard] = [heard(erin), heard(olga)];
      await olga.subscribeResource({ uri: 'fx+fixture://ticker' });
      await erin.subscribeResource({ uri: 'fx+fixture://ticker' });
      expect(await rpcError(olga.subscribeResource({ uri: 'fx+fixture://res/0' }))).toEqual(notFound('fx+fixture://res/0'));
      await erin.readResource({ uri: 'fx+fixture://control/tick?n=1' });
      expect(await within(olgaHeard, 'olga’s update')).toBe('fx+fixture://ticker');
      expect(await within(erinHeard, 'erin’s update')).toBe('fx+fixture://ticker');
      await Promise.all([erin.close(), olga.close()]);
    } finally {
      expect(await gw.stop()).toBe(0);
      await gw[Symbol.asyncDispose]();
    }
  });
});

describe('reload', () => {
  it('SIGHUP reloads the policy without dropping the session; a file that does not load keeps the running one', async () => {
    using _dir = new TempDir();
    const base = { servers: { fx: upstreams.fixture('--resources', '3') }, stdio: { principal: 'erin', roles: ['eng'] } };
    const proxy = await ProxyProcess.start({ ...base, policy: POLICY }, { logLevel: 'info' });
    try {
      const file = proxy.configFile;
      await proxy.client.readResource({ uri: 'fx+fixture://res/0' });
      writeFileSync(file, JSON.stringify({ ...base, policy: { default: 'deny', rules: [{ id: 'only-1', effect: 'allow', resources: ['fixture://res/1'] }] } }));
      process.kill(proxy.pid, 'SIGHUP');
      await proxy.waitForLog((r) => r.msg === 'configuration reloaded');
      expect(await rpcError(proxy.client.readResource({ uri: 'fx+fixture://res/0' }))).toEqual(notFound('fx+fixture://res/0'));
      await proxy.client.readResource({ uri: 'fx+fixture://res/1' }); // same session, new rules
      writeFileSync(file, '{ "servers": ');
      process.kill(proxy.pid, 'SIGHUP');
      await proxy.waitForLog((r) => r.msg === 'configuration not reloaded: keeping the running one');
      await proxy.client.readResource({ uri: 'fx+fixture://res/1' });
      expect(await rpcError(proxy.client.readResource({ uri: 'fx+fixture://res/0' }))).toEqual(notFound('fx+fixture://res/0'));
    } finally {
      await proxy[Symbol.asyncDispose]();
    }
  });

  it('--watch reloads when the config file changes', async () => {
    const base = { servers: { fx: upstreams.fixture('--resources', '3') }, stdio: { principal: 'erin', roles: ['eng'] } };
    const proxy = await ProxyProcess.start({ ...base, policy: POLICY }, { logLevel: 'info', args: ['--watch'] });
    try {
      await proxy.client.readResource({ uri: 'fx+fixture://res/0' });
      writeFileSync(proxy.configFile, JSON.stringify({ ...base, policy: { default: 'deny', rules: [] } }));
      await proxy.waitForLog((r) => r.msg === 'configuration reloaded' && r.why === 'file changed');
      expect(await rpcError(proxy.client.readResource({ uri: 'fx+fixture://res/0' }))).toEqual(notFound('fx+fixture://res/0'));
    } finally {
      await proxy[Symbol.asyncDispose]();
    }
  });
});
