// The Streamable HTTP endpoint: the Node server, its listen and close, reloads of `auth`, the sweep; routing and each era's path are their own modules.
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AuthConfig, HttpConfig } from '../../config/schema.js';
import { createAuthenticator, type Authenticator } from '../auth/authenticator.js';
import { AuthFailureLog, type AuthFailureCounts } from '../auth/failure-log.js';
import { createOriginHostCheck } from '../origin-host.js';
import type { Logger } from '../../logger.js';
import type { Proxy } from '../proxy-types.js';
import { LiveIdentities } from './live-identities.js';
import { DEFAULT_MAX_DEPTH } from '../../wire/json-depth.js';
import { PrincipalBounds, type PrincipalWireLimits } from './principal-bounds.js';
import { LegacySessions, type HttpClock } from './legacy-sessions.js';
import { ModernRequests } from './modern-requests.js';
import { httpErrorBody, JsonRpc } from '../../errors.js';
import { json } from './reply.js';
import { HttpRouter, MCP_METHODS } from './router.js';
import { OpsPaths } from './ops-paths.js';
import { MetricsSchema, type MetricsConfig } from '../../config/schema.js';
import type { PrometheusMetrics } from '../../observe/prometheus.js';

export type { HttpClock } from './legacy-sessions.js';

/** Options of {@link createHttpEndpoint}. */
export interface HttpEndpointOptions {
  proxy: Proxy;
  config: HttpConfig;
  logger: Logger;
  /** Absent: every request is the principal `anonymous` (allowed on loopback only; the CLI checks). */
  auth?: AuthConfig | undefined;
  /** Injected into the JWT verifier (tests): the clock its `exp`/`nbf` checks, and the closing of streams at `exp`, use. */
  now?: () => Date;
  /** Bound on unsent output per listen stream. */
  maxQueuedBytes: number;
  /** Deepest JSON nesting accepted in a request body (`wire.maxDepth`); deeper gets 400 `-32600`. Default: 1000. */
  maxDepth?: number;
  /** Per-principal bounds on requests in flight and unread answer bytes. Default: the `wire` defaults (64, 64 MiB). */
  perPrincipal?: PrincipalWireLimits;
  /** Clock for idle expiry. Default: `Date`. */
  clock?: HttpClock;
  /** How often idle sessions are swept; 0 never (tests call `sweep()`). Default: min(sessionIdleMs / 4, 60 s). */
  sweepEveryMs?: number;
  /** Served at `metricsConfig.path` on this listener. Default: no `/metrics` here. */
  metrics?: PrometheusMetrics | undefined;
  /** The `metrics` block (path, scrape token). Default: its defaults. */
  metricsConfig?: MetricsConfig;
}

/** A running endpoint. */
export interface HttpEndpoint extends AsyncDisposable {
  /** Binds and resolves with the endpoint's URL (`http://127.0.0.1:<port>/mcp`). */
  listen(): Promise<URL>;
  /** Live 2025-11-25 sessions. */
  readonly sessions: number;
  /** Requests and GET streams of those sessions in progress (a session with one open is not idle). */
  readonly openStreams: number;
  /**
   * Expires sessions idle for `sessionIdleMs` (on the clock), and closes sessions and listens whose
   * JWT has expired (on the JWT clock; a timer does that too); returns how many idle ones.
   */
  sweep(): number;
  /** Failed authentications so far (refused credentials; a request with none is not counted), by reason. */
  readonly authFailures: AuthFailureCounts;
  /**
   * Replaces the authentication (a reload). Every open session, listen and request is resolved
   * again against it at once (static tokens; JWTs too when the `jwt` block changed, the promise
   * resolving once those are done): one whose credential is gone or now names another binding is
   * closed (sessions, listens) or denied (requests in flight); the others act for their identity as
   * now resolved. Answers in flight are decided again before they leave.
   */
  reloadAuth(auth: AuthConfig | undefined): Promise<void>;
  /** Stops accepting, ends listens and sessions (their subscriptions are released). Idempotent. */
  close(): Promise<void>;
}

const KEEP_ALIVE_MS = 15_000;

/**
 * Serves MCP over Streamable HTTP at `config.path`:
 *
 * - 2025-11-25 clients get stateful sessions ({@link LegacySessions}): POST, GET (the notification
 *   stream), DELETE, each session bound to the principal that created it, idle ones expiring after
 *   `sessionIdleMs`; past `maxSessions` a new one gets 503.
 * - 2026-07-28 requests are stateless ({@link ModernRequests}), each authenticated on its own;
 *   `subscriptions/listen` is served as an SSE response per listen.
 * - `/healthz`, `/readyz` and the OAuth Protected Resource Metadata need no credentials.
 *
 * Every request is checked by the {@link HttpRouter} (Origin/Host, then credentials) before it
 * reaches MCP handling, and its body is bounded (`maxBodyBytes`, 413). Every session and request
 * share the one proxy core.
 *
 * @example
 * const endpoint = createHttpEndpoint({ proxy, config: config.http, logger, maxQueuedBytes });
 * const url = await endpoint.listen();
 */
