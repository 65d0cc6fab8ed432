// Fast dispatch: active on the pinned SDK, equivalent for well-formed messages, SDK fallback for the rest.
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ListResourcesRequestSchema, ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { installFastDispatch } from '../../src/fast-dispatch.js';
import { deferred } from '../helpers/gate.js';

async function pair() {
  const server = new Server({ name: 's', version: '1' }, { capabilities: { resources: { listChanged: true } } });
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [{ uri: 'x://1', name: 'one' }] }));
  const client = new Client({ name: 'c', version: '1' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  // Count what reaches the SDK's own dispatcher from here on.
  const sdk = serverSide.onmessage!;
  const fellBack: unknown[] = [];
  serverSide.onmessage = (m, e) => {
    fellBack.push(m);
    sdk.call(serverSide, m, e);
  };
  return { server, client, clientSide, serverSide, fellBack };
}

describe('installFastDispatch', () => {
  it('is active on the pinned SDK for servers and clients, and requests and notifications still flow', async () => {
    const { server, client, clientSide, serverSide, fellBack } = await pair();
    expect(installFastDispatch(server, serverSide)).toBe(true);
    expect(installFastDispatch(client, clientSide)).toBe(true);
    expect((await client.listResources()).resources).toEqual([{ uri: 'x://1', name: 'one' }]);
    const heard = deferred();
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => heard.resolve());
    await server.sendResourceListChanged();
    await heard.promise;
    expect(fellBack).toEqual([]);
  });

  it('hands anything unusual to the SDK dispatcher unchanged', async () => {
    const { server, serverSide, fellBack } = await pair();
    installFastDispatch(server, serverSide);
    const errors: Error[] = [];
    server.onerror = (e) => errors.push(e);
    const odd = [
      { jsonrpc: '2.0', id: 7, method: 'resources/list', params: 5 },
      { jsonrpc: '1.0', id: 8, method: 'resources/list' },
      { jsonrpc: '2.0', id: 9, error: { code: -1, message: 'x' } },
      { jsonrpc: '2.0', id: 1.5, method: 'ping' },
    ];
    for (const m of odd) serverSide.onmessage!(m as unknown as JSONRPCMessage);
    expect(fellBack).toEqual(odd);
    expect(errors.length).toBeGreaterThan(0); // the SDK reported them as before
  });

  it('changes nothing when the Protocol lacks the internals it relies on', () => {
    const [t] = InMemoryTransport.createLinkedPair();
    const before = () => undefined;
    t.onmessage = before;
    expect(installFastDispatch({}, t)).toBe(false);
    expect(t.onmessage).toBe(before);
  });
});
