// The 2025-11-25 path of the HTTP endpoint: stateful sessions bound to the principal that opened them, with idle expiry.
import { withFields } from '../../copy.js';
import { LEGACY } from '../../eras/era.js';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpConfig } from '../../config/schema.js';
import type { Logger } from '../../logger.js';
import type { AuthSuccess } from '../auth/authenticator.js';
import type { Identity } from '../auth/identity.js';
import type { DownstreamSession, Proxy } from '../proxy-types.js';
import { authInfoFor } from '../request-caller.js';
import type { Held, LiveIdentities } from './live-identities.js';
import type { PrincipalBounds } from './principal-bounds.js';
import { httpErrorBody, JsonRpc } from '../../errors.js';
import { Methods } from '../../protocol.js';
import { header, json } from './reply.js';
import { requestCaller } from './request-identity.js';
import { composeHttpSession } from './session-connection.js';
import type { Send } from '../../wire/compose.js';
import { refusePost, type HttpSessionTransport } from './session-transport.js';

/** A clock for idle expiry. */
export interface HttpClock {
  now(): number;
}

/** Options of {@link LegacySessions}. */
export interface LegacySessionsOptions {
  proxy: Pick<Proxy, 'openSession' | 'metrics'>;
  config: Pick<HttpConfig, 'maxSessions' | 'sessionIdleMs'>;
  logger: Logger;
  /** The credentials of open sessions and requests, resolved again on reload. */
  identities: LiveIdentities;
  bounds: PrincipalBounds;
  clock: HttpClock;
  /** Bound on unsent output per GET stream. */
  maxQueuedBytes: number;
  /** Interval of SSE keep-alive comments, in ms. */
  keepAliveMs: number;
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
  /** The identity the session's downstream acts for now, as its credential named it (a static token's is one object for the table's life). */
  identity: Identity;
  transport: HttpSessionTransport;
  downstream: DownstreamSession;
  lastActive: number;
  /** Requests and GET streams in progress: a session with one open is not idle. */
  busy: number;
  /** Gives back the principal's session count. */
  release: () => void;
}

/** What an unknown session id gets (the SDK transport's answer): a session of another principal looks the same. */
const NO_SESSION = httpErrorBody(JsonRpc.SESSION_NOT_FOUND, 'Session not found');

/**
 * The live 2025-11-25 sessions: one lean {@link HttpSessionTransport} each, session ids of 128
 * random bits. A session belongs to the principal that created it: anyone else's request with its
 * id gets the same 404 as an unknown id. Past `maxSessions` a new one gets 503.
 */
export class LegacySessions {
  private readonly sessions = new Map<string, LegacySession>();

  constructor(private readonly options: LegacySessionsOptions) {}

  /** Live sessions. */
  get size(): number {
    return this.sessions.size;
  }

  /** Requests and GET streams of the sessions in progress. */
  get openStreams(): number {
    let n = 0;
    for (const s of this.sessions.values()) n += s.busy;
    return n;
  }

