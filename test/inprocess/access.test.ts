// Access policy, rate limits and audit through the whole proxy: no leak on any path, decide() agrees with every answer, one record per decision.
import { describe, expect, it } from 'vitest';
import { PASS } from '../helpers/passthrough.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { compilePolicy, type PolicyAction } from '../../src/access/policy.js';
import { parseConfig } from '../../src/config/load.js';
import { createUpstreamServer } from '../helpers/upstream-server.mjs';
import { startHarness } from '../helpers/harness.js';
import { rpcError } from '../helpers/rpc-error.js';
import { within } from '../helpers/gate.js';
import { memoryAudit } from '../helpers/memory-audit.js';

const text = (uri: string, body = `body of ${uri}`) => ({ contents: [{ uri, mimeType: 'text/plain', text: body }] });

const DOCS = ['file:///handbook/a.md', 'file:///handbook/b.md', 'file:///secrets/keys.txt', 'file:///secrets/plan.md', 'file:///public/readme.md'];
const policy = {
  default: 'deny',
  rules: [
    { id: 'eng-handbook', effect: 'allow', roles: ['eng'], servers: ['docs'], resources: ['file:///handbook/**', 'file:///public/**'] },
    { id: 'everyone-public', effect: 'allow', resources: ['docs+file:///public/**'], actions: ['list', 'read'] },
    { id: 'no-secrets', effect: 'deny', resources: ['file:///secrets/**'] },
    { id: 'admin', effect: 'allow', principals: ['root'] },
  ],
};
const ALICE = { principal: 'alice', roles: ['eng'], transport: 'stdio' as const };
const MALLORY = { principal: 'mallory', roles: [], transport: 'stdio' as const };

async function gateway(extra: Record<string, unknown> = {}) {
  const audit = memoryAudit();
  const docs = createUpstreamServer({
    subscribe: true,
    resources: DOCS.map((uri) => ({ uri, name: uri.split('/').pop()! })),
    templates: [
      { uriTemplate: 'file:///handbook/{name}', name: 'handbook page' },
      { uriTemplate: 'file:///secrets/{name}', name: 'secret' },
    ],
    read: (u) => (DOCS.includes(u) ? text(u) : undefined),
    complete: () => ['a.md', '../secrets/keys.txt', 'b.md'],
  });
  const h = await startHarness({
    upstreams: { docs: () => docs.server },
    config: { policy, subscriptions: { coalesceMs: 0 }, cache: { ttlMs: 60_000 }, ...extra },
    audit,
  });
  return { h, docs, audit };
}

