// The session edge of each era: not-found built once with the era's code and sent as built, pinned to the SDK's internals.
import { describe, expect, it } from 'vitest';
import { Server } from '@modelcontextprotocol/server';
import { notFound } from '../../src/errors.js';
import { edgeOf } from '../../src/eras/edges.js';
import { rev2025 } from '../../src/eras/rev2025.js';
import { rev2026 } from '../../src/eras/rev2026.js';
import { withHint } from '../../src/federation/cache-hint.js';
import { RawClient } from '../helpers/raw-client.js';

describe('era edges', () => {
  it('a 2025-11-25 Server sends the -32002 it was thrown, byte for byte (SDK 2.x alone would send -32602)', async () => {
    for (const prepared of [true, false]) {
      const server = new Server({ name: 's', version: '1' }, { capabilities: { resources: {} } });
      if (prepared) rev2025.prepare(server);
      server.setRequestHandler('resources/read', (req) => {
        throw notFound(req.params.uri, rev2025.notFoundCode);
      });
      const peer = await RawClient.memory((side) => server.connect(side));
      await peer.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } }, 1);
      await peer.request('resources/read', { uri: 'docs+x://nope' }, 2);
      const code = prepared ? -32002 : -32602;
      expect(peer.rawLines[1]).toBe(`{"jsonrpc":"2.0","id":2,"error":{"code":${code},"message":"Resource not found","data":{"uri":"docs+x://nope"}}}`);
      await server.close();
    }
  });

  it('pins the SDK method the 2025 edge wraps', () => {
    expect(() => rev2025.prepare({})).toThrow(/_negotiatedWireCodec/);
  });

  it('each era spells not-found and answers results its own way', () => {
    expect(edgeOf('legacy')).toBe(rev2025);
    expect(edgeOf('modern')).toBe(rev2026);
    expect(rev2025.notFoundCode).toBe(-32002);
    expect(rev2026.notFoundCode).toBe(-32602);
    const result = withHint({ contents: [] }, { ttlMs: 5, scope: 'public' });
    expect(rev2025.answer(result)).toBe(result);
    expect(rev2026.answer(result)).toMatchObject({ contents: [], ttlMs: 5, cacheScope: 'public' });
  });
});
