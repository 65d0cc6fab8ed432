// One canonical URI per request, through a real client and upstream: what is decided is what is forwarded; refused spellings never leave; issued ones stay readable.
import { describe, expect, it } from 'vitest';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { normalizeUri } from '../../src/uri/normalize-uri.js';
import { compilePolicy } from '../../src/access/policy.js';
import { parseConfig } from '../../src/config/load.js';
import { createUpstreamServer } from '../helpers/upstream-server.mjs';
import { startHarness } from '../helpers/harness.js';
import { rpcError } from '../helpers/rpc-error.js';
import { memoryAudit } from '../helpers/memory-audit.js';

const ALICE = { principal: 'alice', roles: ['eng'], transport: 'stdio' as const };
const POLICY = {
  default: 'allow' as const,
  rules: [
    { id: 'no-secrets', effect: 'deny' as const, resources: ['file:///secrets/**'] },
    { id: 'no-prive', effect: 'deny' as const, resources: ['file:///prive\u0301/**'] }, // written in NFD
    { id: 'no-admin', effect: 'deny' as const, resources: ['https://h.example/admin/**'] },
  ],
};

/** A seeded generator of URIs: mixed case, escapes, dot segments, authorities, NFC and NFD, queries and fragments. */
function uriGenerator(seed: number) {
  const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const heads = [
    'file:///',
    'FILE:///',
    'file://localhost/',
    'file://LOCALHOST/',
    'file://%6cocalhost/',
    'file:/',
    'file:',
    'file://evil/',
    'file:////',
    'https://h.example/',
    'HTTPS://H.Example:443/',
    'https://h.example:8443/',
    'http:h.example/',
    'memo:',
  ];
  const segments = [
    'public',
    'secrets',
    'SECRETS',
    '%73ecrets',
    's%65crets',
    'priv\u00e9',
    'prive\u0301',
    'priv%C3%A9',
    'prive%CC%81',
    'admin',
    '%61dmin',
    '.',
    '..',
    '%2e',
    '%2E%2e',
    '.%2e',
    'a.txt',
    'k%65y.txt',
    '',
    'x%2fy',
    'b%20c',
    'a\\b',
    'x%00',
    '%252e',
    'q%3Fx',
    '~u',
    '%7Eu',
  ];
  const tails = ['', '', '', '?x=1', '?/../..', '?%2e%2e', '#/../secrets', '#frag', '?a=%2F', '?v=1.2'];
  return () => {
    const n = 1 + Math.floor(rand() * 4);
    return pick(heads) + Array.from({ length: n }, () => pick(segments)).join('/') + pick(tails);
  };
}

