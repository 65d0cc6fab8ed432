// End to end: a slow-starting upstream beside a ready one through the built CLI — the first list does not wait for it, list_changed follows, ls shows progress.
import { writeFileSync } from 'node:fs';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { CLI, upstreams } from '../helpers/built-cli.js';
import { META_INCOMPLETE } from '../helpers/catalog.js';
import { within } from '../helpers/gate.js';
import { ProxyProcess } from '../helpers/sdk-clients.js';
import { TempDir } from '../helpers/temp-dir.js';

const FIRST_WAIT_MS = 1000;

describe('an upstream still starting', () => {
  it('the first list answers within firstWaitMs with the ready upstream, marks the late one, and list_changed follows when it comes up', async () => {
    using flags = new TempDir();
    const go = flags.file('go');
    await using proxy = await ProxyProcess.start({
      servers: {
        ok: upstreams.fixture('--resources', '2'),
        late: { ...upstreams.fixture('--resources', '1', '--start-when-file', go), timeoutMs: 120_000 },
      },
      list: { firstWaitMs: FIRST_WAIT_MS },
    });
    const changed = new Promise<void>((resolve) => proxy.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => resolve()));
    // A read waits for its own upstream's first connection: ok is ready after it.
    await proxy.client.readResource({ uri: 'ok+fixture://stats' });
    const started = performance.now();
    const first = await proxy.client.listResources();
    const elapsed = performance.now() - started;
    expect(elapsed).toBeLessThan(FIRST_WAIT_MS + 3_000); // not late's timeoutMs (120 s)
    expect(first.resources.map((r) => r.uri)).toEqual(['ok+fixture://res/0', 'ok+fixture://res/1', 'ok+fixture://ticker', 'ok+fixture://stats']);
    expect(first._meta?.[META_INCOMPLETE]).toEqual([{ server: 'late', reason: 'starting' }]);
    writeFileSync(go, '');
    await within(changed, 'list_changed once late is up');
    const again = await proxy.client.listResources();
    expect(again.resources.map((r) => r.uri)).toContain('late+fixture://res/0');
    expect(again._meta).toBeUndefined();
  });

  it('`ls` prints each upstream’s state as it settles (plain lines when stderr is not a TTY), then the whole catalog', async () => {
    using dir = new TempDir();
    const go = dir.file('go');
    const file = dir.writeConfig({
      servers: {
        ok: upstreams.fixture('--resources', '1'),
        late: { ...upstreams.fixture('--resources', '1', '--start-when-file', go), timeoutMs: 120_000 },
      },
    });
    const ls = execa(process.execPath, [CLI, 'ls', '--config', file], { reject: false, env: {} });
    let stderr = '';
    // ok settles first; late only once the file appears, which the test makes happen after seeing ok's line.
    await within(
      new Promise<void>((resolve) =>
        ls.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString('utf8');
          if (stderr.includes('ls: ok ready')) resolve();
        }),
      ),
      'ok’s progress line',
    );
    expect(stderr).not.toContain('ls: late');
    writeFileSync(go, '');
    const result = await within(ls, 'ls to finish');
    expect(result.exitCode).toBe(0);
    expect(stderr.split('\n').filter((l) => l.startsWith('ls: '))).toEqual(['ls: ok ready (2025-11-25)', 'ls: late ready (2025-11-25)']);
    expect(String(result.stdout)).toContain('late+fixture://res/0');
  });
});
