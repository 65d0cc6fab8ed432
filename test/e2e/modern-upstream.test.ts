// A 2026-07-28 upstream (SDK v2, serveStdio) next to a 2025 one, behind the built CLI, to a 2025 client.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ROOT, runCli, upstreams } from '../helpers/built-cli.js';
import { listAll, notFound } from '../helpers/catalog.js';
import { within } from '../helpers/gate.js';
import { rpcError } from '../helpers/rpc-error.js';
import { ProxyProcess } from '../helpers/sdk-clients.js';
import { suiteResource } from '../helpers/suite.js';
import { TempDir } from '../helpers/temp-dir.js';

const MODERN = path.join(ROOT, 'test', 'fixtures', 'modern-server.mjs');
const modern = (protocol: string) => ({ command: process.execPath, args: [MODERN], protocol });
const text = (r: { contents: unknown[] }) => (r.contents[0] as { text: string }).text;

describe('upstreams of both eras', () => {
  const proxy = suiteResource(() =>
    ProxyProcess.start({
      servers: { modern: modern('2026-07-28'), legacy: { ...upstreams.fixture('--resources', '2', '--subscribe'), protocol: 'auto' } },
      subscriptions: { pollIntervalMs: 100, coalesceMs: 0 },
    }),
  );

  it('negotiates each upstream on its own: a pin, and auto falling back to 2025-11-25 (ls --json shows which)', async () => {
    using dir = new TempDir();
    const config = dir.writeConfig({ servers: { modern: modern('auto'), legacy: { ...upstreams.fixture('--resources', '2'), protocol: 'auto' } } });
    const r = await runCli(['ls', '--json', '--config', config]);
    expect(r.exitCode).toBe(0);
    const servers = (JSON.parse(String(r.stdout)) as { servers: { id: string; protocol?: string }[] }).servers;
    expect(servers.map((s) => [s.id, s.protocol])).toEqual([
      ['modern', '2026-07-28'],
      ['legacy', '2025-11-25'],
    ]);
  });

  it('merges lists and templates of both; reads a modern resource without the upstream hop’s own fields', async () => {
    const { client } = proxy();
    const uris = (await listAll(client)).items.map((i) => i.uri);
    expect(uris).toEqual(expect.arrayContaining(['modern+modern://doc/1', 'modern+modern://hinted', 'legacy+fixture://res/0']));
    const templates = (await listAll(client, 'templates')).items.map((i) => i.uriTemplate);
    expect(templates).toContain('modern+modern://doc/{id}');
    const read = await client.readResource({ uri: 'modern+modern://doc/2' });
    expect(read).toEqual({ contents: [{ uri: 'modern+modern://doc/2', text: 'doc 2' }] }); // no ttlMs, cacheScope or its serverInfo
  });

  it('a resource the modern upstream does not have is -32002 to a 2025 client, with the URI it sent', async () => {
    expect(await rpcError(proxy().client.readResource({ uri: 'modern+modern://nope' }))).toEqual(notFound('modern+modern://nope'));
  });

  it('honours the upstream’s cache hint (ttlMs 60 s: reused) and its absence (ttlMs 0: read again)', async () => {
    const { client } = proxy();
    expect(text(await client.readResource({ uri: 'modern+modern://hinted' }))).toBe(text(await client.readResource({ uri: 'modern+modern://hinted' })));
    expect(text(await client.readResource({ uri: 'modern+modern://counter' }))).not.toBe(text(await client.readResource({ uri: 'modern+modern://counter' })));
  });

  it('a subscription to a modern upstream is an entry of its subscriptions/listen filter: its notification reaches the client', async () => {
    const { client } = proxy();
    const updated = new Promise<string>((resolve) =>
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        if (n.params.uri === 'modern+modern://ticker') resolve(n.params.uri);
      }),
    );
    await client.subscribeResource({ uri: 'modern+modern://ticker' });
    // The ticker reads the same every time: no poller could see this change, only a notification.
    await client.readResource({ uri: 'modern+modern://control/tick' });
    expect(await within(updated, 'the listen stream’s update of the modern ticker')).toBe('modern+modern://ticker');
    await client.unsubscribeResource({ uri: 'modern+modern://ticker' });
  });
});

describe('list changes of a 2026-07-28 upstream', () => {
  it('reach a 2025 client as notifications/resources/list_changed (the proxy holds a listen with resourcesListChanged)', async () => {
    await using proxy = await ProxyProcess.start({ servers: { modern: modern('2026-07-28') }, listChanged: { coalesceMs: 0 } });
    const { client } = proxy;
    const changed = new Promise<void>((resolve) => client.setNotificationHandler(ResourceListChangedNotificationSchema, () => resolve()));
    await client.readResource({ uri: 'modern+modern://control/list-changed' });
    await within(changed, 'list_changed from the 2026 upstream');
  });
});