export function createHttpEndpoint(options: HttpEndpointOptions): HttpEndpoint {
  const { proxy, config, logger } = options;
  // One count of failed authentications for the endpoint's life, across reloads of `auth`.
  const failures = new AuthFailureLog({ logger, ...(options.clock ? { now: () => options.clock!.now() } : {}) });
  const authenticatorFor = (auth: AuthConfig | undefined): Authenticator | undefined =>
    auth && createAuthenticator(auth, { logger, failures, ...(options.now ? { now: options.now } : {}) });
  const clock = options.clock ?? Date;
  const jwtNow = options.now ? () => options.now!().getTime() : () => Date.now();
  const identities = new LiveIdentities({ now: jwtNow });
  const bounds = new PrincipalBounds({ proxy, logger, http: config, ...(options.perPrincipal ? { wire: options.perPrincipal } : {}) });
  proxy.metrics.watch({ principalUse: () => bounds.use() });
  const paths = { proxy, config, logger, identities, bounds, maxQueuedBytes: options.maxQueuedBytes, keepAliveMs: KEEP_ALIVE_MS };
  const legacy = new LegacySessions({ ...paths, clock });
  const modern = new ModernRequests(paths);
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const ops = new OpsPaths({ proxy, logger, metrics: options.metrics, config: options.metricsConfig ?? MetricsSchema.parse({}), host: config.host });
  const router = new HttpRouter({ proxy, config, logger, auth: options.auth, authenticatorFor, maxDepth, bounds, legacy, modern, ops });
  let closing: Promise<void> | undefined;

  const server: HttpServer = createServer({
    headersTimeout: config.headersTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // Node checks those two timeouts only every connectionsCheckingInterval (30 s by default), which
    // would let a slow client hold a connection far past them.
    connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(Math.min(config.headersTimeoutMs, config.requestTimeoutMs) / 2))),
  });
  server.on('request', (req, res) => {
    router.handle(req, res).catch((err: unknown) => {
      logger.warn({ err: String(err) }, 'http: request failed');
      json(res, 500, httpErrorBody(JsonRpc.INTERNAL_ERROR, 'Internal error'));
    });
  });
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
  });

  // CONNECT never reaches 'request': Node hands it over as a raw socket, which would otherwise hang.
  server.on('connect', (_req, socket) => {
    if (socket.writable) socket.end(`HTTP/1.1 405 Method Not Allowed\r\nallow: ${MCP_METHODS}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
    else socket.destroy();
  });

  const sweepEvery = options.sweepEveryMs ?? Math.min(Math.ceil(config.sessionIdleMs / 4), 60_000);
  let sweeper: NodeJS.Timeout | undefined;

  const endpoint: HttpEndpoint = {
    async listen() {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, config.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      const address = server.address() as AddressInfo | null;
      const port = address?.port ?? config.port;
      const host = config.host.includes(':') ? `[${config.host}]` : config.host;
      const base = `http://${host}:${port}`;
      router.listening(createOriginHostCheck({ host: config.host, port, allowedOrigins: config.allowedOrigins, allowedHosts: config.allowedHosts }), base);
      if (sweepEvery > 0) {
        sweeper = setInterval(() => endpoint.sweep(), sweepEvery);
        sweeper.unref();
      }
      return new URL(`${base}${config.path}`);
    },
    get sessions() {
      return legacy.size;
    },
    get authFailures() {
      return failures.counts;
    },
    reloadAuth(auth) {
      const jwtChanged = JSON.stringify(router.auth?.jwt) !== JSON.stringify(auth?.jwt);
      const authenticator = router.setAuth(auth); // a new JWT verifier: its verification cache starts empty
      proxy.gate.revise(); // answers in flight are decided again for who their callers are now
      return identities.recheck(authenticator, jwtChanged);
    },
    get openStreams() {
      return legacy.openStreams;
    },
    sweep() {
      identities.expire();
      return legacy.sweepIdle();
    },
    close() {
      closing ??= (async () => {
        clearInterval(sweeper);
        identities.close();
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        modern.closeListens();
        legacy.endAll();
        await modern.closeHandler();
        server.closeAllConnections();
        await stopped;
      })();
      return closing;
    },
    [Symbol.asyncDispose]() {
      return endpoint.close();
    },
  };
  return endpoint;
}
