// End to end, the read cache is transparent by default (cache.ttlMs 0): a finished read is never
// reused, so a resource that changes on every read (the fixture's fixture://counter) reads fresh each
// time; concurrent identical reads still share one upstream call; reuse happens only where the
// operator asked for it (servers.<id>.cacheTtlMs here).
import { describe, expect, it } from 'vitest';
import { upstreams } from '../helpers/built-cli.js';
import { ProxyProcess } from '../helpers/sdk-clients.js';
import { suiteResource } from '../helpers/suite.js';

/** What `fixture://stats` reports that these tests use. */
interface Stats {
  pid: number;
  readsByUri: Record<string, number>;
}

describe('the read cache by default, and with a per-server TTL', () => {
  const proxy = suiteResource(() =>
    ProxyProcess.start({
      servers: {
        fresh: upstreams.fixture('--counter', '--resources', '1'),
        kept: { ...upstreams.fixture('--counter', '--resources', '1'), cacheTtlMs: 60_000 },
        shared: upstreams.fixture('--counter', '--resources', '1'),
        other: upstreams.fixture('--resources', '1'),
      },
    }),
  );
  const client = () => proxy().client;
  const text = async (uri: string) => {
    const { contents } = await client().readResource({ uri });
    expect(contents).toHaveLength(1);
    return (contents[0] as { text: string }).text;
  };
  let seq = 0;
  /** The fixture's counters (a unique URI each time, in case the stats themselves were cached). */
  const stats = async (server: string) => JSON.parse(await text(`${server}+fixture://stats?n=${++seq}`)) as Stats;

  it('default config: reading a changing resource twice returns two different contents', async () => {
    const first = await text('fresh+fixture://counter');
    const second = await text('fresh+fixture://counter');
    expect(first).toMatch(/^counter \d+$/);
    expect(second).not.toBe(first);
  });

  it('cacheTtlMs 60000 on that server: the second read is served the first content', async () => {
    const first = await text('kept+fixture://counter');
    const second = await text('kept+fixture://counter');
    expect(first).toMatch(/^counter \d+$/);
    expect(second).toBe(first);
  });

  it('default config: concurrent identical reads still share one upstream call', async () => {
    const { pid, readsByUri } = await stats('shared');
    const before = readsByUri['fixture://counter'] ?? 0;
    // Freeze the upstream so neither read can finish before both have reached the proxy; a round trip
    // to another upstream proves the proxy has taken both in (it handles messages in order).
    process.kill(pid, 'SIGSTOP');
    let reads: Promise<string>[];
    try {
      reads = [text('shared+fixture://counter'), text('shared+fixture://counter')];
      await text('other+fixture://res/0');
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const [a, b] = await Promise.all(reads);
    expect(b).toBe(a);
    expect((await stats('shared')).readsByUri['fixture://counter']).toBe(before + 1);
  });
});
