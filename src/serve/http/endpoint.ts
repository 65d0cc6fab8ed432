// The Streamable HTTP endpoint: both eras on one path, every request authenticated, one shared core behind all sessions.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, type AuthInfo } from '@modelcontextprotocol/server';
import type { Caller } from '../../access/caller.js';
import type { AuthConfig, HttpConfig } from '../../config/schema.js';
import { createAuthenticator, wwwAuthenticate, type AuthResult, type Authenticator } from '../auth/authenticator.js';
import { protectedResourceMetadata, protectedResourceMetadataPaths } from '../auth/protected-resource.js';
import { createOriginHostCheck, type OriginHostCheck } from '../origin-host.js';
import type { Logger } from '../../logger.js';
import type { DownstreamSession, Proxy } from '../../proxy.js';
import { readBody } from './body.js';
import { serveListen, type OpenListen } from './listen-stream.js';
import { isModernRequest } from './request-era.js';
import { HttpSessionTransport, refusePost } from './session-transport.js';
import { PrincipalBounds, type PrincipalWireLimits } from './principal-bounds.js';

/** A clock for idle expiry. */
export interface HttpClock {
  now(): number;
}

/** Options of {@link createHttpEndpoint}. */
export interface HttpEndpointOptions {
  proxy: Proxy;
  config: HttpConfig;
  logger: Logger;
  /** Absent: every request is the principal `anonymous` (allowed on loopback only; the CLI checks). */
  auth?: AuthConfig | undefined;
  /** Injected into the JWT verifier (tests): the clock its `exp`/`nbf` checks use. */
  now?: () => Date;
  /** Bound on unsent output per listen stream. */
  maxQueuedBytes: number;
  /** Per-principal bounds on requests in flight and unread answer bytes. Default: the `wire` defaults (64, 64 MiB). */
  perPrincipal?: PrincipalWireLimits;
  /** Clock for idle expiry. Default: `Date`. */
  clock?: HttpClock;
  /** How often idle sessions are swept; 0 never (tests call `sweep()`). Default: min(sessionIdleMs / 4, 60 s). */
  sweepEveryMs?: number;
}

/** A running endpoint. */
export interface HttpEndpoint extends AsyncDisposable {
  /** Binds and resolves with the endpoint's URL (`http://127.0.0.1:<port>/mcp`). */
  listen(): Promise<URL>;
  /** Live 2025-11-25 sessions. */
  readonly sessions: number;
  /** Requests and GET streams of those sessions in progress (a session with one open is not idle). */
  readonly openStreams: number;
  /** Expires sessions idle for `sessionIdleMs` (on the clock); returns how many. */
  sweep(): number;
  /** Replaces the authentication (a reload); sessions stay bound to the principals that made them. */
  reloadAuth(auth: AuthConfig | undefined): void;
  /** Stops accepting, ends listens and sessions (their subscriptions are released). Idempotent. */
  close(): Promise<void>;
}

/** One 2025-11-25 session, bound to the principal that created it. */
interface LegacySession {
  id: string;
  principal: string;
  transport: HttpSessionTransport;
  downstream: DownstreamSession;
  lastActive: number;
  /** Requests and GET streams in progress: a session with one open is not idle. */
  busy: number;
  /** Gives back the principal's session count. */
  release: () => void;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
};
const rpcError = (code: number, message: string) => ({ jsonrpc: '2.0', error: { code, message }, id: null });
/** What an unknown session id gets (the SDK transport's answer): a session of another principal looks the same. */
const NO_SESSION = rpcError(-32001, 'Session not found');
const KEEP_ALIVE_MS = 15_000;

/**
 * Serves MCP over Streamable HTTP at `config.path`:
 *
 * - 2025-11-25 clients get stateful sessions (one lean {@link HttpSessionTransport} per session,
 *   session ids of 128 random bits): POST, GET (the notification stream), DELETE. A session
 *   belongs to the principal that created it: anyone else's request with its id gets the same 404
 *   as an unknown id. Sessions idle for `sessionIdleMs` expire; past `maxSessions` a new one gets 503.
 * - 2026-07-28 requests are stateless (SDK v2's `createMcpHandler` with `legacy: 'reject'`), each
 *   authenticated on its own; `subscriptions/listen` is served here as an SSE response per listen.
 * - `/healthz`, `/readyz` and the OAuth Protected Resource Metadata need no credentials.
 *
 * Every request is checked (Origin/Host, then credentials) before it reaches MCP handling, and its
 * body is bounded (`maxBodyBytes`, 413). Every session and request share the one proxy core.
 */
