// The Streamable HTTP endpoint: both eras on one path, every request authenticated, one shared core behind all sessions.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, type AuthInfo } from '@modelcontextprotocol/server';
import type { Caller } from '../../access/caller.js';
import type { AuthConfig, HttpConfig } from '../../config/schema.js';
import { createAuthenticator, wwwAuthenticate, type AuthResult, type AuthSuccess, type Authenticator } from '../auth/authenticator.js';
import { ANONYMOUS } from '../auth/credential.js';
import { AuthFailureLog, type AuthFailureCounts } from '../auth/failure-log.js';
import { protectedResourceMetadata, protectedResourceMetadataPaths } from '../auth/protected-resource.js';
import { createOriginHostCheck, type OriginHostCheck } from '../origin-host.js';
import type { Logger } from '../../logger.js';
import type { DownstreamSession, Proxy } from '../proxy-types.js';
import { authInfoFor, callerOf } from '../request-caller.js';
import { readBody } from './body.js';
import { LiveIdentities, type Held } from './live-identities.js';
import { isJsonContentType } from './content-type.js';
import { echoIdAsSent } from './echo-id.js';
import { DEFAULT_MAX_DEPTH, exceedsDepth } from '../../wire/json-depth.js';
import { readableId } from '../../wire/envelope.js';
import { errorText, spelledId } from '../../wire/raw-id.js';
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

/** One 2025-11-25 session, bound to the credential kind and identity that created it. */
interface LegacySession {
  id: string;
  /** Who the session acts for now (its latest credential, as last resolved). */
  principal: string;
  /** What the session is bound to (see `Credential.binding`): a request with another gets the unknown-session answer. */
  binding: string;
  /** The session's current credential: refreshed by each request, resolved again on reload. */
  held: Held;
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
/** The methods the MCP path serves; any other gets 405 with this `Allow`. */
const MCP_METHODS = 'GET, POST, DELETE';

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
  // One count of failed authentications for the endpoint's life, across reloads of `auth`.
  const failures = new AuthFailureLog({ logger, ...(options.clock ? { now: () => options.clock!.now() } : {}) });
  const makeAuthenticator = (auth: AuthConfig | undefined): Authenticator | undefined =>
    auth && createAuthenticator(auth, { logger, failures, ...(options.now ? { now: options.now } : {}) });
  let authConfig = options.auth;
  let authenticator = makeAuthenticator(authConfig);
  let guard: OriginHostCheck | undefined; // made once the port is known
  const clock = options.clock ?? Date;
  const sessions = new Map<string, LegacySession>();
  const listens = new Set<OpenListen>();
  const jwtNow = options.now ? () => options.now!().getTime() : () => Date.now();
  const identities = new LiveIdentities({ now: jwtNow });
  let requests = 0;
  const bounds = new PrincipalBounds({ proxy, logger, http: config, ...(options.perPrincipal ? { wire: options.perPrincipal } : {}) });
  let closing: Promise<void> | undefined;
  let base = '';

