// Composition root: builds the shared core (pool, cache, relay, lister, resources), wires events, serves sessions.
import { randomBytes } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ReadCache, type Clock } from './cache.js';
import type { FederateConfig } from './config-schema.js';
import { createCursorCodec } from './cursor.js';
import { createFacadeServer } from './facade.js';
import { installFastDispatch } from './fast-dispatch.js';
import { Lister } from './listing.js';
import type { Logger } from './logger.js';
import { Methods } from './protocol.js';
import { FederatedResources } from './resources.js';
import { SessionRegistry, type Session } from './sessions.js';
import { SubscriptionRelay } from './subscriptions.js';
import { defaultTransportFactory, type TransportFactory } from './transports.js';
import type { Upstream } from './upstream.js';
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
  /** Clock for cache TTLs. Default: performance. */
  clock?: Clock;
  /** Jitter source for reconnect backoff, in [0, 1). Default: Math.random. */
  random?: () => number;
  /** Reconnect upstreams that fail or go away (off for one-shot commands like `ls`). Default: true. */
  reconnect?: boolean;
}

/** A running federation: one shared core, any number of downstream sessions. */
export interface Proxy extends AsyncDisposable {
  readonly pool: UpstreamPool;
  readonly resources: FederatedResources;
  readonly cache: ReadCache | undefined;
  readonly relay: SubscriptionRelay;
  readonly sessions: SessionRegistry;
  /**
   * Connects every upstream in parallel; resolves when each is ready or has failed (and retries
   * later). Idempotent; the first downstream session starts it too.
   */
  start(): Promise<void>;
  /**
   * Serves one downstream session over `transport`; the session ends when the transport closes.
   * May be called before `start()` resolves: requests wait for their upstreams' first connection.
   */
  connect(transport: Transport): Promise<Server>;
  /** Stops accepting, closes sessions, unsubscribes upstream (best effort), closes upstreams. Idempotent. */
  close(): Promise<void>;
}

const SERVER_INFO = { name: 'mcp-federate', version: VERSION };

/**
 * Wires the proxy.
 *
 * @example
 * const proxy = createProxy({ config, logger });
 * await proxy.start();
 * await proxy.connect(new LineTransport(process.stdin, process.stdout));
 */
export function createProxy(options: ProxyOptions): Proxy {
  const { config, logger } = options;
  const pool = new UpstreamPool(
    config,
    {
      transportFactory: options.transportFactory ?? defaultTransportFactory,
      limits: { maxDepth: config.wire.maxDepth },
      logger,
      clientInfo: SERVER_INFO,
      ...(options.reconnect === false ? {} : { reconnect: config.reconnect }),
      ...(options.random ? { random: options.random } : {}),
    },
    logger,
  );
  const sessions = new SessionRegistry(config.listChanged.coalesceMs);
  // One path for every change, whether the upstream said so or a poller noticed: invalidate first,
  // so a client that re-reads as soon as it hears of the change gets fresh content.
  const changed = (server: string, uri: string): void => {
    cache?.invalidate(server, uri);
    relay.updated(server, uri);
  };
  const relay = new SubscriptionRelay({ pool, logger, ...config.subscriptions, onPolledChange: changed });
  const lister = new Lister(pool, createCursorCodec(options.cursorKey ?? randomBytes(32)), config.list, logger);
  const coherence = createCoherence(config.cache.coherentUris, relay);
  const cache = config.cache.enabled
    ? new ReadCache({ ...config.cache, ...(options.clock ? { clock: options.clock } : {}), onEvict: coherence.release })
    : undefined;
  const resources = new FederatedResources({ pool, lister, relay, cache, beforeColdRead: coherence.hold });
  sessions.onListChanged(() => lister.dropReadAhead()); // read-ahead from before a change is not reused

  let started = false;
  let starting: Promise<void> | undefined;
  const start = (): Promise<void> =>
    (starting ??= pool.start().then(() => {
      started = true;
    }));
  pool.onNotification((n) => {
    if (n.method === Methods.updated && typeof n.params?.uri === 'string') {
      changed(n.server, n.params.uri);
    } else if (n.method === Methods.listChanged) {
      sessions.listChanged();
    }
  });
  // Availability as last announced: a failed retry of an upstream that is already down is not a
  // change of the catalog, so a crash loop does not make every client re-list on each attempt.
  const available = new Set<string>();
  pool.onStatus((server, status) => {
    if (status === 'ready' && (pool.get(server)?.generation ?? 0) > 1) {
      cache?.invalidateServer(server);
      relay.resubscribe(server);
    }
    const now = status === 'ready' ? true : status === 'unavailable' ? false : undefined;
    if (now === undefined || now === available.has(server)) return;
    if (now) available.add(server);
    else available.delete(server);
    if (started) sessions.listChanged();
  });

  const servers = new Set<Server>();
  let closing: Promise<void> | undefined;
  let ids = 0;

  return {
    pool,
    resources,
    cache,
    relay,
    sessions,
    start,
    async connect(transport) {
      if (closing) throw new Error('proxy is closed');
      void start(); // requests wait for their upstreams' first connection attempt
      let server!: Server;
      const session: Session = {
        id: `s${++ids}`,
        sendUpdated: (uri) => void server.sendResourceUpdated({ uri }).catch(() => undefined),
        sendListChanged: () => void server.sendResourceListChanged().catch(() => undefined),
      };
      server = createFacadeServer({ resources, session, logger, serverInfo: SERVER_INFO });
      servers.add(server);
      sessions.add(session);
      server.onclose = () => {
        servers.delete(server);
        sessions.delete(session);
        relay.releaseSession(session);
      };
      await server.connect(transport);
      installFastDispatch(server, transport);
      return server;
    },
    close() {
      closing ??= (async () => {
        await Promise.allSettled([...servers].map((s) => s.close()));
        sessions.close();
        await relay.close();
        lister.close();
        cache?.close();
        await pool.close();
      })();
      return closing;
    },
    [Symbol.asyncDispose]() {
      return this.close();
    },
  };
}

/**
 * Cache coherence: before a URI of an upstream that supports `resources/subscribe` is first read
 * into the cache, the proxy subscribes to it upstream (up to `max` URIs) and keeps that until the
 * entry is evicted or expires. Subscribing first means no change can fall between the read and the
 * subscription, so such entries are invalidated the moment they change: they are exact. An
 * invalidation keeps the hold: the URI is likely to be read again.
 */
function createCoherence(max: number, relay: SubscriptionRelay) {
  const holder: Session = { id: 'cache', sendUpdated: () => undefined, sendListChanged: () => undefined };
  let held = 0;
  return {
    async hold(upstream: Upstream, uri: string): Promise<void> {
      if (!upstream.capabilities?.resources?.subscribe || relay.holds(holder, upstream.id, uri)) return;
      if (held >= max) return;
      held++;
      await relay.subscribe(holder, upstream.id, uri).catch(() => held--); // a refused subscribe leaves the entry TTL-bound
    },
    release(server: string, uri: string): void {
      if (!relay.holds(holder, server, uri)) return;
      held--;
      void relay.unsubscribe(holder, server, uri).catch(() => undefined);
    },
  };
}