export function createHttpEndpoint(options: HttpEndpointOptions): HttpEndpoint {
  const { proxy, config, logger } = options;
  const makeAuthenticator = (auth: AuthConfig | undefined): Authenticator | undefined =>
    auth && createAuthenticator(auth, { logger, ...(options.now ? { now: options.now } : {}) });
  let authConfig = options.auth;
  let authenticator = makeAuthenticator(authConfig);
  let guard: OriginHostCheck | undefined; // made once the port is known
  const clock = options.clock ?? Date;
  const sessions = new Map<string, LegacySession>();
  const listens = new Set<OpenListen>();
  const callers = new WeakMap<AuthInfo, Caller>();
  let requests = 0;
  const bounds = new PrincipalBounds({ proxy, logger, http: config, ...(options.perPrincipal ? { wire: options.perPrincipal } : {}) });
  let closing: Promise<void> | undefined;
  let base = '';

  const modern = createMcpHandler(
    (ctx) => {
      const caller = ctx.authInfo && callers.get(ctx.authInfo);
      if (!caller) throw new Error('unauthenticated request reached the MCP handler');
      return proxy.statelessServer('modern', caller);
    },
    { legacy: 'reject', onerror: (err) => logger.debug({ err: err.message }, 'http: modern request') },
  );
  // The Node adapter (and hono under it) is loaded on the first 2026 request, not by every gateway.
  let modernNode: Promise<(req: IncomingMessage, res: ServerResponse, body: unknown) => Promise<void>> | undefined;
  const modernHandler = () =>
    (modernNode ??= import('@modelcontextprotocol/node').then(({ toNodeHandler }) => toNodeHandler(modern, { maxRequestBodySize: config.maxBodyBytes })));

  const server: HttpServer = createServer({
    headersTimeout: config.headersTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // Node checks those two timeouts only every connectionsCheckingInterval (30 s by default), which
    // would let a slow client hold a connection far past them.
    connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(Math.min(config.headersTimeoutMs, config.requestTimeoutMs) / 2))),
  });
  server.on('request', (req, res) => {
    handle(req, res).catch((err: unknown) => {
      logger.warn({ err: String(err) }, 'http: request failed');
      json(res, 500, rpcError(-32603, 'Internal error'));
    });
  });
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
  });

  const metadataPaths = new Set(protectedResourceMetadataPaths(config.path));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'GET' && url.pathname === '/healthz') return json(res, 200, { status: 'ok' });
    if (req.method === 'GET' && url.pathname === '/readyz') return readyz(res);
    if (req.method === 'GET' && metadataPaths.has(url.pathname)) {
      if (!authConfig) return json(res, 404, { error: 'not_found' });
      return json(res, 200, protectedResourceMetadata(`${base}${config.path}`, authConfig));
    }
    if (url.pathname !== config.path) return json(res, 404, { error: 'not_found' });

    const checked = guard ? guard(req.headersDistinct) : ({ ok: false, reason: 'host', message: 'not listening' } as const);
    if (!checked.ok) {
      logger.info({ why: checked.reason, origin: req.headers.origin, host: req.headers.host }, 'http: request refused');
      return json(res, 403, rpcError(-32600, `Forbidden: ${checked.message}`));
    }
    const who = await authenticate(req);
    if (!who.ok) {
      const metadataUrl = `${base}/.well-known/oauth-protected-resource${config.path}`;
      return json(res, 401, rpcError(-32001, who.reason === 'missing' ? 'Unauthorized' : 'Invalid token'), {
        'www-authenticate': wwwAuthenticate(metadataUrl, who.reason),
      });
    }

    if (await bounds.refusedForOutput(req, res, who)) return;
    let body: unknown;
    if (req.method === 'POST') {
      const read = await readBody(req, config.maxBodyBytes);
      if (!read.ok) {
        if (read.reason === 'too-large') return json(res, 413, rpcError(-32600, `Request body exceeds ${config.maxBodyBytes} bytes`), { connection: 'close' });
        return;
      }
      try {
        body = JSON.parse(read.text) as unknown;
      } catch {
        return json(res, 400, rpcError(-32700, 'Parse error'));
      }
    }
    if (await bounds.refusedInFlight(req, res, who, body)) return;
    const protocolHeader = header(req, 'mcp-protocol-version');
    if (isModernRequest(req.method, protocolHeader, body)) return serveModern(req, res, body, who);
    return serveLegacy(req, res, body, who);
  }

  async function authenticate(req: IncomingMessage): Promise<AuthResult> {
    if (!authenticator) return { ok: true, principal: 'anonymous', roles: [] };
    return authenticator.authenticate(req.headersDistinct.authorization); // duplicates are refused there
  }

  async function serveModern(req: IncomingMessage, res: ServerResponse, body: unknown, who: Extract<AuthResult, { ok: true }>) {
    const caller: Caller = { principal: who.principal, roles: who.roles, session: `r${++requests}`, transport: 'http' };
    const message = (typeof body === 'object' && body !== null ? body : {}) as { id?: string | number; method?: string; params?: { notifications?: unknown } };
    if (message.method === 'subscriptions/listen' && (typeof message.id === 'string' || typeof message.id === 'number')) {
      if (listens.size >= config.maxSessions) {
        logger.warn({ limit: config.maxSessions }, 'http: listen refused: maxSessions open listens');
        return json(res, 503, rpcError(-32000, 'Too many open listens'), { 'retry-after': '1' });
      }
      const releaseListen = await bounds.listen(res, caller);
      if (!releaseListen) return;
      res.once('close', releaseListen);
      logger.debug({ principal: caller.principal, session: caller.session }, 'http: listen');
      const identity = { principal: caller.principal, roles: caller.roles, transport: 'http' as const };
      const listen = await serveListen(res, message as { id: string | number }, {
        openSession: (o) => proxy.openSession({ ...o, caller: identity, id: caller.session }),
        accept: (s, uri) => proxy.gate.listen(s.caller, s.session, uri),
        maxQueuedBytes: options.maxQueuedBytes,
        keepAliveMs: KEEP_ALIVE_MS,
      });
      listens.add(listen);
      res.once('close', () => listens.delete(listen));
      return;
    }
    const authInfo: AuthInfo = { token: '', clientId: caller.principal, scopes: [...caller.roles] };
    callers.set(authInfo, caller);
    (req as IncomingMessage & { auth?: AuthInfo }).auth = authInfo;
    await (await modernHandler())(req, res, body);
  }

  async function serveLegacy(req: IncomingMessage, res: ServerResponse, body: unknown, who: Extract<AuthResult, { ok: true }>) {
    const id = header(req, 'mcp-session-id');
    if (id !== undefined) {
      const session = sessions.get(id);
      if (!session || session.principal !== who.principal) return json(res, 404, NO_SESSION);
      return withSession(session, req, res, body);
    }
    if (req.method !== 'POST' || !isInitialize(body)) {
      return json(res, 400, rpcError(-32000, 'Bad Request: Mcp-Session-Id header is required'));
    }
    const refused = refusePost(req); // a refused initialize takes no session
    if (refused) return json(res, refused.status, rpcError(-32000, refused.message));
    if (sessions.size >= config.maxSessions) {
      logger.warn({ limit: config.maxSessions }, 'http: session refused: maxSessions reached');
      return json(res, 503, rpcError(-32000, 'Too many sessions'), { 'retry-after': '1' });
    }
    const releaseSession = await bounds.session(res, who, (body as { id?: string | number }).id);
    if (!releaseSession) return;
    const sessionId = randomBytes(16).toString('base64url'); // 128 bits from the CSPRNG
    const downstream = proxy.openSession({ id: sessionId, caller: { principal: who.principal, roles: who.roles, transport: 'http' } });
    const transport = new HttpSessionTransport(sessionId, {
      maxQueuedBytes: options.maxQueuedBytes,
      keepAliveMs: KEEP_ALIVE_MS,
      onClosed: () => end(sessionId, 'closed'),
    });
    const session: LegacySession = { id: sessionId, principal: who.principal, transport, downstream, lastActive: clock.now(), busy: 0, release: releaseSession };
    sessions.set(sessionId, session);
    logger.info({ session: sessionId, principal: who.principal }, 'http: session opened');
    await downstream.createServer('legacy').connect(transport);
    withSession(session, req, res, body);
  }

  function withSession(session: LegacySession, req: IncomingMessage, res: ServerResponse, body: unknown): void {
    session.busy++;
    session.lastActive = clock.now();
    res.once('close', () => {
      session.busy--;
      session.lastActive = clock.now();
    });
    session.transport.handle(req, res, body);
  }

  function end(id: string, why: string): void {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    session.release();
    session.downstream.close();
    void session.transport.close(); // idempotent: a no-op when the transport is what ended it
    logger.info({ session: id, principal: session.principal, why }, 'http: session closed');
  }

  function readyz(res: ServerResponse): void {
    const upstreams = proxy.pool.upstreams.map((u) => ({ server: u.id, status: u.status }));
    const ready = upstreams.some((u) => u.status === 'ready');
    json(res, ready ? 200 : 503, { ready, upstreams });
  }

  function bound(): { host: string; port: number } {
    const address = server.address() as AddressInfo | null;
    return { host: config.host, port: address?.port ?? config.port };
  }

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
      const { port } = bound();
      guard = createOriginHostCheck({ host: config.host, port, allowedOrigins: config.allowedOrigins, allowedHosts: config.allowedHosts });
      const host = config.host.includes(':') ? `[${config.host}]` : config.host;
      base = `http://${host}:${port}`;
      if (sweepEvery > 0) {
        sweeper = setInterval(() => endpoint.sweep(), sweepEvery);
        sweeper.unref?.();
      }
      return new URL(`${base}${config.path}`);
    },
    get sessions() {
      return sessions.size;
    },
    reloadAuth(auth) {
      authenticator = makeAuthenticator(auth);
      authConfig = auth;
    },
    get openStreams() {
      let n = 0;
      for (const s of sessions.values()) n += s.busy;
      return n;
    },
    sweep() {
      const now = clock.now();
      let n = 0;
      for (const s of [...sessions.values()]) {
        if (s.busy === 0 && now - s.lastActive >= config.sessionIdleMs) {
          end(s.id, 'idle');
          n++;
        }
      }
      return n;
    },
    close() {
      closing ??= (async () => {
        clearInterval(sweeper);
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const l of [...listens]) l.close();
        for (const id of [...sessions.keys()]) end(id, 'shutdown');
        await modern.close().catch(() => undefined);
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

/** A header's single value (undefined when absent). */
function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function isInitialize(body: unknown): boolean {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && (body as { method?: unknown }).method === 'initialize';
}
