// End to end: the built CLI federating server-everything, the catalog fixture and server-memory,
// driven by a real SDK Client; every answer is compared with what each upstream says directly.
import { describe, expect, it } from 'vitest';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { type StdioUpstream, upstreams } from '../helpers/built-cli.js';
import { fixtureBlob, fixtureContent, listAll, notFound, ns } from '../helpers/catalog.js';
import { rpcError } from '../helpers/rpc-error.js';
import { DirectClient, ProxyProcess } from '../helpers/sdk-clients.js';
import { disposeAll, suiteResource } from '../helpers/suite.js';
import { TempDir } from '../helpers/temp-dir.js';

const FIXTURE_COUNT = 250;
const FIXTURE_SIZE = 1024;
const MAX_ITEMS_PER_PAGE = 100;

interface Federation extends AsyncDisposable {
  proxy: ProxyProcess;
  /** Direct clients to separately spawned twins of each upstream, by server id. */
  direct: Record<'everything' | 'fixture' | 'memory', DirectClient>;
  ids: readonly ('everything' | 'fixture' | 'memory')[];
}

const federation = suiteResource(async (): Promise<Federation> => {
  const dir = new TempDir();
  const servers: Record<'everything' | 'fixture' | 'memory', StdioUpstream> = {
    everything: upstreams.everything(),
    fixture: upstreams.fixture('--resources', String(FIXTURE_COUNT), '--page-size', '100', '--size', String(FIXTURE_SIZE)),
    memory: upstreams.memory(dir.file('memory.jsonl')),
  };
  const ids = Object.keys(servers) as Federation['ids'];
  const started = await Promise.allSettled([
    ProxyProcess.start({ servers, list: { maxItemsPerPage: MAX_ITEMS_PER_PAGE } }),
    ...ids.map((id) => DirectClient.start(servers[id])),
  ]);
  const values = started.map((s) => (s.status === 'fulfilled' ? s.value : undefined));
  const all = disposeAll(...values, { [Symbol.asyncDispose]: async () => dir[Symbol.dispose]() });
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await all[Symbol.asyncDispose]();
    throw failed.reason;
  }
  const [proxy, everything, fixture, memory] = values as [ProxyProcess, DirectClient, DirectClient, DirectClient];
  return { proxy, direct: { everything, fixture, memory }, ids, [Symbol.asyncDispose]: () => all[Symbol.asyncDispose]() };
});

const client = () => federation().proxy.client;

/** Everything an upstream lists directly, walked to its end. */
async function directList(id: keyof Federation['direct'], kind: 'resources' | 'templates') {
  return (await listAll(federation().direct[id].client, kind)).items;
}

describe('federated lists', () => {
  it('walks resources/list to the end: every upstream item, namespaced, unique, in config order, metadata intact', async () => {
    const { items } = await listAll(client());
    const expected: Record<string, unknown>[] = [];
    for (const id of federation().ids) {
      for (const item of await directList(id, 'resources')) expected.push({ ...item, uri: ns(id, item.uri as string) });
    }
    // Sanity of the upstreams themselves: 7 static documents, 250 + ticker + stats, 1 knowledge graph.
    expect(expected.length).toBe(7 + FIXTURE_COUNT + 2 + 1);
    expect(items).toEqual(expected);
    const uris = items.map((r) => r.uri as string);
    expect(new Set(uris).size).toBe(uris.length);
    const owners = uris.map((u) => u.slice(0, u.indexOf('+')));
    expect(owners.indexOf('fixture')).toBe(owners.lastIndexOf('everything') + 1);
    expect(owners.indexOf('memory')).toBe(owners.lastIndexOf('fixture') + 1);
  });

  it('keeps every metadata field of a fixture item exactly', async () => {
    const { items } = await listAll(client());
    expect(items.find((r) => r.uri === 'fixture+fixture://res/9')).toEqual({
      uri: 'fixture+fixture://res/9',
      name: 'res-9',
      title: 'Resource 9',
      description: 'Fixture blob resource 9',
      mimeType: 'application/octet-stream',
      size: FIXTURE_SIZE,
      annotations: { audience: ['user'], priority: 0.5 },
      _meta: { 'fixture/index': 9 },
    });
  });

  it('pages exactly maxItemsPerPage items, splitting upstream pages, with no _meta when every upstream answered', async () => {
    const { pages } = await listAll(client());
    // 7 + 250 + ticker + stats + 1 = 260 items: everything's 7 and the fixture's first 93; then the
    // fixture's items 93-192 (its pages of 100 split across cursors); then the rest.
    expect(pages.map((p) => p.size)).toEqual([100, 100, 60]);
    expect(pages.map((p) => p.meta)).toEqual([undefined, undefined, undefined]);
    expect(pages.map((p) => p.nextCursor === undefined)).toEqual([false, false, true]);
  });

  it('merges resources/templates/list, namespaced, in config order', async () => {
    const { items } = await listAll(client(), 'templates');
    const expected: Record<string, unknown>[] = [];
    for (const id of federation().ids) {
      for (const t of await directList(id, 'templates')) expected.push({ ...t, uriTemplate: ns(id, t.uriTemplate as string) });
    }
    expect(items).toEqual(expected);
    expect(items.map((t) => t.uriTemplate)).toEqual([
      'everything+demo://resource/dynamic/text/{resourceId}',
      'everything+demo://resource/dynamic/blob/{resourceId}',
      'fixture+fixture://res/{id}',
      'fixture+fixture://item/{category}/{id}',
    ]);
  });
});