describe('one canonical URI per request', () => {
  it('randomised: for 10,000 URIs the decision on the canonical form is the decision on what the upstream received, and refused spellings never leave', async () => {
    const received: string[] = [];
    const upstream = createUpstreamServer({
      resources: [{ uri: 'file:///public/a.txt', name: 'a' }],
      read: (uri) => {
        received.push(uri);
        if (uri === 'file:///missing') throw new McpError(-32002, 'Resource not found', { uri });
        return { contents: [{ uri, mimeType: 'text/plain', text: `content of ${uri}` }] };
      },
    });
    const audit = memoryAudit();
    await using h = await startHarness({ upstreams: { docs: () => upstream.server }, config: { policy: POLICY }, audit });
    const client = await h.client(ALICE);
    const reference = compilePolicy(parseConfig({ servers: { docs: { command: 'inmemory:docs' } }, policy: POLICY }, { env: {} }).policy, new Set(['docs']));
    const missing = await rpcError(client.readResource({ uri: 'docs+file:///missing' }));
    const notFound = (uri: string) => ({ ...missing, data: { uri } });
    received.length = 0;

    const next = uriGenerator(Number(process.env.FUZZ_SEED ?? 14));
    const counts = { refused: 0, denied: 0, allowed: 0 };
    for (let i = 0; i < 10_000; i++) {
      const uri = next();
      const federated = `docs+${uri}`;
      const canonical = normalizeUri(uri);
      const before = received.length;
      const got = await client.readResource({ uri: federated }).then(
        (r) => ({ ok: true as const, text: (r.contents[0] as { text: string }).text }),
        (e: unknown) => ({ ok: false as const, error: e }),
      );
      const sent = received.slice(before);
      const record = audit.entries.at(-1)!;
      expect(record.uri).toBe(federated);
      if (!canonical.ok) {
        counts.refused++;
        expect(sent, uri).toEqual([]);
        expect(got.ok, uri).toBe(false);
        expect(await rpcError(Promise.reject((got as { error: unknown }).error))).toEqual(notFound(federated));
        expect(record.rule).toBe('invalid-uri');
        continue;
      }
      const decision = reference.decide(ALICE, 'read', 'docs', canonical.uri);
      if (decision.allow) {
        counts.allowed++;
        expect(sent, uri).toEqual([canonical.uri]); // what was decided is what the upstream received
        expect(reference.decide(ALICE, 'read', 'docs', sent[0]!).allow).toBe(true);
        expect(got, uri).toEqual({ ok: true, text: `content of ${canonical.uri}` });
        expect(record.upstreamUri).toBe(canonical.uri);
      } else {
        counts.denied++;
        expect(sent, uri).toEqual([]);
        expect(await rpcError(Promise.reject((got as { error: unknown }).error))).toEqual(notFound(federated));
        expect(record).toMatchObject({ decision: 'deny', upstreamUri: canonical.uri });
      }
    }
    expect(counts.refused).toBeGreaterThan(1000);
    expect(counts.denied).toBeGreaterThan(500);
    expect(counts.allowed).toBeGreaterThan(1000);
  }, 180_000); // 10,000 sequential reads: about 10 s alone, far more on a loaded machine

  it('a URI the upstream gave out reads as listed even where a client spelling would be refused; the same spelling not given out is not found with no upstream round trip', async () => {
    const odd = ['file:///public/dir/../a.txt', 'file://host/public/b.txt', 'file:///public/c.txt?/../x', 'FILE:///public/d.txt'];
    const received: string[] = [];
    const upstream = createUpstreamServer({
      resources: odd.map((uri) => ({ uri, name: uri })),
      read: (uri) => {
        received.push(uri);
        return { contents: [{ uri: uri === odd[0] ? 'file:///public/e\\f' : uri, mimeType: 'text/plain', text: `content of ${uri}` }] };
      },
    });
    await using h = await startHarness({
      upstreams: { docs: () => upstream.server },
      config: { policy: { default: 'allow', rules: [{ id: 'no-secrets', effect: 'deny', resources: ['file:///secrets/**'] }] } },
    });
    const client = await h.client(ALICE);
    // Not yet given out: refused (dot segments, a foreign file authority, a query escape) without reaching the upstream.
    for (const uri of odd.slice(0, 3)) expect((await rpcError(client.readResource({ uri: `docs+${uri}` }))).code).toBe(-32002);
    expect(received).toEqual([]);
    const listed = (await client.listResources()).resources.map((r) => r.uri);
    expect(listed).toEqual(odd.map((u) => `docs+${u}`));
    for (const uri of odd) expect((await client.readResource({ uri: `docs+${uri}` })).contents[0]).toMatchObject({ text: `content of ${uri}` });
    expect(received).toEqual(odd); // forwarded exactly as listed
    // A URI named in a read's contents is given out too.
    expect((await client.readResource({ uri: 'docs+file:///public/e\\f' })).contents[0]).toMatchObject({ text: 'content of file:///public/e\\f' });
    // Another spelling of a listed URI is still only a client's spelling.
    expect((await rpcError(client.readResource({ uri: 'docs+file:///public/dir/./../a.txt' }))).code).toBe(-32002);
    // A listed spelling is still decided by policy, on its canonical form.
    expect(received.at(-1)).toBe('file:///public/e\\f');
  });

  it('a listed URI that resolves into a denied folder is denied, exactly as a missing one', async () => {
    const received: string[] = [];
    const upstream = createUpstreamServer({
      resources: [{ uri: 'file:///public/../secrets/k', name: 'k' }],
      read: (uri) => {
        received.push(uri);
        return { contents: [{ uri, mimeType: 'text/plain', text: 'SECRET' }] };
      },
    });
    await using h = await startHarness({
      upstreams: { docs: () => upstream.server },
      config: { policy: { default: 'allow', rules: [{ id: 'no-secrets', effect: 'deny', resources: ['file:///secrets/**'] }] } },
    });
    const client = await h.client(ALICE);
    expect((await client.listResources()).resources).toEqual([]); // hidden from the list
    const uri = 'docs+file:///public/../secrets/k';
    expect(await rpcError(client.readResource({ uri }))).toMatchObject({ code: -32002, data: { uri } });
    expect(received).toEqual([]);
  });

  it('subscribe, unsubscribe, a 2026 listen and a completion ref each reach the upstream in the one canonical form, or not at all', async () => {
    const completed: string[] = [];
    const upstream = createUpstreamServer({
      subscribe: true,
      resources: [{ uri: 'file:///public/a.txt', name: 'a' }],
      templates: [{ uriTemplate: 'file:///public/{name}', name: 'files' }],
      complete: (params) => {
        completed.push(params.ref.uri ?? '');
        return ['a.txt', '../secrets/k'];
      },
    });
    await using h = await startHarness({
      upstreams: { docs: () => upstream.server },
      config: { policy: { default: 'allow', rules: [{ id: 'no-secrets', effect: 'deny', resources: ['file:///secrets/**'] }] } },
    });
    const client = await h.client(ALICE);
    await client.subscribeResource({ uri: 'docs+FILE://LocalHost/public/%61.txt' });
    expect(upstream.stats.subscribes).toEqual(['file:///public/a.txt']);
    expect((await rpcError(client.subscribeResource({ uri: 'docs+file:///public/x?/../../secrets/k' }))).code).toBe(-32002);
    expect((await rpcError(client.subscribeResource({ uri: 'docs+file:/secrets/k' }))).code).toBe(-32002); // canonical, then denied
    expect(upstream.stats.subscribes).toEqual(['file:///public/a.txt']);
    await client.unsubscribeResource({ uri: 'docs+file:/public/a.txt' }); // another spelling of the same canonical URI
    expect(upstream.stats.unsubscribes).toEqual(['file:///public/a.txt']);

    const modern = await h.modernClient(ALICE);
    const sub = await modern.listen({
      resourceSubscriptions: ['docs+FILE:///public/a.txt', 'docs+file:///public/%2e%2e/secrets/k', 'docs+file://localhost/secrets/k'],
    });
    expect(sub.honoredFilter.resourceSubscriptions).toEqual(['docs+file:///public/a.txt']); // acknowledged as held
    await sub.close();

    const complete = (uri: string) =>
      client.complete({ ref: { type: 'ref/resource', uri }, argument: { name: 'name', value: '' } }).then((r) => r.completion.values);
    expect(await complete('docs+file:///public/{name}')).toEqual(['a.txt']); // the value that would climb out is dropped
    expect((await rpcError(complete('docs+file:///public/../{name}'))).code).toBe(-32002);
    expect((await rpcError(complete('docs+file://evil/{name}'))).code).toBe(-32002);
    expect(completed).toEqual(['file:///public/{name}']);
  });

  it('the cache is keyed by the canonical form: every spelling of one resource is one entry and one upstream read; the audit names it', async () => {
    const received: string[] = [];
    const upstream = createUpstreamServer({
      resources: [{ uri: 'file:///public/a.txt', name: 'a' }],
      read: (uri) => {
        received.push(uri);
        return { contents: [{ uri, mimeType: 'text/plain', text: 'a' }] };
      },
    });
    const audit = memoryAudit();
    await using h = await startHarness({ upstreams: { docs: () => upstream.server }, config: { cache: { ttlMs: 60_000 } }, audit });
    const client = await h.client(ALICE);
    const spellings = ['file:///public/a.txt', 'FILE:///public/a.txt', 'file://localhost/public/a.txt', 'file:/public/%61.txt', 'file:public/a%2Etxt'];
    for (const uri of spellings)
      expect((await client.readResource({ uri: `docs+${uri}` })).contents[0]).toMatchObject({ uri: 'docs+file:///public/a.txt', text: 'a' });
    expect(received).toEqual(['file:///public/a.txt']);
    expect(h.proxy.cache?.size).toBe(1);
    const reads = audit.entries.filter((e) => e.method === 'resources/read');
    expect(reads.map((e) => e.upstreamUri)).toEqual(spellings.map(() => 'file:///public/a.txt'));
    expect(reads.map((e) => e.cache)).toEqual(['miss', 'hit', 'hit', 'hit', 'hit']);
  });
});
