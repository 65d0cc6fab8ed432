// Tools and prompts under policy, rate limits and audit, through the built CLI: deny looks exactly like unknown, a denied call never reaches its upstream, randomized trials against decide(), records that survive SIGKILL.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ROOT, runCli, type StdioUpstream } from '../helpers/built-cli.js';
import { within } from '../helpers/gate.js';
import { HttpGatewayProcess } from '../helpers/http-gateway.js';
import { rpcError } from '../helpers/rpc-error.js';
import { ProxyProcess } from '../helpers/sdk-clients.js';
import { TempDir } from '../helpers/temp-dir.js';
import { rawCli } from '../helpers/cli-stdio.js';
import { compilePolicy } from '../../src/access/policy.js';
import { PolicySchema } from '../../src/config/schema.js';
import { canonicalize } from '../../src/audit/jcs.js';
import { prng } from '../helpers/prng.js';

const TOOLS_FIXTURE = path.join(ROOT, 'test', 'fixtures', 'tools-server.mjs');
const tools = (name: string, log: string, ...extra: string[]): StdioUpstream => ({
  command: process.execPath,
  args: [TOOLS_FIXTURE, '--name', name, '--log', log, ...extra],
});
const lines = (file: string) => {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
};
const records = (file: string) => lines(file).map((l) => JSON.parse(l) as Record<string, unknown>);
const sha256 = (args: unknown) => createHash('sha256').update(canonicalize(args)).digest('hex');

const POLICY = {
  default: 'deny',
  rules: [
    { id: 'read-only', effect: 'allow', roles: ['support'], annotations: { readOnlyHint: true }, actions: ['list', 'call'] },
    { id: 'eng-tools', effect: 'allow', roles: ['eng'], tools: ['fx__*', 'shared'] },
    { id: 'eng-prompts', effect: 'allow', roles: ['eng'], prompts: ['greet'] },
    { id: 'no-write', effect: 'deny', principals: ['erin'], tools: ['write'] },
    { id: 'no-die', effect: 'deny', tools: ['die', 'fx__hang'] },
  ],
};