describe('reads', () => {
  it.each([
    ['fixture', 'fixture://res/0', 'text'],
    ['fixture', 'fixture://res/9', 'blob'],
    ['fixture', 'fixture://res/249', 'blob'],
    ['fixture', 'fixture://ticker', 'text'],
    ['fixture', 'fixture://item/alpha/1', 'text (template)'],
    ['everything', 'demo://resource/static/document/architecture.md', 'text'],
    ['memory', 'memory://knowledge-graph', 'text'],
  ] as const)('%s %s (%s) reads exactly what the upstream returns, uri namespaced', async (id, uri, _kind) => {
    const direct = await federation().direct[id].client.readResource({ uri });
    const proxied = await client().readResource({ uri: ns(id, uri) });
    expect(direct.contents.length).toBeGreaterThan(0);
    expect(proxied).toEqual({ ...direct, contents: direct.contents.map((c) => ({ ...c, uri: ns(id, c.uri) })) });
  });

  it('returns the fixture’s deterministic text and blob bytes', async () => {
    for (const i of [0, 19]) {
      const uri = `fixture+fixture://res/${i}`;
      expect((await client().readResource({ uri })).contents).toEqual([fixtureContent(uri, i, FIXTURE_SIZE)]);
    }
    const blob = (await client().readResource({ uri: 'fixture+fixture://res/19' })).contents[0] as { blob: string };
    expect(Buffer.from(blob.blob, 'base64').equals(fixtureBlob(19, FIXTURE_SIZE))).toBe(true);
  });

  it('answers every one of 250 concurrent reads with its own resource', async () => {
    const uris = Array.from({ length: FIXTURE_COUNT }, (_, i) => `fixture+fixture://res/${i}`);
    const results = await Promise.all(uris.map((uri) => client().readResource({ uri })));
    const wrong = results.flatMap((r, i) => {
      const expected = [fixtureContent(uris[i]!, i, FIXTURE_SIZE)];
      return JSON.stringify(r.contents) === JSON.stringify(expected) ? [] : [uris[i]];
    });
    expect(wrong).toEqual([]);
  });

  it('reads through a template URI of each upstream', async () => {
    expect(await client().readResource({ uri: 'fixture+fixture://item/alpha/1' })).toEqual({
      contents: [{ uri: 'fixture+fixture://item/alpha/1', mimeType: 'text/plain', text: 'item alpha/1' }],
    });
    const dynamic = await client().readResource({ uri: 'everything+demo://resource/dynamic/text/3' });
    expect(dynamic.contents).toEqual([
      { uri: 'everything+demo://resource/dynamic/text/3', mimeType: 'text/plain', text: expect.stringMatching(/^Resource 3: /) },
    ]);
  });
});