  /** Serves one authenticated, checked 2025-11-25 request: in its session, or opening one (`initialize`). */
  async serve(req: IncomingMessage, res: ServerResponse, body: unknown, who: AuthSuccess, text: string): Promise<void> {
    const { proxy, config, logger, identities, bounds, clock } = this.options;
    const sessions = this.sessions;
    const id = header(req, 'mcp-session-id');
    if (id !== undefined) {
      const session = sessions.get(id);
      // Another credential kind or identity than the one that opened it: the session does not exist.
      if (!session || session.binding !== who.credential.binding) return json(res, 404, NO_SESSION);
      // The same holder with a newer credential: standing deliveries follow it from now on.
      session.held.update(who.credential);
      session.principal = who.principal;
      // The same identity object (a static token's, as long as the table stands) needs no new copy.
      if (who.credential.identity !== session.identity) {
        session.identity = who.credential.identity;
        session.downstream.setIdentity(withFields(who.credential.identity, { transport: 'http' as const }));
      }
      return this.withSession(session, req, res, body, who, text);
    }
    if (req.method !== 'POST' || !isInitialize(body)) {
      return json(res, 400, httpErrorBody(JsonRpc.SERVER_ERROR, 'Bad Request: Mcp-Session-Id header is required'));
    }
    const refused = refusePost(req); // a refused initialize takes no session
    if (refused) return json(res, refused.status, httpErrorBody(JsonRpc.SERVER_ERROR, refused.message));
    if (sessions.size >= config.maxSessions) {
      logger.warn({ limit: config.maxSessions }, 'http: session refused: maxSessions reached');
      return json(res, 503, httpErrorBody(JsonRpc.SERVER_ERROR, 'Too many sessions'), { 'retry-after': '1' });
    }
    const releaseSession = await bounds.session(res, who, (body as { id?: string | number }).id);
    if (!releaseSession) return;
    const sessionId = randomBytes(16).toString('base64url'); // 128 bits from the CSPRNG
    const downstream = proxy.openSession({ id: sessionId, caller: { principal: who.principal, roles: who.roles, transport: 'http' } });
    // The session's Server, and in front of it the edge fast lane (plain reads and calls answered
    // past the SDK, on the same tail the Server answers on).
    const server = downstream.createServer(LEGACY);
    let answer: Send = () => Promise.reject(new Error('Not connected'));
    const { transport, tail } = composeHttpSession(
      sessionId,
      {
        maxQueuedBytes: this.options.maxQueuedBytes,
        keepAliveMs: this.options.keepAliveMs,
        onClosed: () => this.end(sessionId, 'closed'),
        onDropped: (method) => proxy.metrics.notification(method === Methods.listChanged ? 'list_changed' : 'updated', 'dropped'),
      },
      { inbound: [downstream.fastLane?.(server, (message, options) => answer(message, options))], outbound: [] },
    );
    answer = (message, options) => tail.send(message, options);
    const held = identities.hold(who.credential, {
      refresh: (c) => {
        downstream.setIdentity(withFields(c.identity, { transport: 'http' as const }));
        const s = sessions.get(sessionId);
        if (s) {
          s.principal = c.identity.principal;
          s.identity = c.identity;
        }
      },
      revoke: (why) => this.end(sessionId, `credential ${why}`),
    });
    const session: LegacySession = {
      id: sessionId,
      principal: who.principal,
      binding: who.credential.binding,
      held,
      identity: who.credential.identity,
      transport,
      downstream,
      lastActive: clock.now(),
      busy: 0,
      release: releaseSession,
    };
    sessions.set(sessionId, session);
    logger.info({ session: sessionId, principal: who.principal }, 'http: session opened');
    await server.connect(tail);
    this.withSession(session, req, res, body, who, text);
  }

  /** Ends session `id` (its subscriptions are released) and logs `why`; unknown ids are ignored. */
  end(id: string, why: string): void {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    session.held.release();
    session.release();
    session.downstream.close();
    void session.transport.close(); // idempotent: a no-op when the transport is what ended it
    this.options.logger.info({ session: id, principal: session.principal, why }, 'http: session closed');
  }

  /** Expires the sessions idle for `sessionIdleMs` (on the clock); returns how many. */
  sweepIdle(): number {
    const now = this.options.clock.now();
    let n = 0;
    for (const s of [...this.sessions.values()]) {
      if (s.busy === 0 && now - s.lastActive >= this.options.config.sessionIdleMs) {
        this.end(s.id, 'idle');
        n++;
      }
    }
    return n;
  }

  /** Ends every session (shutdown). */
  endAll(): void {
    for (const id of [...this.sessions.keys()]) this.end(id, 'shutdown');
  }

  private withSession(session: LegacySession, req: IncomingMessage, res: ServerResponse, body: unknown, who: AuthSuccess, text: string): void {
    const { clock, identities } = this.options;
    session.busy++;
    session.lastActive = clock.now();
    res.once('close', () => {
      session.busy--;
      session.lastActive = clock.now();
    });
    // Each request acts for its own credential, whatever the session's other requests carry.
    const extra = req.method === 'POST' ? { authInfo: authInfoFor(requestCaller(identities, who, session.id, res)) } : undefined;
    session.transport.handle(req, res, body, text, extra);
  }
}

function isInitialize(body: unknown): boolean {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && (body as { method?: unknown }).method === 'initialize';
}
