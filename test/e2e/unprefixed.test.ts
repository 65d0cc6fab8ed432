// The built CLI with the conformance fixture as its `prefix: false` upstream next to a prefixed one: the URIs the conformance suite asks for, unchanged.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, upstreams } from '../helpers/built-cli.js';
import { listAll, notFound } from '../helpers/catalog.js';
import { rpcError } from '../helpers/rpc-error.js';
import { ProxyProcess } from '../helpers/sdk-clients.js';
import { suiteResource } from '../helpers/suite.js';

const CONFORMANCE = path.join(ROOT, 'test', 'fixtures', 'conformance-server.mjs');

describe('a prefix: false upstream behind the CLI', () => {
  const proxy = suiteResource(() =>
    ProxyProcess.start({
      servers: {
        conformance: { command: process.execPath, args: [CONFORMANCE], prefix: false },
        cat: upstreams.fixture('--resources', '2'),
      },
    }),
  );

  it('lists its resources and templates unchanged and the other server namespaced', async () => {
    const { client } = proxy();
    const uris = (await listAll(client)).items.map((i) => String(i.uri));
    expect(uris.slice(0, 5)).toEqual(['test://static-text', 'test://static-binary', 'test://watched-resource', 'cat+fixture://res/0', 'cat+fixture://res/1']);
    expect(uris.slice(3).every((u) => u.startsWith('cat+'))).toBe(true);
    expect((await listAll(client, 'templates')).items.map((i) => i.uriTemplate)).toContain('test://template/{id}/data');
  });

  it('reads text, binary and template resources by their own URIs, subscribes and unsubscribes', async () => {
    const { client } = proxy();
    expect(await client.readResource({ uri: 'test://static-text' })).toEqual({
      contents: [{ uri: 'test://static-text', mimeType: 'text/plain', text: 'This is the content of the static text resource.' }],
    });
    expect((await client.readResource({ uri: 'test://static-binary' })).contents[0]).toMatchObject({ uri: 'test://static-binary', mimeType: 'image/png' });
    expect((await client.readResource({ uri: 'test://template/123/data' })).contents[0]).toMatchObject({
      uri: 'test://template/123/data',
      text: '{"id":"123","templateTest":true,"data":"Data for ID: 123"}',
    });
    expect((await client.readResource({ uri: 'cat+fixture://res/1' })).contents[0]).toMatchObject({ uri: 'cat+fixture://res/1' });
    await client.subscribeResource({ uri: 'test://watched-resource' });
    await client.unsubscribeResource({ uri: 'test://watched-resource' });
  });

  it('answers not found, with the URI the client sent, for what neither server has', async () => {
    const { client } = proxy();
    const uri = 'test://nonexistent-resource-for-conformance-testing';
    expect(await rpcError(client.readResource({ uri }))).toEqual(notFound(uri));
    expect(await rpcError(client.readResource({ uri: 'cat+fixture://res/9' }))).toEqual(notFound('cat+fixture://res/9'));
  });
});
