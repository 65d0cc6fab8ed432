// The lean HTTP client and the SDK's transport give byte-equal answers: same fixture, same requests, real servers over HTTP.
import { Client } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../src/audit/jcs.js';
import { type RemoteServerConfig, RemoteServerSchema } from '../../src/config/schema.js';
import { createLogger } from '../../src/logger.js';
import { defaultTransportFactory } from '../../src/upstream/transports.js';
import { within } from '../helpers/gate.js';
import { RemoteFixture } from '../helpers/remote-fixture.js';

type HttpClient = 'lean' | 'sdk';

/**
 * What one client session saw: every message the transport delivered after the handshake, as
 * canonical JSON (RFC 8785): the SDK's transport re-orders each message's keys by its schema, the
 * lean one delivers them in wire order, and no reader depends on key order.
 */
interface Session {
  client: Client;
  seen: string[];
  /** Resolves with the first later message `match` accepts. */
  await(match: (m: Record<string, unknown>) => boolean): Promise<unknown>;
}

const logger = createLogger({ level: 'silent', pretty: false });

/** Connects an SDK Client (version negotiation `auto`, as the gateway does) through the production factory. */
async function connect(url: string, httpClient: HttpClient): Promise<Session> {
  const config: RemoteServerConfig = { ...RemoteServerSchema.parse({ url, httpClient, transport: 'streamable-http' }), name: 'up' };
  const [candidate] = defaultTransportFactory('up', config, logger, { maxDepth: 200 });
  const transport = await candidate!.create();
  expect(transport.constructor.name).toBe(httpClient === 'lean' ? 'LeanHttpTransport' : 'StreamableHTTPClientTransport');
  const client = new Client({ name: 'equivalence', version: '1.0.0' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } });
  await client.connect(transport, { timeout: 10_000 });
  const seen: string[] = [];
  const waiters = new Set<{ match: (m: Record<string, unknown>) => boolean; resolve: (m: unknown) => void }>();
  const deliver = transport.onmessage!;
  transport.onmessage = (message, extra) => {
    seen.push(canonicalize(message));
    for (const w of waiters) {
      if (w.match(message)) {
        waiters.delete(w);
        w.resolve(message);
      }
    }
    deliver(message, extra);
  };
  return { client, seen, await: (match) => new Promise((resolve) => waiters.add({ match, resolve })) };
}

/** Runs `script` once per client, each on a fixture of its own (same start state), and returns what each saw. */
async function bothWays(start: () => Promise<RemoteFixture>, script: (s: Session) => Promise<unknown[]>) {
  const out: Record<HttpClient, { seen: string[]; results: string }> = {} as never;
  for (const httpClient of ['lean', 'sdk'] as const) {
    await using fixture = await start();
    const session = await connect(fixture.url, httpClient);
    try {
      const results = await script(session);
      out[httpClient] = { seen: [...session.seen].sort(), results: canonicalize(results) };
    } finally {
      await session.client.close();
    }
  }
  return out;
}

const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ value }),
    (error: Error) => ({ error: error.message }),
  );

describe('lean and SDK HTTP clients', () => {
  it('give byte-equal answers (canonical JSON) from a 2025-11-25 server (SSE answers, a session, the GET stream)', async () => {
    const seen = await bothWays(
      () => RemoteFixture.start('http', '--resources', '250', '--page-size', '100', '--subscribe'),
      async (s) => {
        const results: unknown[] = [];
        let cursor: string | undefined;
        do {
          const page = await s.client.listResources(cursor === undefined ? {} : { cursor });
          results.push(page);
          cursor = page.nextCursor;
        } while (cursor !== undefined);
        for (const uri of ['fixture://res/0', 'fixture://res/9', 'fixture://res/123']) results.push(await s.client.readResource({ uri }));
        results.push(await settle(s.client.readResource({ uri: 'fixture://missing' })));
        results.push(await s.client.listResourceTemplates());
        // A notification on the session's GET stream.
        await s.client.subscribeResource({ uri: 'fixture://ticker' });
        const updated = s.await((m) => m.method === 'notifications/resources/updated');
        await s.client.readResource({ uri: 'fixture://control/tick' });
        results.push(await within(updated, 'the ticker update on the GET stream'));
        return results;
      },
    );
    expect(seen.lean.seen.length).toBeGreaterThan(8);
    expect(seen.lean.seen).toEqual(seen.sdk.seen);
    expect(seen.lean.results).toBe(seen.sdk.results);
  });

  it('give byte-equal answers (canonical JSON) from a 2026-07-28 server (stateless, JSON answers, envelope headers)', async () => {
    const seen = await bothWays(
      () => RemoteFixture.startModern(),
      async (s) => {
        expect(s.client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
        const results: unknown[] = [await s.client.listResources({})];
        for (const uri of ['modern://doc/1', 'modern://doc/2', 'modern://hinted']) results.push(await s.client.readResource({ uri }));
        results.push(await settle(s.client.readResource({ uri: 'modern://missing' })));
        results.push(await s.client.listResourceTemplates());
        return results;
      },
    );
    expect(seen.lean.seen.length).toBeGreaterThan(4);
    expect(seen.lean.seen).toEqual(seen.sdk.seen);
    expect(seen.lean.results).toBe(seen.sdk.results);
  });
});
