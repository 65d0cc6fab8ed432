// Opening downstream sessions on the shared core: a live view of who each acts for, deliveries decided per delivery, one facade Server per era.
import type { Server } from '@modelcontextprotocol/server';
import type { Caller } from '../caller.js';
import type { AccessGate } from '../access/gate.js';
import { LEGACY_REVISION, MODERN_REVISION } from '../eras/claim.js';
import type { Session, SessionRegistry } from '../federation/sessions.js';
import type { SubscriptionRelay } from '../federation/subscriptions.js';
import type { Logger } from '../logger.js';
import { createFacadeServer } from './facade.js';
import type { Era } from '../eras/claim.js';
import type { CallerIdentity, DownstreamSession, SessionOptions } from './proxy-types.js';
import { noopMetrics, type Metrics, type SessionKind } from '../observe/metrics.js';

/** Options of {@link SessionOpener}. */
export interface SessionOpenerOptions {
  gate: AccessGate;
  sessions: SessionRegistry;
  relay: SubscriptionRelay;
  logger: Logger;
  serverInfo: { name: string; version: string };
  /** Who a session acts for when its options name nobody: the stdio caller of the config. */
  defaultCaller: CallerIdentity;
  /** Told about sessions and listens opening and closing. Default: {@link noopMetrics}. */
  metrics?: Metrics;
}

/** The session of stateless requests: it never subscribes (2026 has no resources/subscribe) nor hears anything. */
const STATELESS: Session = { id: 'stateless', sendUpdated: () => undefined, sendListChanged: () => undefined };

/**
 * Opens downstream sessions (and stateless request Servers) on the shared core, and keeps the
 * session Servers it made until they close, for shutdown.
 *
 * @example
 * const opener = new SessionOpener({ gate, sessions, relay, logger, serverInfo, defaultCaller });
 * await opener.open().createServer('legacy').connect(transport);
 */
export class SessionOpener {
  private readonly servers = new Set<Server>();
  private ids = 0;

  constructor(private readonly options: SessionOpenerOptions) {}

  /** A Server for one stateless request (see `Proxy.statelessServer`). */
  stateless(era: Era, caller: Caller): Server {
    const { gate, logger, serverInfo } = this.options;
    return createFacadeServer({ gate, caller, session: STATELESS, logger, serverInfo, era });
  }

  /** Opens one downstream session (see `Proxy.openSession`). */
  open(sessionOptions: SessionOptions = {}): DownstreamSession {
    const { gate, sessions, relay, logger, serverInfo } = this.options;
    const servers = this.servers;
    let current: Server | undefined;
    let open = true;
    const id = sessionOptions.id ?? `s${++this.ids}`;
    let identity: Caller = { ...(sessionOptions.caller ?? this.options.defaultCaller), session: id };
    // A live view: the facade and every delivery see the identity the session has now.
    const caller: Caller = {
      get principal() {
        return identity.principal;
      },
      get roles() {
        return identity.roles;
      },
      get transport() {
        return identity.transport;
      },
      get revoked() {
        return identity.revoked;
      },
      session: id,
    };
    // Counted once: a listen (a session whose notifications go to a sink) when opened, a session at its first Server.
    const metrics = this.options.metrics ?? noopMetrics;
    let counted: { kind: SessionKind; listen: boolean } | undefined;
    if (sessionOptions.sink && metrics.enabled) {
      counted = { kind: { transport: caller.transport, era: MODERN_REVISION }, listen: true };
      metrics.listen(counted.kind, 1);
    }
    const sendUpdated = sessionOptions.sink?.sendUpdated ?? ((uri: string) => void current?.sendResourceUpdated({ uri }).catch(() => undefined));
    const session: Session = {
      id,
      principal: caller.principal,
      roles: caller.roles,
      // Decided again at every delivery: a reload can revoke a standing subscription.
      sendUpdated: (uri) => {
        let allowed = false;
        try {
          allowed = gate.deliver(caller, uri);
        } catch (err) {
          logger.error({ session: id, err: String(err) }, 'update not delivered: audit log failed');
        }
        if (allowed) sendUpdated(uri);
      },
      sendListChanged: sessionOptions.sink?.sendListChanged ?? (() => void current?.sendResourceListChanged().catch(() => undefined)),
    };
    sessions.add(session);
    const handle: DownstreamSession = {
      session,
      caller,
      setIdentity(next) {
        identity = { ...next, session: id };
      },
      createServer(era) {
        const server = createFacadeServer({ gate, caller, session, logger, serverInfo, era });
        if (!counted && open && metrics.enabled) {
          counted = { kind: { transport: caller.transport, era: era === 'modern' ? MODERN_REVISION : LEGACY_REVISION }, listen: false };
          metrics.session(counted.kind, 1);
        }
        current = server;
        servers.add(server);
        server.onclose = () => {
          servers.delete(server);
          if (current === server) current = undefined;
        };
        // Malformed input is the client's problem, logged quietly.
        server.onerror = (err) => logger.debug({ session: session.id, err: err.message }, 'session transport');
        // Which revision and which client, once per session (a 2026 connection has no handshake to wait for).
        const opened = () =>
          logger.info(
            {
              session: id,
              principal: caller.principal,
              protocol: era === 'modern' ? MODERN_REVISION : server.getNegotiatedProtocolVersion(),
              client: server.getClientVersion(),
            },
            'client session opened',
          );
        if (era === 'modern') opened();
        else server.oninitialized = opened;
        return server;
      },
      close() {
        if (!open) return;
        open = false;
        if (counted) metrics[counted.listen ? 'listen' : 'session'](counted.kind, -1);
        sessions.delete(session);
        relay.releaseSession(session);
      },
    };
    return handle;
  }

  /** Closes every session Server still open (shutdown), whatever each close does. */
  async closeServers(): Promise<void> {
    await Promise.allSettled([...this.servers].map((s) => s.close()));
  }
}
