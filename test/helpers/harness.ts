// In-process harness: a real proxy core, upstream Servers of either era (SDK v1, or SDK v2 for 2026-07-28) and downstream Clients over InMemoryTransport.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as ModernClient, InMemoryTransport as ModernInMemoryTransport } from '@modelcontextprotocol/client';
import type { Server as ModernServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { parseConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/logger.js';
import { createProxy, type CallerIdentity, type Proxy } from '../../src/proxy.js';
import type { TransportFactory } from '../../src/upstream/transports.js';
import { jsonLinesSink } from './logs.js';

/**
 * Makes the upstream Server for one connection attempt, or throws to simulate a failed start. A
 * promise delays the Server's side of the connection (initialize is answered once it resolves).
 */
export type UpstreamFactory = () => Server | Promise<Server>;

/** A 2026-07-28 upstream: an SDK v2 Server for each connection, served with 2025 openings refused. */
export interface ModernUpstream {
  era: 'modern';
  make: () => ModernServer;
}

export interface HarnessOptions {
  /** Upstreams by id: an SDK v1 Server factory (either era's client may open it), or a 2026-07-28 SDK v2 one. */
  upstreams: Record<string, UpstreamFactory | ModernUpstream>;
  /** Extra config (merged over `servers`), e.g. `list` limits or per-server fields. */
  config?: Record<string, unknown>;
  /** Per-server extra fields (timeoutMs, concurrency, ...). */
  serverFields?: Record<string, Record<string, unknown>>;
  /** Clock for cache TTLs. */
  clock?: { now(): number };
  /** Jitter source for reconnect backoff. */
  random?: () => number;
  /** Audit log (default: from config, none). */
  audit?: import('../../src/audit/log.js').AuditLog;
  /** Monotonic clock for rate limits. */
  now?: () => number;
  /** The `list.firstWaitMs` timer (see `ProxyOptions.listTimer`). */
  listTimer?: import('../../src/federation/listing.js').SetTimer;
  /** Metrics the proxy reports to (default: none). */
  metrics?: import('../../src/observe/metrics.js').Metrics;
  /** Wait for every upstream's first connection attempt before returning. Default: true. */
  awaitStart?: boolean;
  /** The edge fast lane (see `ProxyOptions.fastLane`). Default: as the proxy's. */
  fastLane?: boolean;
  /** The timer of held bridged calls (see `ProxyOptions.bridgeTimer`). */
  bridgeTimer?: import('../../src/federation/listing.js').SetTimer;
  /** Wall clock of sealed input states (see `ProxyOptions.wallClock`). */
  wallClock?: () => number;
  /** Scaled out: the Redis-backed cluster the proxy shares limits and changes through (see `ProxyOptions.cluster`). */
  cluster?: import('../../src/cluster.js').Cluster;
}

export interface Harness extends AsyncDisposable {
  proxy: Proxy;
  /** JSON log records written so far. */
  logs: Record<string, unknown>[];
  /** Opens a new downstream session (as `caller`, default the stdio one) and returns its connected Client (SDK v1, MCP 2025-11-25). */
  client(caller?: CallerIdentity): Promise<Client>;
  /** Opens a new downstream session with an SDK v2 Client negotiating `auto` (MCP 2026-07-28 first). */
  modernClient(caller?: CallerIdentity): Promise<ModernClient>;
}

/** Starts a proxy whose upstreams are in-process Servers; dispose with `await using`. */
export async function startHarness(options: HarnessOptions): Promise<Harness> {
  const servers = Object.fromEntries(Object.keys(options.upstreams).map((id) => [id, { command: `inmemory:${id}`, ...(options.serverFields?.[id] ?? {}) }]));
  const config = parseConfig({ servers, ...(options.config ?? {}) }, { env: {} });
  const { records: logs, destination } = jsonLinesSink();
  const logger = createLogger({ level: 'debug', destination });
  const transportFactory: TransportFactory = (id) => [
    {
      kind: 'in-memory',
      create() {
        const make = options.upstreams[id];
        if (!make) throw new Error(`no upstream ${id}`);
        if (typeof make !== 'function') {
          const [clientSide, serverSide] = ModernInMemoryTransport.createLinkedPair();
          serveStdio(() => make.make(), { transport: serverSide, legacy: 'reject' });
          return clientSide;
        }
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
        void Promise.resolve(make()).then((server) => server.connect(serverSide));
        return clientSide;
      },
    },
  ];
  const proxy = createProxy({
    config,
    logger,
    transportFactory,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.random ? { random: options.random } : {}),
    ...(options.audit ? { audit: options.audit } : {}),
    ...(options.now ? { now: options.now } : {}),
    ...(options.listTimer ? { listTimer: options.listTimer } : {}),
    ...(options.fastLane !== undefined ? { fastLane: options.fastLane } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.bridgeTimer ? { bridgeTimer: options.bridgeTimer } : {}),
    ...(options.wallClock ? { wallClock: options.wallClock } : {}),
    ...(options.cluster ? { cluster: options.cluster } : {}),
  });
  if (options.awaitStart === false) void proxy.start();
  else await proxy.start();
  const clients: { close(): Promise<void> }[] = [];
  return {
    proxy,
    logs,
    async client(caller) {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await proxy.connect(serverSide, caller);
      const client = new Client({ name: 'test-client', version: '1.0.0' });
      await client.connect(clientSide);
      clients.push(client);
      return client;
    },
    async modernClient(caller) {
      const [clientSide, serverSide] = ModernInMemoryTransport.createLinkedPair();
      await proxy.connect(serverSide, caller);
      const client = new ModernClient({ name: 'modern-test-client', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(clientSide);
      clients.push(client);
      return client;
    },
    async [Symbol.asyncDispose]() {
      await Promise.allSettled(clients.map((c) => c.close()));
      await proxy.close();
    },
  };
}
