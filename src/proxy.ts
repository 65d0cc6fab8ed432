// Composition root: builds the shared core (pool, lister, resources) and serves downstream sessions.
import { randomBytes } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { FederateConfig } from './config-schema.js';
import { createCursorCodec } from './cursor.js';
import { createFacadeServer } from './facade.js';
import { Lister } from './listing.js';
import type { Logger } from './logger.js';
import { FederatedResources } from './resources.js';
import { defaultTransportFactory, type TransportFactory } from './transports.js';
import { UpstreamPool } from './upstream-pool.js';
import { VERSION } from './version.js';

/** Options of {@link createProxy}. */
export interface ProxyOptions {
  config: FederateConfig;
  logger: Logger;
  /** How upstream transports are made. Default: stdio / Streamable HTTP / SSE from the config. */
  transportFactory?: TransportFactory;
  /** Key for list cursors. Default: 32 random bytes per process. */
  cursorKey?: Uint8Array;
}

/** A running federation: one shared core, any number of downstream sessions. */
export interface Proxy extends AsyncDisposable {
  readonly pool: UpstreamPool;
  readonly resources: FederatedResources;
  /** Connects every upstream in parallel; resolves when each is ready or has failed. */
  start(): Promise<void>;
  /** Serves one downstream session over `transport`; the session ends when the transport closes. */
  connect(transport: Transport): Promise<Server>;
  /** Closes every session, then every upstream. Idempotent. */
  close(): Promise<void>;
}

const SERVER_INFO = { name: 'mcp-federate', version: VERSION };

/**
 * Wires the proxy.
 *
 * @example
 * const proxy = createProxy({ config, logger });
 * await proxy.start();
 * await proxy.connect(new StdioServerTransport());
 */
export function createProxy(options: ProxyOptions): Proxy {
  const { config, logger } = options;
  const pool = new UpstreamPool(
    config,
    { transportFactory: options.transportFactory ?? defaultTransportFactory, logger, clientInfo: SERVER_INFO },
    logger,
  );
  const codec = createCursorCodec(options.cursorKey ?? randomBytes(32));
  const lister = new Lister(pool, codec, config.list, logger);
  const resources = new FederatedResources(pool, lister);
  const sessions = new Set<Server>();
  let closing: Promise<void> | undefined;

  return {
    pool,
    resources,
    start: () => pool.start(),
    async connect(transport) {
      if (closing) throw new Error('proxy is closed');
      const server = createFacadeServer({ resources, logger, serverInfo: SERVER_INFO });
      sessions.add(server);
      server.onclose = () => sessions.delete(server);
      await server.connect(transport);
      return server;
    },
    close() {
      closing ??= (async () => {
        await Promise.allSettled([...sessions].map((s) => s.close()));
        sessions.clear();
        lister.close();
        await pool.close();
      })();
      return closing;
    },
    [Symbol.asyncDispose]() {
      return this.close();
    },
  };
}
