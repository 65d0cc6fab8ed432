// Open listens as metrics show them: a stdio session counts the 2026 listens its connection serves (the listen tap tells it), like HTTP's listen streams.
import { describe, expect, it } from 'vitest';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ListenTap } from '../../src/eras/listen-tap.js';
import { createPrometheusMetrics } from '../../src/observe/prometheus.js';
import { parseExposition, sample } from '../helpers/exposition.js';
import { startHarness } from '../helpers/harness.js';

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
