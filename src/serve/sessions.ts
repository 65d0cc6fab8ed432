// Opening downstream sessions on the shared core: a live view of who each acts for, deliveries decided per delivery, one facade Server per era.
import { withFields } from '../copy.js';
import type { Server } from '@modelcontextprotocol/server';
import type { Caller } from '../caller.js';
import type { AccessGate } from '../access/gate.js';
import type { Session, SessionRegistry } from '../federation/sessions.js';
import type { SubscriptionRelay } from '../federation/subscriptions.js';
import type { Logger } from '../logger.js';
import { createFacadeServer, type Offers } from './facade.js';
import { edgeOf } from '../eras/edges.js';
import { MODERN, type Era } from '../eras/era.js';
import type { InputBridge } from '../eras/input-bridge.js';
import type { ListenCounter } from '../eras/listen-tap.js';
import type { CallerIdentity, DownstreamSession, SessionOptions } from './proxy-types.js';
import { noopMetrics, type Metrics, type SessionKind } from '../observe/metrics.js';
import type { ClassifiedHandler, Send, Wrapper } from '../wire/compose.js';
import { fastLane } from './fast-lane.js';
import { modernLane } from './modern-lane.js';

/** Options of {@link SessionOpener}. */
export interface SessionOpenerOptions {
  gate: AccessGate;
  sessions: SessionRegistry;
  relay: SubscriptionRelay;
  logger: Logger;
  serverInfo: { name: string; version: string };
  /** Who a session acts for when its options name nobody: the stdio caller of the config. */
  defaultCaller: CallerIdentity;
  /** Which of tools and prompts a session opened now is offered. Default: neither. */
  offers?: () => Offers;
  /** Relays upstreams' requests for user input to the caller whose call caused them. Default: none. */
  bridge?: InputBridge;
  /** Told about sessions and listens opening and closing. Default: {@link noopMetrics}. */
  metrics?: Metrics;
  /** Whether stdio connections of an era that allows it take the edge fast lane. Default: true. */
  fastLane?: boolean;
}

const NO_OFFERS: Offers = { tools: false, prompts: false };

/** The session of stateless requests: it never subscribes (2026 has no resources/subscribe) nor hears anything. */
const STATELESS: Session = { id: 'stateless', sendUpdated: () => undefined, sendListChanged: () => undefined };

/**
 * Opens downstream sessions (and stateless request Servers) on the shared core, and keeps the
 * session Servers it made until they close, for shutdown.
 *
 * @example
 * const opener = new SessionOpener({ gate, sessions, relay, logger, serverInfo, defaultCaller });
 * await opener.open().createServer(LEGACY).connect(transport);
 */
export class SessionOpener {
  private readonly servers = new Set<Server>();
  /** The fast lane of each session Server whose era allows one, made with what the Server was offered. */
  private readonly lanes = new WeakMap<Server, (send: Send) => Wrapper<ClassifiedHandler> | undefined>();
  private ids = 0;

  constructor(private readonly options: SessionOpenerOptions) {}

  /** A Server for one stateless request (see `Proxy.statelessServer`). */
  stateless(era: Era, caller: Caller): Server {
    const { gate, logger, serverInfo, bridge } = this.options;
    return createFacadeServer({ gate, caller, session: STATELESS, logger, serverInfo, era, ...this.offered(), ...(bridge ? { bridge } : {}) });
  }

  /** Opens one downstream session (see `Proxy.openSession`). */
  open(sessionOptions: SessionOptions = {}): DownstreamSession {
    const { gate, sessions, relay, logger, serverInfo, bridge } = this.options;
    const { servers, lanes } = this;
    const laneOn = this.options.fastLane !== false;
    const offered = () => this.offered();
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
      counted = { kind: { transport: caller.transport, era: edgeOf(MODERN).revision }, listen: true };
      metrics.listen(counted.kind, 1);
    }
    const sendUpdated = sessionOptions.sink?.sendUpdated ?? ((uri: string) => void current?.sendResourceUpdated({ uri }).catch(() => undefined));
    const session: Session = {
      id,
      // Live, as the caller: a list change is decided for who the session acts for now.
      get principal() {
        return caller.principal;
      },
      get roles() {
        return caller.roles;
      },
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
      sendListChanged:
        sessionOptions.sink?.sendListChanged ??
        ((kind = 'resources') => {
          const server = current;
          if (!server) return;
          // A kind this session was not offered has no capability: the SDK refuses it, and that is fine.
          const sent = kind === 'tools' ? server.sendToolListChanged() : kind === 'prompts' ? server.sendPromptListChanged() : server.sendResourceListChanged();
          void Promise.resolve(sent).catch(() => undefined);
        }),
    };
    sessions.add(session);
    // 2026 listens served on this session's connection (stdio: the listen tap), counted like the HTTP ones; any still open when it closes end with it.
    let listening = 0;
    const listenKind: SessionKind = { transport: caller.transport, era: edgeOf(MODERN).revision };
    const listens: ListenCounter = {
      opened() {
        if (!open || !metrics.enabled) return;
        listening++;
        metrics.listen(listenKind, 1);
      },
      ended() {
        if (listening === 0) return;
        listening--;
        metrics.listen(listenKind, -1);
      },
    };
    const handle: DownstreamSession = {
      session,
      caller,
      listens,
      setIdentity(next) {
        identity = withFields(next, { session: id }); // per HTTP request: not a spread that adds a key (~1 µs on Node 20)
      },
      createServer(era) {
        const offers = offered();
        const server = createFacadeServer({ gate, caller, session, logger, serverInfo, era, ...offers, ...(bridge ? { bridge } : {}) });
        if (laneOn && edgeOf(era).fastLane) {
          const lane = { gate, caller, logger, edge: edgeOf(era), offers: offers.offers ?? NO_OFFERS, bridge, server };
          lanes.set(server, (send) => fastLane({ ...lane, send }));
        } else if (laneOn && era === MODERN) {
          // 2026-07-28 on stdio: the lane beside SDK v2's serveStdio entry (asked for by the stdio connection only).
          lanes.set(server, (send) => modernLane({ gate, caller, logger, edge: edgeOf(era), offers: offers.offers ?? NO_OFFERS, bridge, server, send }));
        }
        if (!counted && open && metrics.enabled) {
          counted = { kind: { transport: caller.transport, era: edgeOf(era).revision }, listen: false };
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
        // Which revision and which client, once per session, when the era says it is open.
        edgeOf(era).opened(server, (protocol) =>
          // eslint-disable-next-line @typescript-eslint/no-deprecated -- logged once at open, outside any request's context
          logger.info({ session: id, principal: caller.principal, protocol, client: server.getClientVersion() }, 'client session opened'),
        );
        return server;
      },
      fastLane: (server, send) => lanes.get(server)?.(send),
      close() {
        if (!open) return;
        open = false;
        if (counted) metrics[counted.listen ? 'listen' : 'session'](counted.kind, -1);
        for (; listening > 0; listening--) metrics.listen(listenKind, -1); // listens still open end with their session
        sessions.delete(session);
        relay.releaseSession(session);
      },
    };
    return handle;
  }

  private offered(): { offers?: Offers } {
    return this.options.offers ? { offers: this.options.offers() } : {};
  }

  /** Closes every session Server still open (shutdown), whatever each close does. */
  async closeServers(): Promise<void> {
    await Promise.allSettled([...this.servers].map((s) => s.close()));
  }
}
