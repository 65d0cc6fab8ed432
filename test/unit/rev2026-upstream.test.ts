// The SDK Client steps the 2026-07-28 upstream fast path borrows, pinned to the shipped SDK: the same bytes on the wire as Client.request, found only where SDK 2.4 has them.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Client, InMemoryTransport, type JSONRPCMessage } from '@modelcontextprotocol/client';
import { Server } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { modernUpstreamWire } from '../../src/eras/rev2026-upstream.js';
import { ReadResult } from '../../src/protocol.js';

const require = createRequire(import.meta.url);

/** A Client connected to an SDK v2 Server (`pin`: 2026-07-28 without a handshake; else 2025-11-25), and every message it wrote. */
async function connected(pin: boolean): Promise<{ client: Client; written: JSONRPCMessage[] }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  serveStdio(
    () => {
      const server = new Server({ name: 'up', version: '1' }, { capabilities: { resources: {}, tools: {} } });
      server.setRequestHandler('resources/read', (req) => ({ contents: [{ uri: req.params.uri, text: 'x' }] }));
      server.setRequestHandler('tools/call', () => new Promise<never>(() => undefined));
      return server;
    },
    { transport: serverSide },
  );
  const written: JSONRPCMessage[] = [];
  const send = clientSide.send.bind(clientSide);
  clientSide.send = (message, options) => {
    written.push(message);
    return send(message, options);
  };
  const client = new Client(
    { name: 'gateway', version: '9.9.9' },
    { capabilities: { roots: {} }, versionNegotiation: pin ? { mode: { pin: '2026-07-28' } } : { mode: 'legacy' } },
  );
  await client.connect(clientSide);
  return { client, written };
}

describe('the 2026-07-28 upstream fast path, pinned to the shipped SDK', () => {
  it('is written against SDK 2.4 (a new SDK: re-check eras/rev2026-upstream.ts against its Client, then move this pin)', () => {
    const pkg = JSON.parse(readFileSync(path.join(path.dirname(require.resolve('@modelcontextprotocol/client')), '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(pkg.version).toMatch(/^2\.4\./);
  });

  it('is found on a 2026-07-28 connection only, and not when an SDK internal it calls has moved', async () => {
    const modern = await connected(true);
    const legacy = await connected(false);
    expect(modernUpstreamWire(modern.client)).toBeDefined();
    expect(modernUpstreamWire(modern.client)?.perRequestStream).toBe(false);
    expect(modernUpstreamWire(legacy.client)).toBeUndefined();
    for (const internal of ['_wireCodec', '_outboundMetaEnvelope', '_resolveNonCompleteResult', '_requestWithSchemaViaCodec']) {
      const moved = Object.create(modern.client, { [internal]: { value: undefined } }) as Client;
      expect(modernUpstreamWire(moved)).toBeUndefined();
    }
    expect(modernUpstreamWire(modern.client)?.sends('resources/read')).toBe(true);
    expect(modernUpstreamWire(modern.client)?.sends('resources/subscribe')).toBe(false); // not a method of this era: left to the Client
    await Promise.all([modern.client.close(), legacy.client.close()]);
  });

  it('writes requests and cancellations byte for byte as Client.request does', async () => {
    const { client, written } = await connected(true);
    const wire = modernUpstreamWire(client)!;
    const cases: Record<string, unknown>[] = [
      { uri: 'x://1' },
      { uri: 'x://2', _meta: { 'io.modelcontextprotocol/logLevel': 'debug', traceparent: 't' } },
      { _meta: { 'io.modelcontextprotocol/clientInfo': { name: 'caller', version: '1' } }, uri: 'x://3' },
    ];
    for (const params of cases) {
      const before = written.length;
      await client.request({ method: 'resources/read', params }, ReadResult);
      const sdk = written[before] as { id: number };
      expect(JSON.stringify(wire.request(sdk.id, 'resources/read', params, false))).toBe(JSON.stringify(sdk));
    }
    // A long call: the progress token after the envelope; cancelled, the enveloped notice.
    const abort = new AbortController();
    const before = written.length;
    const call = client.request({ method: 'tools/call', params: { name: 'hang', arguments: {} } }, ReadResult, {
      signal: abort.signal,
      onprogress: () => undefined,
    });
    call.catch(() => undefined);
    await new Promise((resolve) => setImmediate(resolve));
    abort.abort('stop');
    await expect(call).rejects.toThrow();
    const [sent, cancelled] = written.slice(before) as [{ id: number }, JSONRPCMessage];
    expect(JSON.stringify(wire.request(sent.id, 'tools/call', { name: 'hang', arguments: {} }, true))).toBe(JSON.stringify(sent));
    expect(JSON.stringify(wire.cancelled(sent.id, 'stop'))).toBe(JSON.stringify(cancelled));
    await client.close();
  });
});