describe('tools under policy and audit (stdio, raw wire)', () => {
  it('answers a denied tool byte for byte as an unknown one, never calls the upstream, and records every call, denial and limit', async () => {
    using dir = new TempDir();
    const auditFile = dir.file('audit.jsonl');
    const upstreamLog = dir.file('fx.log');
    await using wire = rawCli(
      {
        servers: { fx: tools('fx', upstreamLog) },
        stdio: { principal: 'erin', roles: ['eng'] },
        policy: POLICY,
        audit: { file: auditFile },
        limits: { calls: [{ principals: ['erin'], callsPerMinute: 1, burst: 6 }] },
        list: { firstWaitMs: 60_000 },
      },
      { logLevel: 'warn' },
    );
    await wire.initialize();
    const listed = (await wire.request('tools/list', {})).result?.tools as { name: string }[];
    expect(listed.map((t) => t.name).sort()).toEqual(
      ['fx__announce', 'fx__echo', 'fx__fail', 'fx__progress', 'fx__structured', 'fx__text', 'fx__chatty'].sort(),
    );
    // Denied (fx__write: no-write; fx__die: no-die) and unknown names of the same length: the same bytes but for the name.
    const raw = async (name: string, id: string) => {
      await wire.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { a: 1 } } });
      await wire.answer(id);
      return wire.lines.find((l) => l.parsed?.id === id)!.raw;
    };
    const denied = await raw('fx__write', 'same');
    const unknown = await raw('fx__wrote', 'same-2');
    expect(denied).toBe('{"jsonrpc":"2.0","id":"same","error":{"code":-32602,"message":"Unknown tool: fx__write"}}');
    expect(unknown.replace('same-2', 'same').replace('fx__wrote', 'fx__write')).toBe(denied);
    const deniedDie = await raw('fx__die', 'd');
    expect(deniedDie).toBe('{"jsonrpc":"2.0","id":"d","error":{"code":-32602,"message":"Unknown tool: fx__die"}}');
    expect(lines(upstreamLog).filter((l) => l.startsWith('call '))).toEqual([]); // no denied call reached it
    // Allowed: ok and tool_error.
    expect((await wire.request('tools/call', { name: 'fx__echo', arguments: { message: 'hi', n: [1, 2] } })).result).toEqual({
      content: [{ type: 'text', text: 'fx:echo:hi' }],
    });
    expect((await wire.request('tools/call', { name: 'fx__fail', arguments: {} })).result).toMatchObject({ isError: true });
    expect((await wire.request('prompts/get', { name: 'fx__greet', arguments: { who: 'x' } })).result).toBeDefined();
    // The bucket (burst 6) is empty now: rate limited, with retryAfterMs, and not sent.
    const limited = await wire.request('tools/call', { name: 'fx__echo', arguments: {} });
    expect(limited.error).toMatchObject({ code: -32000, message: 'Rate limit exceeded', data: { retryAfterMs: expect.any(Number) } });
    expect(lines(upstreamLog).filter((l) => l.startsWith('call '))).toEqual(['call echo {"message":"hi","n":[1,2]}', 'call fail {}']);

    const calls = records(auditFile).filter((r) => r.method === 'tools/call' || r.method === 'prompts/get');
    expect(calls.map((r) => [r.method, r.name, r.decision, r.rule, r.outcome])).toEqual([
      ['tools/call', 'fx__write', 'deny', 'no-write', 'denied'],
      ['tools/call', 'fx__wrote', 'deny', 'default', 'not_found'],
      ['tools/call', 'fx__die', 'deny', 'no-die', 'denied'],
      ['tools/call', 'fx__echo', 'allow', 'eng-tools', 'ok'],
      ['tools/call', 'fx__fail', 'allow', 'eng-tools', 'tool_error'],
      ['prompts/get', 'fx__greet', 'allow', 'eng-prompts', 'ok'],
      ['tools/call', 'fx__echo', 'deny', 'call-rate-limit', 'rate_limited'],
    ]);
    const echo = calls[3]!;
    expect(echo).toMatchObject({ principal: 'erin', server: 'fx', argumentsSha256: sha256({ message: 'hi', n: [1, 2] }), bytes: expect.any(Number) });
    expect(echo.arguments).toBeUndefined(); // raw arguments only with audit.arguments
    expect(JSON.stringify(records(auditFile))).not.toContain('"hi"');
    const verify = await runCli(['audit', 'verify', auditFile]);
    expect(verify.exitCode).toBe(0);
  });

  it('N answered calls leave N verifiable records after SIGKILL; with audit.arguments the canonical arguments are kept', async () => {
    using dir = new TempDir();
    const auditFile = dir.file('audit.jsonl');
    const proxy = await ProxyProcess.start({
      servers: { fx: tools('fx', dir.file('fx.log')) },
      stdio: { principal: 'erin', roles: ['eng'] },
      policy: POLICY,
      audit: { file: auditFile, arguments: true },
      list: { firstWaitMs: 60_000 },
    });
    const N = 20;
    for (let i = 0; i < N; i++) await proxy.client.callTool({ name: 'fx__echo', arguments: { message: `m${i}`, z: 1, a: 2 } });
    process.kill(proxy.pid, 'SIGKILL');
    await proxy.closed;
    const calls = records(auditFile).filter((r) => r.method === 'tools/call');
    expect(calls.length).toBe(N);
    expect(calls[0]).toMatchObject({ outcome: 'ok', arguments: '{"a":2,"message":"m0","z":1}', argumentsSha256: sha256({ message: 'm0', z: 1, a: 2 }) });
    const verify = await runCli(['audit', 'verify', auditFile]);
    expect(verify.exitCode).toBe(0);
    await proxy[Symbol.asyncDispose]();
  });
});

const TOKENS = { erin: 'erin-token-0123456789abcdef', sam: 'sam-token-0123456789abcdef', olga: 'olga-token-0123456789abcdef' };
const ROLES = { erin: ['eng'], sam: ['support'], olga: [] as string[] };

