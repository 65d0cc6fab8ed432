// Open listens as metrics show them: a stdio session counts the 2026 listens its connection serves (the listen tap tells it), like HTTP's listen streams.
import { describe, expect, it } from 'vitest';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ListenTap } from '../../src/eras/listen-tap.js';
import { createPrometheusMetrics } from '../../src/observe/prometheus.js';
import { parseExposition, sample } from '../helpers/exposition.js';
import { startHarness } from '../helpers/harness.js';
import { createUpstreamServer } from '../helpers/upstream-server.mjs';
import { within } from '../helpers/gate.js';

const STDIO_2026 = { transport: 'stdio', era: '2026-07-28' };

describe('listens of a stdio session', () => {
  it('are counted as they open and end, and those still open end with the session', async () => {
    const metrics = createPrometheusMetrics({ processMetrics: false });
    await using h = await startHarness({
      upstreams: { docs: () => new Server({ name: 'docs', version: '1.0.0' }, { capabilities: { resources: {} } }) },
      metrics,
    });
    const open = async () => sample(parseExposition(await metrics.exposition()), 'mcp_federate_listens', STDIO_2026) ?? 0;
    const downstream = h.proxy.openSession({ caller: { principal: 'local', roles: [], transport: 'stdio' } });
    // The tap of that session's connection, as the 2026 era builds it, with the session's counter.
    const tap = new ListenTap({ accept: async (uri) => uri, release: () => undefined }, downstream.listens);
    const entry: unknown[] = [];
    const receive = tap.receive((m) => void entry.push(m));
    const send = tap.send(async () => undefined);
    const listen = (id: number) =>
      receive({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { notifications: { resourceSubscriptions: ['docs+x://a'] } } });
    listen(1);
    listen(2);
    listen(3);
    await new Promise((r) => setImmediate(r));
    expect(entry).toHaveLength(3);
    expect(await open()).toBe(3);
    await send({ jsonrpc: '2.0', id: 1, result: {} }); // the entry ended listen 1
    receive({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } }); // the client cancelled listen 2
    expect(await open()).toBe(1);
    downstream.close(); // the connection went away with listen 3 open
    expect(await open()).toBe(0);
    downstream.close();
    await send({ jsonrpc: '2.0', id: 3, result: {} }); // the entry's teardown answer, after the session closed
    listen(4); // a late listen on a closed session is not counted
    await new Promise((r) => setImmediate(r));
    expect(await open()).toBe(0);
    // HTTP's listen streams keep their own series.
    expect(sample(parseExposition(await metrics.exposition()), 'mcp_federate_listens', { transport: 'http', era: '2026-07-28' })).toBeUndefined();
  });
});

describe('listens of a 2026 stdio client, end to end', () => {
  // Needs serve/stdio.ts to hand the session's counter to the era (`listens: downstream.listens` in
  // the hooks it gives `EraEdge.stdio`); until that line lands this test fails, and `it.fails` says so.
  // Once it lands, turn `it.fails` into `it`.
  it('count a listen while it is open, and not after the client ends it or goes away', async () => {
    const upstream = createUpstreamServer({ subscribe: true, read: (u) => ({ contents: [{ uri: u, text: 'v' }] }) });
    const metrics = createPrometheusMetrics({ processMetrics: false });
    await using h = await startHarness({ upstreams: { a: () => upstream.server }, metrics });
    const open = async () => sample(parseExposition(await metrics.exposition()), 'mcp_federate_listens', STDIO_2026) ?? 0;
    const modern = await h.modernClient();
    const first = await modern.listen({ resourceSubscriptions: ['a+x://1'] });
    await modern.listen({ resourceSubscriptions: ['a+x://2'] });
    expect(await open()).toBe(2);
    await first.close();
    await within(
      (async () => {
        while ((await open()) !== 1) await new Promise((r) => setImmediate(r));
      })(),
      'the ended listen to be uncounted',
    );
    await modern.close(); // the connection goes, with one listen open
    await within(
      (async () => {
        while ((await open()) !== 0) await new Promise((r) => setImmediate(r));
      })(),
      'the listens to end with the connection',
    );
  });
});
