// End to end: multi-megabyte messages through both stdio hops, and an upstream slower than its timeout.
import { describe, expect, it } from 'vitest';
import { upstreams } from '../helpers/built-cli.js';
import { fixtureContent } from '../helpers/catalog.js';
import { rpcError } from '../helpers/rpc-error.js';
import { ProxyProcess } from '../helpers/sdk-clients.js';
import { suiteResource } from '../helpers/suite.js';

const SIZE = 3_000_000; // text: 3 MB per message; blob: 4 MB of base64
const COUNT = 10;
const TIMEOUT_MS = 3_000;

const proxy = suiteResource(() =>
  ProxyProcess.start({
    servers: {
      big: upstreams.fixture('--resources', String(COUNT), '--size', String(SIZE)),
      // timeoutMs also bounds the upstream's initialize: leave room for a slow spawn on a loaded machine.
      slow: { ...upstreams.fixture('--resources', '1', '--read-delay-ms', '60000'), timeoutMs: TIMEOUT_MS },
    },
  }),
);
const client = () => proxy().client;

describe('large payloads', () => {
  it('relays every multi-megabyte text and blob read intact while they run concurrently', async () => {
    const uris = Array.from({ length: COUNT }, (_, i) => `big+fixture://res/${i}`);
    const results = await Promise.all(uris.map((uri) => client().readResource({ uri })));
    const wrong = results.flatMap((r, i) => (JSON.stringify(r.contents) === JSON.stringify([fixtureContent(uris[i]!, i, SIZE)]) ? [] : [uris[i]]));
    expect(wrong).toEqual([]);
  });
});

describe('an upstream slower than its timeoutMs', () => {
  it('times out with -32001 while other upstreams keep answering', async () => {
    expect((await client().listResources())._meta).toBeUndefined(); // both upstreams started
    const slow = rpcError(client().readResource({ uri: 'slow+fixture://res/0' }));
    const fast = await client().readResource({ uri: 'big+fixture://item/alpha/1' });
    expect(fast.contents[0]?.uri).toBe('big+fixture://item/alpha/1');
    expect(await slow).toEqual({ code: -32001, message: 'MCP error -32001: Upstream request timed out', data: undefined });
  });

  it('had cancelled the timed-out read upstream, and still lists it (lists and stats are not delayed)', async () => {
    // The list is a full round trip to the upstream after its notifications/cancelled, so the fixture
    // has finished accounting for the cancellation before the stats read below arrives.
    const page = await client().listResources();
    expect(page.resources.filter((r) => r.uri.startsWith('slow+')).map((r) => r.uri)).toEqual([
      'slow+fixture://res/0',
      'slow+fixture://ticker',
      'slow+fixture://stats',
    ]);
    const stats = await client().readResource({ uri: 'slow+fixture://stats' });
    expect(JSON.parse((stats.contents[0] as { text: string }).text)).toMatchObject({ reads: 1, cancelled: 1 });
  });
});
