// Default upstream transports: stdio children, Streamable HTTP, legacy SSE (with the fallback order).
import type { Transport } from '@modelcontextprotocol/server';
import { createBoundedFetch } from './bounded-fetch.js';
import { ChildTransport } from './child-transport.js';
import { isRemote, type FederateConfig, type ServerConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';

/** One attempt at a transport; `connect` tries them in order until one initializes. */
export interface TransportCandidate {
  /** "stdio", "streamable-http" or "sse" (for logs). */
  kind: string;
  /**
   * True when every message arrives as freshly parsed objects that nobody else holds (true for
   * stdio and HTTP; not for in-memory transports, which pass the sender's own objects). The proxy
   * then namespaces list items in place instead of copying each one.
   */
  freshMessages?: boolean;
  /** Creates a fresh, unstarted transport. */
  create(): Transport | Promise<Transport>;
}

/**
 * Turns an upstream's config into the transports to try, in order. Injected into the pool so tests
 * can hand in `InMemoryTransport`s instead of processes or sockets.
 */
export type TransportFactory = (id: string, config: ServerConfig, logger: Logger, limits: TransportLimits) => TransportCandidate[];

/** Bounds that are not per server (see `wire` in the config). */
export interface TransportLimits {
  /** Deepest nesting accepted in a message from the upstream. */
  maxDepth: number;
}

/**
 * The production factory. stdio children get the SDK's safe default environment plus `env`, and
 * their stderr is forwarded line by line to the log (never to our stdout). Remote upstreams get the
 * configured headers only: a downstream client's credentials are never passed through. Streamable
 * HTTP goes through the {@link LeanHttpTransport} unless `httpClient` is "sdk"; the SDK's transports
 * read every response through a {@link createBoundedFetch}; both bound answers by the server's
 * `maxResponseBytes`.
 */
export const defaultTransportFactory: TransportFactory = (id, config, logger, limits) => {
  if (!isRemote(config)) {
    return [
      {
        kind: 'stdio',
        freshMessages: true,
        create: () =>
          new ChildTransport({
            command: config.command,
            args: config.args,
            env: config.env,
            cwd: config.cwd,
            maxMessageBytes: config.maxResponseBytes,
            maxDepth: limits.maxDepth,
            onStderrLine: (line) => logger.info({ server: id, stderr: line }, 'upstream stderr'),
          }),
      },
    ];
  }
  const url = new URL(config.url);
  const requestInit: RequestInit = { headers: config.headers };
  const boundedFetch = createBoundedFetch({
    maxResponseBytes: config.maxResponseBytes,
    maxDepth: limits.maxDepth,
    onDrop: (reason) => logger.warn({ server: id, reason }, 'upstream message refused'),
  });
  const streamable: TransportCandidate =
    config.httpClient === 'lean'
      ? {
          kind: 'streamable-http',
          freshMessages: true,
          // Loaded on first use, like the SDK's: node:http(s) and TLS stay out of a stdio-only gateway.
          create: async () =>
            new (await import('./lean-http.js')).LeanHttpTransport(url, {
              headers: config.headers,
              maxResponseBytes: config.maxResponseBytes,
              maxDepth: limits.maxDepth,
              onDrop: (reason) => logger.warn({ server: id, reason }, 'upstream message refused'),
            }),
        }
      : {
          kind: 'streamable-http',
          freshMessages: true,
          // Loaded on first use: with SDK 2.x the client package's root holds these next to `Client`.
          create: async () => {
            const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
            return new StreamableHTTPClientTransport(url, { requestInit, fetch: boundedFetch });
          },
        };
  const sse: TransportCandidate = {
    kind: 'sse',
    freshMessages: true,
    create: async () => {
      const { SSEClientTransport } = await import('@modelcontextprotocol/client');
      return new SSEClientTransport(url, {
        requestInit,
        fetch: boundedFetch,
        // EventSource's GET carries the same configured headers (e.g. Authorization). The SDK hands
        // in a Headers object, which spreads to nothing: copy it so its Accept header survives.
        eventSourceInit: {
          fetch: (input, init) => {
            // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a caller may pass no init, whatever the SDK's type says
            const headers = new Headers(init?.headers);
            for (const [name, value] of Object.entries(config.headers)) headers.set(name, value);
            return boundedFetch(input, { ...init, headers });
          },
        },
      });
    },
  };
  if (config.transport === 'sse') return [sse];
  if (config.transport === 'streamable-http') return [streamable];
  return [streamable, sse];
};

/** Children started ahead of the proxy, and how to hand them over. */
export interface Prespawned {
  /** A factory that gives each upstream's first connection attempt its already-started child. */
  factory: TransportFactory;
  /** Stops the children no connection attempt has taken yet (shutdown before start). */
  close(): Promise<void>;
}

/**
 * Starts every enabled stdio upstream's child right away. The CLI calls this before it loads the
 * rest of the proxy, so the children boot while the proxy's own modules load.
 */
export function prespawn(config: FederateConfig, logger: Logger, factory: TransportFactory = defaultTransportFactory): Prespawned {
  const early = new Map<string, Transport>();
  const spawnedFor = new Map<string, ServerConfig>();
  for (const [id, server] of Object.entries(config.servers)) {
    if (!server.enabled || isRemote(server)) continue;
    const first = factory(id, server, logger, config.wire)[0];
    if (!first) continue;
    const transport = first.create() as Transport;
    transport.start().catch(() => undefined); // a failed spawn surfaces again when the Client connects
    early.set(id, transport);
    spawnedFor.set(id, server);
  }
  // A child goes only to the entry it was spawned for: one a reload changed spawns afresh.
  const handOver: TransportFactory = (id, server, log, limits) =>
    factory(id, server, log, limits).map((candidate, i) => {
      const transport = i === 0 && spawnedFor.get(id) === server ? early.get(id) : undefined;
      if (!transport) return candidate;
      return {
        ...candidate,
        create: () => {
          early.delete(id);
          return transport;
        },
      };
    });
  return {
    factory: handOver,
    async close() {
      const left = [...early.values()];
      early.clear();
      await Promise.allSettled(left.map((t) => t.close()));
    },
  };
}
