// HTTP sessions on the injected clock: idle expiry releases subscriptions, maxSessions answers 503; real HTTP on 127.0.0.1.
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { testEndpoint } from '../helpers/http-endpoint.js';
import { createUpstreamServer } from '../helpers/upstream-server.mjs';
import { startHarness } from '../helpers/harness.js';

const text = (uri: string) => ({ contents: [{ uri, text: 'x' }] });

async function gateway(http: Record<string, unknown>) {
  const upstream = createUpstreamServer({ subscribe: true, resources: [{ uri: 'x://1', name: 'one' }], read: text });
  const h = await startHarness({ upstreams: { a: () => upstream.server } });
  let now = 1_000;
  const endpoint = testEndpoint(h.proxy, http, { clock: { now: () => now } });
  const url = await endpoint.listen();
  return {
    h,
    upstream,
    endpoint,
    url,
    advance: (ms: number) => (now += ms),
    async client() {
      const transport = new StreamableHTTPClientTransport(url);
      const client = new Client({ name: 't', version: '1' });
      await client.connect(transport);
      return { client, transport };
    },
    async [Symbol.asyncDispose]() {
      await endpoint.close();
      await h[Symbol.asyncDispose]();
    },
  };
}

describe('HTTP sessions', () => {
  it('a session idle for sessionIdleMs expires on the injected clock and releases its subscriptions; an active one stays', async () => {
    await using g = await gateway({ sessionIdleMs: 60_000 });
    const idle = await g.client();
    const active = await g.client();
    await idle.client.subscribeResource({ uri: 'a+x://1' });
    expect(g.upstream.stats.subscribes).toEqual(['x://1']);
    // The 2025 client keeps a GET stream open: that counts as activity, so close it to be idle.
    await idle.transport.close();
    await expect.poll(() => g.endpoint.openStreams).toBe(1); // the server saw it end: only the active one's stream is left
    g.advance(59_000);
    await active.client.listResources();
    expect(g.endpoint.sweep()).toBe(0);
    g.advance(2_000);
    expect(g.endpoint.sweep()).toBe(1); // the idle one, 61 s without a request or stream
    expect(g.endpoint.sessions).toBe(1);
    await expect.poll(() => g.upstream.stats.unsubscribes).toEqual(['x://1']);
    await active.client.close();
  });

  it('answers 503 to an initialize past maxSessions, and serves again once one ends', async () => {
    await using g = await gateway({ maxSessions: 2 });
    const one = await g.client();
    const two = await g.client();
    await expect(g.client()).rejects.toThrow(/503|Too many sessions/);
    await one.transport.terminateSession();
    await one.client.close();
    const three = await g.client();
    expect(g.endpoint.sessions).toBe(2);
    await Promise.all([two.client.close(), three.client.close()]);
  });

  it('bounds open 2026 listen streams by maxSessions too: one more gets 503, and one ending makes room', async () => {
    await using g = await gateway({ maxSessions: 1 });
    const { Client: ModernClient, StreamableHTTPClientTransport: ModernHttp } = await import('@modelcontextprotocol/client');
    const client = new ModernClient({ name: 'm', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new ModernHttp(g.url));
    const first = await client.listen({ resourceSubscriptions: ['a+x://1'] });
    expect(first.honoredFilter.resourceSubscriptions).toEqual(['a+x://1']);
    await expect(client.listen({ resourceSubscriptions: ['a+x://1'] })).rejects.toThrow(/503|Too many open listens/);
    await first.close();
    await expect
      .poll(
        async () =>
          await client.listen({ resourceSubscriptions: ['a+x://1'] }).then(
            (s) => s.close().then(() => true),
            () => false,
          ),
      )
      .toBe(true);
    await client.close();
  });
});