describe('access policy through the proxy', () => {
  it('a denied URI leaks nowhere: lists, templates, completion, notifications, errors (byte for byte a missing one), logs', async () => {
    const { h, docs, audit } = await gateway();
    await using _h = h;
    const mallory = await h.client(MALLORY);
    const alice = await h.client(ALICE);
    const denied = ['file:///handbook/a.md', 'file:///handbook/b.md', 'file:///secrets/keys.txt', 'file:///secrets/plan.md'];

    const list = await mallory.listResources();
    expect(list.resources.map((r) => r.uri)).toEqual(['docs+file:///public/readme.md']);
    expect((await alice.listResources()).resources.map((r) => r.uri)).toEqual([
      'docs+file:///handbook/a.md',
      'docs+file:///handbook/b.md',
      'docs+file:///public/readme.md',
    ]);
    const templates = await mallory.listResourceTemplates();
    expect(templates.resourceTemplates).toEqual([]);
    expect((await alice.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual(['docs+file:///handbook/{name}']);

    // Denied reads are answered exactly like a URI that does not exist, with no upstream call.
    const readsBefore = docs.stats.reads.size;
    for (const uri of denied) {
      const deniedError = await rpcError(mallory.readResource({ uri: `docs+${uri}` }));
      const missingError = await rpcError(mallory.readResource({ uri: `docs+${uri}.missing` }));
      expect(JSON.stringify(deniedError).replace(`docs+${uri}`, 'X')).toBe(JSON.stringify(missingError).replace(`docs+${uri}.missing`, 'X'));
      expect(deniedError).toEqual({ code: -32002, message: 'MCP error -32002: Resource not found', data: { uri: `docs+${uri}` } });
    }
    expect(docs.stats.reads.size).toBe(readsBefore);
    expect(await rpcError(mallory.subscribeResource({ uri: 'docs+file:///secrets/keys.txt' }))).toMatchObject({ code: -32002 });

    // Completion: the secrets template is refused like a missing one; alice's values that expand to a denied URI are dropped.
    expect(
      await rpcError(alice.complete({ ref: { type: 'ref/resource', uri: 'docs+file:///secrets/{name}' }, argument: { name: 'name', value: '' } })),
    ).toMatchObject({
      code: -32002,
    });
    const values = await alice.complete({ ref: { type: 'ref/resource', uri: 'docs+file:///handbook/{name}' }, argument: { name: 'name', value: '' } });
    expect(values.completion.values).toEqual(['a.md', 'b.md']);

    // Notifications: alice subscribed before a reload revokes her; the update after it is suppressed.
    const aliceGot: string[] = [];
    let heard: () => void = () => undefined;
    alice.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      aliceGot.push(n.params.uri);
      heard();
    });
    await alice.subscribeResource({ uri: 'docs+file:///handbook/a.md' });
    let next = new Promise<void>((r) => (heard = r));
    await docs.server.sendResourceUpdated({ uri: 'file:///handbook/a.md' });
    await within(next, 'the allowed update');
    h.proxy.reload(parseConfig({ servers: { docs: { command: 'inmemory:docs' } }, policy: { default: 'deny', rules: [] } }, { env: {} }));
    await docs.server.sendResourceUpdated({ uri: 'file:///handbook/a.md' });
    await expect.poll(() => audit.entries.filter((e) => e.method === 'notifications/resources/updated').map((e) => e.outcome)).toEqual(['ok', 'denied']);
    expect(aliceGot).toEqual(['docs+file:///handbook/a.md']);

    // The reasons are only in the audit log; the operational log at info and above never names a denied URI.
    const infoAndUp = h.logs.filter((r) => (r.level as number) >= 30).map((r) => JSON.stringify(r));
    for (const uri of denied) expect(infoAndUp.join('\n')).not.toContain(uri);
    const deniedRecords = audit.entries.filter((e) => e.outcome === 'denied' && e.caller.principal === 'mallory');
    expect(deniedRecords.map((e) => e.rule)).toContain('no-secrets');
    next = Promise.resolve();
  });

  it('randomised: 10,000 decisions through a real client agree with decide() evaluated directly', async () => {
    let seed = Number(process.env.FUZZ_SEED ?? 0x5eed);
    const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const uris = [
      'file:///a/x.md',
      'file:///a/b/y.md',
      'file:///c/z.txt',
      'file:///a/../c/z.txt',
      'file:///a/%2e%2e/c/z.txt',
      'memo:one',
      'memo:two/three',
      'FILE:///a/x.md',
    ];
    const patterns = ['file:///a/**', 'file:///a/*', 'file:///c/*.txt', 'memo:**', 'memo:*', 'docs+file:///**', '**', 'file:///?/x.md'];
    const principals = ['p1', 'p2', 'p3'];
    const roles = ['r1', 'r2'];
    const upstream = createUpstreamServer({ subscribe: true, resources: uris.map((uri) => ({ uri, name: uri })), read: (u) => text(u) });
    const base = { servers: { docs: { command: 'inmemory:docs' } } };
    await using h = await startHarness({ upstreams: { docs: () => upstream.server }, config: { policy: { rules: [] } } });
    const clients = new Map(
      await Promise.all(principals.map(async (p) => [p, await h.client({ principal: p, roles: [p === 'p1' ? 'r1' : 'r2'], transport: 'stdio' })] as const)),
    );
    let trials = 0;
    let mismatches = 0;
    const randomRule = (i: number) => ({
      id: `r${i}`,
      effect: rand() < 0.65 ? 'allow' : 'deny',
      ...(rand() < 0.3 ? { principals: [pick(principals)] } : {}),
      ...(rand() < 0.3 ? { roles: [pick(roles)] } : {}),
      ...(rand() < 0.8 ? { resources: [pick(patterns), ...(rand() < 0.3 ? [pick(patterns)] : [])] } : {}),
      ...(rand() < 0.5 ? { actions: [pick(['list', 'read', 'subscribe'] as const), ...(rand() < 0.5 ? ['read'] : [])] } : {}),
    });
    for (let set = 0; set < 40; set++) {
      const config = parseConfig(
        { ...base, policy: { default: pick(['allow', 'deny']), rules: Array.from({ length: 1 + Math.floor(rand() * 5) }, (_, i) => randomRule(i)) } },
        { env: {} },
      );
      h.proxy.reload(config);
      const reference = compilePolicy(config.policy, new Set(['docs']));
      for (const principal of principals) {
        const who = { principal, roles: [principal === 'p1' ? 'r1' : 'r2'] };
        const client = clients.get(principal)!;
        const listed = new Set((await client.listResources()).resources.map((r) => r.uri));
        for (const uri of uris) {
          trials++;
          if (listed.has(`docs+${uri}`) !== reference.decide(who, 'list', 'docs', uri, 'issued').allow) mismatches++;
        }
        for (let k = 0; k < 80; k++) {
          const uri = pick(uris);
          const action: PolicyAction = pick(['read', 'subscribe'] as const);
          const expected = reference.decide(who, action, 'docs', uri, 'issued').allow; // listed: read as the upstream spelled it
          const call = action === 'read' ? client.readResource({ uri: `docs+${uri}` }) : client.subscribeResource({ uri: `docs+${uri}` });
          const got = await call.then(
            () => true,
            // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- rethrows the SDK's error unchanged
            (e: { code: number }) => (e.code === -32002 ? false : Promise.reject(e)),
          );
          trials++;
          if (got !== expected) mismatches++;
        }
      }
    }
    expect(trials).toBeGreaterThanOrEqual(10_000);
    expect(mismatches).toBe(0);
  });

  it('a cached read by one principal reaches another only when policy allows both', async () => {
    const { h, docs } = await gateway();
    await using _h = h;
    const alice = await h.client(ALICE);
    const mallory = await h.client(MALLORY);
    await alice.readResource({ uri: 'docs+file:///handbook/a.md' });
    expect(await rpcError(mallory.readResource({ uri: 'docs+file:///handbook/a.md' }))).toMatchObject({ code: -32002 });
    await mallory.readResource({ uri: 'docs+file:///public/readme.md' });
    await alice.readResource({ uri: 'docs+file:///public/readme.md' }); // a hit, allowed for both
    expect(docs.stats.reads.get('file:///public/readme.md')).toBe(1);
  });

  it('rate limits per principal (every read counts, denied ones too); another principal is not slowed', async () => {
    let now = 1_000;
    const audit = memoryAudit();
    const docs = createUpstreamServer({ resources: [], read: (u) => text(u) });
    await using h = await startHarness({
      upstreams: { docs: () => docs.server },
      config: { limits: [{ principals: ['mallory'], readsPerMinute: 60, burst: 3 }] },
      audit,
      now: () => now,
    });
    const mallory = await h.client(MALLORY);
    const mallory2 = await h.client(MALLORY); // another session of the same principal shares the bucket
    const alice = await h.client(ALICE);
    await mallory.readResource({ uri: 'docs+x://1' });
    await rpcError(mallory.readResource({ uri: 'nobody+x://2' })); // not found, but it counts
    await mallory2.readResource({ uri: 'docs+x://3' });
    const limited = await rpcError(mallory.readResource({ uri: 'docs+x://4' }));
    expect(limited).toMatchObject({ code: -32000, data: { retryAfterMs: 1000 } });
    expect(limited.message).toContain('Rate limit exceeded');
    for (let i = 0; i < 10; i++) await alice.readResource({ uri: `docs+x://a${i}` }); // alice is unlimited
    now += 1_000;
    await mallory.readResource({ uri: 'docs+x://5' });
    expect(audit.entries.filter((e) => e.outcome === 'rate_limited').map((e) => e.caller.principal)).toEqual(['mallory']);
  });

  it('N accesses make exactly N audit records with their fields, cache hits included', async () => {
    const { h, audit } = await gateway();
    await using _h = h;
    const alice = await h.client(ALICE);
    await alice.listResources();
    await alice.readResource({ uri: 'docs+file:///handbook/a.md' });
    await alice.readResource({ uri: 'docs+file:///handbook/a.md' });
    await rpcError(alice.readResource({ uri: 'docs+file:///secrets/plan.md' }));
    await alice.subscribeResource({ uri: 'docs+file:///handbook/b.md' });
    await alice.unsubscribeResource({ uri: 'docs+file:///handbook/b.md' });
    const records = audit.entries.map((e) => ({ method: e.method, uri: e.uri, decision: e.decision, rule: e.rule, outcome: e.outcome, cache: e.cache }));
    expect(records).toEqual([
      { method: 'resources/list', uri: undefined, decision: 'allow', rule: 'per-item', outcome: 'ok', cache: undefined },
      { method: 'resources/read', uri: 'docs+file:///handbook/a.md', decision: 'allow', rule: 'eng-handbook', outcome: 'ok', cache: 'miss' },
      { method: 'resources/read', uri: 'docs+file:///handbook/a.md', decision: 'allow', rule: 'eng-handbook', outcome: 'ok', cache: 'hit' },
      { method: 'resources/read', uri: 'docs+file:///secrets/plan.md', decision: 'deny', rule: 'no-secrets', outcome: 'denied', cache: undefined },
      { method: 'resources/subscribe', uri: 'docs+file:///handbook/b.md', decision: 'allow', rule: 'eng-handbook', outcome: 'ok', cache: undefined },
      { method: 'resources/unsubscribe', uri: 'docs+file:///handbook/b.md', decision: 'allow', rule: 'default', outcome: 'ok', cache: undefined },
    ]);
    expect(audit.entries[0]).toMatchObject({ returned: 3, filtered: 2, caller: { principal: 'alice', roles: ['eng'], transport: 'stdio' } });
    expect(audit.entries[1]).toMatchObject({ server: 'docs', upstreamUri: 'file:///handbook/a.md', bytes: expect.any(Number) });
  });

  it('a 2026 listen treats a denied URI exactly as an unknown one, and its results are private', async () => {
    const { h } = await gateway();
    await using _h = h;
    const alice = await h.modernClient(ALICE);
    const sub = await alice.listen({ resourceSubscriptions: ['docs+file:///handbook/a.md', 'docs+file:///secrets/keys.txt', 'nobody+x://1'] });
    expect(sub.honoredFilter.resourceSubscriptions).toEqual(['docs+file:///handbook/a.md']);
    await sub.close();
    const list = (await alice.request({ method: 'resources/list', params: {} } as never, PASS as never)) as { cacheScope: string };
    expect(list.cacheScope).toBe('private');
  });
});