describe('completion', () => {
  it.each([
    ['fixture', 'fixture://item/{category}/{id}', 'category', 'a', ['alpha']],
    ['fixture', 'fixture://item/{category}/{id}', 'category', '', ['alpha', 'beta', 'gamma']],
    ['fixture', 'fixture://item/{category}/{id}', 'id', '2', ['2']],
    ['fixture', 'fixture://item/{category}/{id}', 'category', 'z', []],
    ['everything', 'demo://resource/dynamic/text/{resourceId}', 'resourceId', '1', ['1']],
  ] as const)('%s %s: %s=%j completes like the upstream', async (id, template, name, value, values) => {
    const argument = { name, value };
    const direct = await federation().direct[id].client.complete({ ref: { type: 'ref/resource', uri: template }, argument });
    const proxied = await client().complete({ ref: { type: 'ref/resource', uri: ns(id, template) }, argument });
    expect(direct.completion.values).toEqual(values);
    expect(proxied).toEqual(direct);
  });

  it('answers an empty completion for an upstream without the completions capability', async () => {
    const result = await client().complete({ ref: { type: 'ref/resource', uri: 'memory+memory://{x}' }, argument: { name: 'x', value: '' } });
    expect(result).toEqual({ completion: { values: [], hasMore: false } });
  });
});

describe('errors', () => {
  it.each([
    ['an unknown server id', 'nosuch+fixture://res/0'],
    ['a URI without a namespace', 'fixture://res/0'],
    ['an empty server id', '+fixture://res/0'],
    ['an empty upstream URI', 'fixture+'],
    ['a server id in the wrong case', 'Fixture+fixture://res/0'],
    ['a percent-encoded delimiter', 'fixture%2Bfixture://res/0'],
    ['an upstream -32002 (fixture)', 'fixture+fixture://res/999999'],
    ['an upstream -32002 through a template (fixture)', 'fixture+fixture://item/delta/1'],
    ['an upstream -32602 not-found (server-everything)', 'everything+demo://resource/static/document/nope.md'],
    ['an upstream -32602 not-found (server-memory)', 'memory+memory://nope'],
  ])('reading %s is -32002 Resource not found with the URI as sent', async (_what, uri) => {
    const err = await rpcError(client().readResource({ uri }));
    expect(err).toEqual(notFound(uri));
  });

  it('rejects with an McpError whose message is prefixed exactly once', async () => {
    const err = await client()
      .readResource({ uri: 'fixture+fixture://res/999999' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).message).toBe('MCP error -32002: Resource not found');
  });

  it('completing against an unknown server id is -32002 with the template URI', async () => {
    const uri = 'nosuch+fixture://item/{category}/{id}';
    expect(await rpcError(client().complete({ ref: { type: 'ref/resource', uri }, argument: { name: 'category', value: '' } }))).toEqual(notFound(uri));
  });

  it('completing a reference to a prompt no upstream has is -32602 Unknown prompt', async () => {
    const err = await rpcError(client().complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'x', value: '' } }));
    expect(err).toEqual({ code: -32602, message: 'MCP error -32602: Unknown prompt: greet', data: undefined });
  });

  it.each([
    ['garbage', async () => 'garbage'],
    ['an upstream’s own cursor', async () => Buffer.from('o:100').toString('base64url')],
    ['a truncated cursor', async () => (await firstCursor()).slice(0, -3)],
    ['a cursor with a tampered body', async () => tamper(await firstCursor())],
    ['a cursor with a forged MAC', async () => `${(await firstCursor()).split('.')[0]}.${Buffer.alloc(16).toString('base64url')}`],
  ])('resources/list with %s is -32602 Invalid cursor', async (_what, make) => {
    const cursor = await make();
    const err = await rpcError(client().listResources({ cursor }));
    expect(err).toEqual({ code: -32602, message: 'MCP error -32602: Invalid cursor', data: undefined });
  });

  it('a resources/list cursor is refused by resources/templates/list', async () => {
    const err = await rpcError(client().listResourceTemplates({ cursor: await firstCursor() }));
    expect(err).toEqual({ code: -32602, message: 'MCP error -32602: Invalid cursor', data: undefined });
  });

  it('a genuine cursor still works after the refusals', async () => {
    const page = await client().listResources({ cursor: await firstCursor() });
    expect(page.resources[0]?.uri).toBe('fixture+fixture://res/93'); // everything's 7 and the fixture's first 93 before it
  });
});

async function firstCursor(): Promise<string> {
  const page = await client().listResources();
  if (page.nextCursor === undefined) throw new Error('expected a second page');
  return page.nextCursor;
}

/** Changes one character of a cursor's body (before the MAC), keeping it well-formed base64url. */
function tamper(cursor: string): string {
  const [body = '', mac = ''] = cursor.split('.');
  const i = Math.floor(body.length / 2);
  const c = body[i] === 'A' ? 'B' : 'A';
  return `${body.slice(0, i)}${c}${body.slice(i + 1)}.${mac}`;
}