  const modern = createMcpHandler(
    (ctx) => {
      const caller = callerOf(ctx.authInfo);
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

  // CONNECT never reaches 'request': Node hands it over as a raw socket, which would otherwise hang.
  server.on('connect', (_req, socket) => {
    if (socket.writable) socket.end(`HTTP/1.1 405 Method Not Allowed\r\nallow: ${MCP_METHODS}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
    else socket.destroy();
  });

  const metadataPaths = new Set(protectedResourceMetadataPaths(config.path));
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    // Origin and Host first, on every path: a DNS-rebinding page must not read even /healthz.
    const checked = guard ? guard(req.headersDistinct) : ({ ok: false, reason: 'host', message: 'not listening' } as const);
    if (!checked.ok) {
      logger.info({ why: checked.reason, origin: req.headers.origin, host: req.headers.host }, 'http: request refused');
      return json(res, 403, rpcError(-32600, `Forbidden: ${checked.message}`));
    }
    const readOnly = url.pathname === '/healthz' || url.pathname === '/readyz' || metadataPaths.has(url.pathname);
    if (readOnly && req.method !== 'GET') return json(res, 405, { error: 'method_not_allowed' }, { allow: 'GET' });
    if (url.pathname === '/healthz') return json(res, 200, { status: 'ok' });
    if (url.pathname === '/readyz') return readyz(req, res);
    if (metadataPaths.has(url.pathname)) {
      // Served only when there is an authorization server to name (auth.jwt.issuer): with static
      // tokens alone the document would only send OAuth-capable clients on a flow that cannot work.
      if (authConfig?.jwt?.issuer === undefined) return json(res, 404, { error: 'not_found' });
      return json(res, 200, protectedResourceMetadata(`${base}${config.path}`, authConfig));
    }
    if (url.pathname !== config.path) return json(res, 404, { error: 'not_found' });
    if (req.method !== 'GET' && req.method !== 'POST' && req.method !== 'DELETE') {
      return json(res, 405, rpcError(-32000, 'Method not allowed'), { allow: MCP_METHODS });
    }
    const who = await authenticate(req);
    if (!who.ok) {
      const metadataUrl = authConfig?.jwt?.issuer === undefined ? undefined : `${base}/.well-known/oauth-protected-resource${config.path}`;
      return json(res, 401, rpcError(-32001, who.reason === 'missing' ? 'Unauthorized' : 'Invalid token'), {
        'www-authenticate': wwwAuthenticate(metadataUrl, who.reason),
      });
    }

    if (await bounds.refusedForOutput(req, res, who)) return;
    let body: unknown;
    let text = '';
    if (req.method === 'POST') {
      if (!isJsonContentType(req.headersDistinct['content-type'])) {
        return json(res, 415, rpcError(-32000, 'Unsupported Media Type: Content-Type must be application/json'));
      }
      const read = await readBody(req, config.maxBodyBytes);
      if (!read.ok) {
        if (read.reason === 'too-large') return json(res, 413, rpcError(-32600, `Request body exceeds ${config.maxBodyBytes} bytes`), { connection: 'close' });
        return;
      }
      text = read.text;
      try {
        body = JSON.parse(text) as unknown;
      } catch {
        return json(res, 400, rpcError(-32700, 'Parse error'));
      }
      // Nothing deeper than wire.maxDepth goes on, in either era (the SDK and every recursive walk
      // would overflow the stack on it); answered like stdio, with the id when it can be read.
      if (exceedsDepth(text, maxDepth)) {
        const id = typeof body === 'object' && body !== null && !Array.isArray(body) ? readableId((body as { id?: unknown }).id) : null;
        const answer = errorText(spelledId(id, text), -32600, `Invalid Request: message nests deeper than ${maxDepth} levels`, { limit: maxDepth });
        return void res.writeHead(400, { 'content-type': 'application/json' }).end(answer);
      }
    }
    if (await bounds.refusedInFlight(req, res, who, body)) return;
    const protocolHeader = header(req, 'mcp-protocol-version');
    if (isModernRequest(req.method, protocolHeader, body)) return serveModern(req, res, body, who, text);
    return serveLegacy(req, res, body, who, text);
  }

  async function authenticate(req: IncomingMessage): Promise<AuthResult> {
    if (!authenticator) return { ok: true, ...ANONYMOUS.identity, credential: ANONYMOUS };
    return authenticator.authenticate(req.headersDistinct.authorization); // duplicates are refused there
  }

  /**
   * The caller of one request, from its own credential; kept current while the request is in
   * flight (a reload that changes or removes its credential changes or revokes it, and the gate
   * decides its answer again).
   */
  function requestCaller(who: AuthSuccess, session: string, res: ServerResponse): Caller {
    const caller = { principal: who.principal, roles: who.roles, session, transport: 'http' as const, revoked: false };
    const held = identities.hold(
      who.credential,
      {
        refresh: (c) => Object.assign(caller, c.identity),
        revoke: () => void (caller.revoked = true),
      },
      { expires: false },
    );
    res.once('close', () => held.release());
    return caller;
  }

  async function serveModern(req: IncomingMessage, res: ServerResponse, body: unknown, who: AuthSuccess, text: string) {
    const caller = requestCaller(who, `r${++requests}`, res);
    const message = (typeof body === 'object' && body !== null ? body : {}) as { id?: string | number; method?: string; params?: { notifications?: unknown } };
    // A numeric id written otherwise than JSON.stringify would (`1e2`) is echoed as sent.
    if (typeof message.id === 'number') {
      const spelled = spelledId(message.id, text);
      if (spelled !== String(message.id)) echoIdAsSent(res, message.id, spelled);
    }
    if (message.method === 'subscriptions/listen' && (typeof message.id === 'string' || typeof message.id === 'number')) {
      if (listens.size >= config.maxSessions) {
        logger.warn({ limit: config.maxSessions }, 'http: listen refused: maxSessions open listens');
        return json(res, 503, rpcError(-32000, 'Too many open listens'), { 'retry-after': '1' });
      }
      const releaseListen = await bounds.listen(res, caller);
      if (!releaseListen) return;
      res.once('close', releaseListen);
      logger.debug({ principal: caller.principal, session: caller.session }, 'http: listen');
      // The listen acts for its credential as resolved now: refreshed or closed by a reload, closed at its expiry.
      let downstream: DownstreamSession | undefined;
      let listen: OpenListen | undefined;
      let revoked = false;
      const held = identities.hold(who.credential, {
        refresh: (c) => downstream?.setIdentity({ ...c.identity, transport: 'http' }),
        revoke: (why) => {
          revoked = true;
          downstream?.setIdentity({ ...who.credential.identity, transport: 'http', revoked: true });
          logger.info({ session: caller.session, principal: caller.principal, why: `credential ${why}` }, 'http: listen closed');
          listen?.close();
        },
      });
      res.once('close', () => held.release());
      listen = await serveListen(res, message as { id: string | number }, {
        openSession: (o) => (downstream = proxy.openSession({ ...o, caller: { ...held.credential.identity, transport: 'http', ...(revoked ? { revoked } : {}) }, id: caller.session })),
        accept: (s, uri) => proxy.gate.listen(s.caller, s.session, uri),
        maxQueuedBytes: options.maxQueuedBytes,
        keepAliveMs: KEEP_ALIVE_MS,
      });
      if (revoked) return listen.close();
      listens.add(listen);
      const opened = listen;
      res.once('close', () => listens.delete(opened));
      return;
    }
    (req as IncomingMessage & { auth?: AuthInfo }).auth = authInfoFor(caller);
    await (await modernHandler())(req, res, body);
  }

  async function serveLegacy(req: IncomingMessage, res: ServerResponse, body: unknown, who: AuthSuccess, text: string) {
    const id = header(req, 'mcp-session-id');
    if (id !== undefined) {
      const session = sessions.get(id);
      // Another credential kind or identity than the one that opened it: the session does not exist.
      if (!session || session.binding !== who.credential.binding) return json(res, 404, NO_SESSION);
      // The same holder with a newer credential: standing deliveries follow it from now on.
      session.held.update(who.credential);
      session.principal = who.principal;
      session.downstream.setIdentity({ ...who.credential.identity, transport: 'http' });
      return withSession(session, req, res, body, who, text);
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
    const held = identities.hold(who.credential, {
      refresh: (c) => {
        downstream.setIdentity({ ...c.identity, transport: 'http' });
        const s = sessions.get(sessionId);
        if (s) s.principal = c.identity.principal;
      },
      revoke: (why) => end(sessionId, `credential ${why}`),
    });
    const session: LegacySession = {
      id: sessionId,
      principal: who.principal,
      binding: who.credential.binding,
      held,
      transport,
      downstream,
      lastActive: clock.now(),
      busy: 0,
      release: releaseSession,
    };
    sessions.set(sessionId, session);
    logger.info({ session: sessionId, principal: who.principal }, 'http: session opened');
    await downstream.createServer('legacy').connect(transport);
    withSession(session, req, res, body, who, text);
  }

  function withSession(session: LegacySession, req: IncomingMessage, res: ServerResponse, body: unknown, who: AuthSuccess, text: string): void {
    session.busy++;
    session.lastActive = clock.now();
    res.once('close', () => {
      session.busy--;
      session.lastActive = clock.now();
    });
    // Each request acts for its own credential, whatever the session's other requests carry.
    const extra = req.method === 'POST' ? { authInfo: authInfoFor(requestCaller(who, session.id, res)) } : undefined;
    session.transport.handle(req, res, body, text, extra);
  }

  function end(id: string, why: string): void {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    session.held.release();
    session.release();
    session.downstream.close();
    void session.transport.close(); // idempotent: a no-op when the transport is what ended it
    logger.info({ session: id, principal: session.principal, why }, 'http: session closed');
  }

  /**
   * Ready when some upstream is. Only a caller with valid credentials hears which upstreams there
   * are, and only those the policy lets it see anything on; everyone else gets `{ ready }`.
   */
  async function readyz(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const all = proxy.pool.upstreams;
    const ready = all.some((u) => u.status === 'ready');
    const status = ready ? 200 : 503;
    const who = authenticator && req.headersDistinct.authorization ? await authenticator.authenticate(req.headersDistinct.authorization) : undefined;
    if (!who?.ok) return json(res, status, { ready });
    const caller = { principal: who.principal, roles: who.roles };
    const upstreams = all.filter((u) => proxy.gate.visibleServer(caller, u.id)).map((u) => ({ server: u.id, status: u.status }));
    json(res, status, { ready, upstreams });
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
    get authFailures() {
      return failures.counts;
    },
    reloadAuth(auth) {
      const jwtChanged = JSON.stringify(authConfig?.jwt) !== JSON.stringify(auth?.jwt);
      authenticator = makeAuthenticator(auth); // a new JWT verifier: its verification cache starts empty
      authConfig = auth;
      proxy.gate.revise(); // answers in flight are decided again for who their callers are now
      return identities.recheck(authenticator, jwtChanged);
    },
    get openStreams() {
      let n = 0;
      for (const s of sessions.values()) n += s.busy;
      return n;
    },
    sweep() {
      identities.expire();
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
        identities.close();
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