describe('tools under policy over HTTP', () => {
  it('randomized principals x tools x actions through real clients agree with decide(), with zero mismatches; a reload re-decides and announces list_changed', async () => {
    using dir = new TempDir();
    const gateway = new (class extends HttpGatewayProcess {
      file = '';
      async start(config: unknown) {
        this.file = this.dir.writeConfig(config);
        await this.spawn(this.file);
        return this;
      }
    })();
    const config = (policy: unknown) => ({
      servers: { fx: tools('fx', dir.file('fx.log'), '--tools', 'shared,other'), gh: tools('gh', dir.file('gh.log'), '--tools', 'shared') },
      auth: { tokens: Object.entries(TOKENS).map(([principal, token]) => ({ principal, token, roles: ROLES[principal as keyof typeof ROLES] })) },
      policy,
      list: { firstWaitMs: 60_000 },
      listChanged: { coalesceMs: 0 },
    });
    await gateway.start(config(POLICY));
    await using _g = gateway;
    await within(gateway.started, 'the upstreams to start');
    const clients: Record<string, Client> = {};
    for (const [principal, token] of Object.entries(TOKENS)) {
      const c = new Client({ name: `trial-${principal}`, version: '1' });
      await c.connect(new StreamableHTTPClientTransport(gateway.url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
      clients[principal] = c;
    }
    const policy = compilePolicy(PolicySchema.parse(POLICY), new Set(['fx', 'gh']));
    const catalog = ['echo', 'write', 'text', 'fail', 'shared', 'other', 'die', 'hang'];
    const annotations: Record<string, Record<string, boolean>> = {
      echo: { readOnlyHint: true },
      text: { readOnlyHint: true },
      write: { readOnlyHint: false, destructiveHint: true },
    };
    const random = prng(Number(process.env.TRIAL_SEED ?? 17));
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)] as T;
    let mismatches = 0;
    const seen = { allow: 0, deny: 0 };
    const listed = new Map<string, Set<string>>();
    for (const principal of Object.keys(TOKENS)) {
      const names = new Set<string>();
      let cursor: string | undefined;
      do {
        const page = await clients[principal]!.listTools(cursor ? { cursor } : {});
        for (const t of page.tools) names.add(t.name);
        cursor = page.nextCursor;
      } while (cursor);
      listed.set(principal, names);
    }
    for (let trial = 0; trial < 120; trial++) {
      const principal = pick(Object.keys(TOKENS)) as keyof typeof TOKENS;
      const server = pick(['fx', 'gh']);
      const tool = pick(catalog.filter((t) => server === 'fx' || t !== 'other'));
      const action = pick(['list', 'call'] as const);
      const clientName = `${server}__${tool}`;
      const expected = policy.decideItem({ principal, roles: ROLES[principal] }, action, server, {
        kind: 'tool',
        name: tool,
        clientName,
        annotations: annotations[tool],
      }).allow;
      let actual: boolean;
      if (action === 'list') actual = listed.get(principal)!.has(clientName);
      else {
        const call = clients[principal]!.callTool({ name: clientName, arguments: {} }, undefined, { signal: AbortSignal.timeout(5000) });
        actual = await call.then(
          () => true,
          (e: { code?: number }) => e.code !== -32602, // allowed calls that fail upstream still count as allowed
        );
      }
      if (actual !== expected) mismatches++;
      seen[expected ? 'allow' : 'deny']++;
    }
    expect(mismatches).toBe(0);
    expect(seen.allow).toBeGreaterThan(10); // the trials exercise both answers
    expect(seen.deny).toBeGreaterThan(10);
    expect(lines(dir.file('fx.log')).some((l) => l.startsWith('call die') || l.startsWith('call hang'))).toBe(false);

    // A reload that takes sam's read-only tools away: list_changed for tools, then they are gone.
    const heard = new Promise<void>((resolve) => clients.sam!.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
    expect((await clients.sam!.listTools()).tools.map((t) => t.name)).toContain('fx__echo');
    const narrower = { ...POLICY, rules: POLICY.rules.filter((r) => r.id !== 'read-only') };
    writeFileSync(gateway.file, JSON.stringify(config(narrower)));
    gateway.process.kill('SIGHUP');
    await within(heard, 'tools/list_changed after the reload');
    expect((await clients.sam!.listTools()).tools).toEqual([]);
    expect(await rpcError(clients.sam!.callTool({ name: 'fx__echo', arguments: {} }))).toMatchObject({ code: -32602 });
    for (const c of Object.values(clients)) await c.close().catch(() => undefined);
  });
});
