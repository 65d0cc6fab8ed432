// Composition root: builds the shared core (pool, cache, relay, lister, resources), wires events, serves sessions.
import { randomBytes } from 'node:crypto';
import type { JSONRPCMessage, MessageExtraInfo, Server, Transport } from '@modelcontextprotocol/server';
import { ReadCache, type Clock } from './federation/cache.js';
import type { FederateConfig } from './config/schema.js';
import type { ServerChanges } from './config/reload-diff.js';
import { createCursorCodec } from './federation/cursor.js';
import { createFacadeServer, type Era } from './serve/facade.js';
import { MODERN_REVISION } from './eras/claim.js';
import { ListenTap } from './eras/listen-tap.js';
import { hasModernClaim } from './eras/claim.js';
import { installServerGuard } from './wire/dispatch.js';
import { TransportFailure, type OutputLoss } from './wire/line-transport.js';
import { Lister, type SetTimer } from './federation/listing.js';
import type { Logger } from './logger.js';
import { Methods } from './protocol.js';
import { FederatedResources } from './federation/resources.js';
import { IssuedUris } from './federation/issued-uris.js';
import { isPlainCanonical } from './access/normalize-uri.js';
import { SessionRegistry, type Session } from './federation/sessions.js';
import { SubscriptionRelay } from './federation/subscriptions.js';
import { createCoherence } from './federation/coherence.js';
import { defaultTransportFactory, type TransportFactory } from './upstream/transports.js';
import { UpstreamPool } from './upstream/pool.js';
import { createUriCodec, type UriCodec } from './federation/uri.js';
import { VERSION } from './version.js';
import type { Caller } from './access/caller.js';
import { AccessGate, type AccessRules } from './access/gate.js';
import { compilePolicy } from './access/policy.js';
import { RateLimiter } from './access/rate-limiter.js';
import { openAuditLog, type AuditLog } from './access/audit-log.js';

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
  /** The audit log. Default: opened from `config.audit` (none: records nothing). */
  audit?: AuditLog;
  /** Monotonic ms clock for rate limits. Default: performance.now. */
  now?: () => number;
  /** Arms the `list.firstWaitMs` timer of each list request. Default: setTimeout. */
  listTimer?: SetTimer;
}

/** A running federation: one shared core, any number of downstream sessions. */
export interface Proxy extends AsyncDisposable {
  readonly pool: UpstreamPool;
  /** The URIs clients see for the enabled upstreams (namespaced, except a `prefix: false` server's). */
  readonly uris: UriCodec;
  readonly resources: FederatedResources;
  readonly cache: ReadCache | undefined;
  readonly relay: SubscriptionRelay;
  readonly sessions: SessionRegistry;
  /** The one decision point (policy, rate limits, audit) every session goes through. */
  readonly gate: AccessGate;
  /**
   * Replaces policy and rate limits from a new configuration (SIGHUP); sessions stay, standing
   * subscriptions are decided again at their next delivery (for who each session is now), answers
   * in flight are decided again before they leave, and every session hears list_changed.
   */
  reload(config: FederateConfig): void;
  /**
   * Applies the `servers` block of a new configuration (a reload), at once: removed upstreams leave
   * (their subscriptions and cached reads are forgotten), restarted ones are replaced by new ones,
   * added ones join, unchanged ones are not touched; URIs route by the new set, and every session
   * hears list_changed. Call it just before {@link Proxy.reload}, in the same tick, so policy
   * compiles against the new server ids. Resolves when the closes and starts have finished.
   */
  applyServers(config: FederateConfig, changes: ServerChanges): Promise<void>;
  /**
   * Connects every upstream in parallel; resolves when each is ready or has failed (and retries
   * later). Idempotent; the first downstream session starts it too.
   */
  start(): Promise<void>;
  /**
   * Serves one downstream connection over `transport` (stdio, or any message stream), in whichever
   * era its client speaks: the first message decides (`initialize`: 2025-11-25; a request with the
   * 2026-07-28 `_meta` envelope, such as `server/discover`: 2026-07-28), as SDK 2.x's `serveStdio`
   * does. The session ends when the transport closes. May be called before `start()` resolves:
   * requests wait for their upstreams' first connection.
   */
  connect(transport: Transport, caller?: CallerIdentity): Promise<Connection>;
  /**
   * Opens one downstream session for a caller whose transport the caller manages (e.g. an HTTP
   * session): its Servers are made by {@link DownstreamSession.createServer}.
   */
  openSession(options?: SessionOptions): DownstreamSession;
  /**
   * A Server for one stateless request (MCP 2026-07-28 over HTTP): it holds no subscriptions and
   * receives no notifications (those travel on `subscriptions/listen` streams).
   */
  statelessServer(era: Era, caller: Caller): Server;
  /** Stops accepting, closes sessions, unsubscribes upstream (best effort), closes upstreams. Idempotent. */
  close(): Promise<void>;
}

/** One served connection. */
export interface Connection {
  /** Ends the connection (answers open listens, closes the transport) and releases its session. Idempotent. */
  close(): Promise<void>;
}

/** A caller before its session is known: the principal and roles (the session id comes from the session). */
export type CallerIdentity = Omit<Caller, 'session'>;

/** Options of {@link Proxy.openSession}. */
export interface SessionOptions {
  /** Who the session acts for. Default: the stdio caller of the config. */
  caller?: CallerIdentity;
  /** The session id (e.g. an HTTP `Mcp-Session-Id`). Default: `s<n>`. */
  id?: string;
  /**
   * Where the session's notifications go instead of its latest Server (e.g. one HTTP listen
   * stream). Each must never throw.
   */
  sink?: Pick<Session, 'sendUpdated' | 'sendListChanged'>;
}

/** One downstream session: its subscriptions, its notifications, and the Server(s) that serve it. */
export interface DownstreamSession {
  readonly session: Session;
  /** Who the session acts for now: standing deliveries (subscriptions, listens) are decided for it. */
  readonly caller: Caller;
  /**
   * Replaces who the session acts for (a later request's credential, or a reload that resolved it
   * again): every later delivery is decided for the new identity.
   */
  setIdentity(identity: CallerIdentity): void;
  /**
   * A Server for this session in `era`; the latest one made receives the session's notifications.
   * Closing a Server does not end the session: {@link DownstreamSession.close} does.
   */
  createServer(era: Era): Server;
  /** Releases the session's subscriptions and forgets it. Idempotent. */
  close(): void;
}

const SERVER_INFO = { name: 'mcp-federate', version: VERSION };

/** The session of stateless requests: it never subscribes (2026 has no resources/subscribe) nor hears anything. */
const STATELESS: Session = { id: 'stateless', sendUpdated: () => undefined, sendListChanged: () => undefined };

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
  // A disabled unprefixed server is not served: its URIs are then simply not found.
  const codecFor = (c: FederateConfig): UriCodec => createUriCodec(pool.ids, [...pool.ids].find((id) => c.servers[id]?.prefix === false));
  let codec = codecFor(config);
  // Every part holds this one object; a `servers` reload swaps what is behind it.
  const uris: UriCodec = {
    get ids() {
      return codec.ids;
    },
    get unprefixed() {
      return codec.unprefixed;
    },
    encode: (server, uri) => codec.encode(server, uri),
    decode: (federated) => codec.decode(federated),
  };
  // What upstreams give out is recorded as it is shown (only spellings a client could not send canonically).
  const issued = new IssuedUris({ keep: (uri) => !isPlainCanonical(uri) });
  const shown = issued.recording(uris);
  const sessions = new SessionRegistry(config.listChanged.coalesceMs);
  // One path for every change, whether the upstream said so or a poller noticed: invalidate first,
  // so a client that re-reads as soon as it hears of the change gets fresh content.
  const changed = (server: string, uri: string): void => {
    cache?.invalidate(server, uri);
    relay.updated(server, uri);
  };
  // Polls are reads made for the principals holding the URI: they pay for them from their read buckets.
  const relay: SubscriptionRelay = new SubscriptionRelay({
    pool,
    uris: shown,
    logger,
    ...config.subscriptions,
    onPolledChange: changed,
    chargePoll: (holders): boolean => gate.chargeBackground(holders),
  });
  // An upstream a list went out without (still starting) brings list_changed when it comes up.
  const listedWithout = new Set<string>();
  const lister = new Lister(pool, createCursorCodec(options.cursorKey ?? randomBytes(32)), config.list, logger, shown, {
    // Already up (it settled while that page was being cut): no status change is coming to announce it.
    onStartingSkipped: (server) => (pool.get(server)?.status === 'ready' ? sessions.listChanged() : void listedWithout.add(server)),
    ...(options.listTimer ? { setTimer: options.listTimer } : {}),
  });
  const coherence = createCoherence(config.cache.coherentUris, relay, () => cache?.purgeExpired());
  const cache = config.cache.enabled
    ? new ReadCache({ ...config.cache, ...(options.clock ? { clock: options.clock } : {}), onRemove: coherence.release })
    : undefined;
  const resources = new FederatedResources({ pool, uris: shown, lister, relay, cache, coherence });
  const rulesOf = (c: FederateConfig): AccessRules => ({
    policy: compilePolicy(c.policy, pool.ids),
    limiter: new RateLimiter(c.limits.reads, options.now ? { now: options.now } : {}),
    completions: new RateLimiter(c.limits.completions, options.now ? { now: options.now } : {}),
  });
  const audit = options.audit ?? openAuditLog(config.audit, { logger });
  const gate = new AccessGate({ resources, uris, issued, rules: rulesOf(config), audit, logger, ...(options.now ? { now: options.now } : {}) });
  const stdioCaller: CallerIdentity = { principal: config.stdio.principal, roles: config.stdio.roles, transport: 'stdio' };
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
  // Servers a reload restarted: their first connection re-establishes the subscriptions still held.
  const replaced = new Set<string>();
  pool.onStatus((server, status) => {
    if (status === 'ready' && ((pool.get(server)?.generation ?? 0) > 1 || replaced.delete(server))) {
      issued.forget(server); // a new process may give out other URIs
      cache?.invalidateServer(server);
      relay.resubscribe(server);
    }
    const now = status === 'ready' ? true : status === 'unavailable' ? false : undefined;
    if (now === undefined || now === available.has(server)) return;
    if (now) available.add(server);
    else available.delete(server);
    if (listedWithout.delete(server) || started) sessions.listChanged();
  });

  const servers = new Set<Server>();
  const connections = new Set<Connection>();
  let closing: Promise<void> | undefined;
  let ids = 0;

  return {
    pool,
    uris,
    resources,
    cache,
    relay,
    sessions,
    gate,
    start,
    reload(next) {
      gate.reload(rulesOf(next));
      lister.dropReadAhead();
      sessions.listChanged(); // what each caller may see may have changed
    },
    applyServers(next, changes) {
      if (closing) return Promise.resolve();
      const done = pool.reconcile(next.servers, changes);
      codec = codecFor(next);
      for (const id of changes.removed) {
        available.delete(id);
        replaced.delete(id);
        cache?.invalidateServer(id); // first: it releases the cache's coherence holds
        relay.forgetServer(id);
        issued.forget(id);
      }
      for (const id of changes.restarted) {
        available.delete(id);
        replaced.add(id);
        cache?.invalidateServer(id);
        issued.forget(id); // the new process may give out other URIs
      }
      if (changes.added.length + changes.removed.length + changes.restarted.length > 0) {
        lister.dropReadAhead();
        sessions.listChanged();
      }
      return done;
    },
    statelessServer(era, caller) {
      if (closing) throw new Error('proxy is closed');
      void start();
      return createFacadeServer({ gate, caller, session: STATELESS, logger, serverInfo: SERVER_INFO, era });
    },
    openSession(sessionOptions = {}) {
      if (closing) throw new Error('proxy is closed');
      void start(); // requests wait for their upstreams' first connection attempt
      let current: Server | undefined;
      let open = true;
      const id = sessionOptions.id ?? `s${++ids}`;
      let identity: Caller = { ...(sessionOptions.caller ?? stdioCaller), session: id };
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
          const server = createFacadeServer({ gate, caller, session, logger, serverInfo: SERVER_INFO, era });
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
            logger.info({ session: id, principal: caller.principal, protocol: era === 'modern' ? MODERN_REVISION : server.getNegotiatedProtocolVersion(), client: server.getClientVersion() }, 'client session opened');
          if (era === 'modern') opened();
          else server.oninitialized = opened;
          return server;
        },
        close() {
          if (!open) return;
          open = false;
          sessions.delete(session);
          relay.releaseSession(session);
        },
      };
      return handle;
    },
    async connect(transport, identity) {
      const downstream = this.openSession(identity ? { caller: identity } : {});
      const { session } = downstream;
      const lossy = transport as Transport & { onloss?: (loss: OutputLoss) => void };
      const prior = lossy.onloss;
      // Lost output is ours to report loudly.
      lossy.onloss = (loss) => {
        const why = loss.reason === 'overflow' ? 'client is not reading its output' : `write failed: ${loss.error}`;
        logger.error({ session: session.id, ...loss }, `closing session: ${why}; ${loss.messages} message(s) lost`);
        prior?.(loss);
      };
      const onerror = (err: Error) =>
        err instanceof TransportFailure
          ? logger.warn({ session: session.id, err: err.message }, 'session transport failed')
          : logger.debug({ session: session.id, err: err.message }, 'session transport');
      // The first request or notification decides the era, as SDK 2.x's serveStdio does. A 2025
      // client (no 2026 envelope claim) gets a Server connected straight to the transport: the
      // entry's per-connection channel classifies every message in and out with zod guards, which
      // cost a fifth of a relayed read. A client that opens in 2026-07-28 (server/discover, or any
      // request with the envelope) is handed to serveStdio, which owns discovery, the probe and its
      // fallback to 2025, and subscriptions/listen.
      const waiting: [JSONRPCMessage, MessageExtraInfo | undefined][] = [];
      let opened = false;
      let closeEntry: () => Promise<void> = async () => void (await transport.close());
      const released = () => {
        downstream.close();
        connections.delete(connection);
      };
      const guard = installServerGuard(
        transport,
        (message, extra) => {
          waiting.push([message, extra]);
          if (opened || !('method' in message)) return;
          opened = true;
          void open(message).catch((err: unknown) => {
            logger.warn({ session: session.id, err: String(err) }, 'session failed to open');
            void transport.close();
          });
        },
        { maxInFlight: config.wire.maxInFlight },
      );
      const open = async (first: JSONRPCMessage): Promise<void> => {
        // Whatever serves the session is connected to a tail of the transport (started already;
        // sends and closes pass through), so the guard stays the transport's only handler and
        // nothing can overtake the messages waiting for the era to be picked.
        const tail: Transport = {
          start: async () => undefined,
          send: (message, options) => transport.send(message, options),
          close: () => transport.close(),
        };
        if (!hasModernClaim((first as { params?: unknown }).params)) {
          const server = downstream.createServer('legacy');
          await server.connect(tail);
          closeEntry = () => server.close();
        } else {
          const { serveStdio } = await import('@modelcontextprotocol/server/stdio'); // loaded only when a 2026 client comes
          const entry = serveStdio(({ era }) => downstream.createServer(era), { transport: tail, onerror });
          // Listens narrowed to what the federation accepts: the tap sits on the tail, in front of the entry.
          new ListenTap({
            accept: (uri) => gate.listen(downstream.caller, session, uri),
            release: (uri) => void gate.release(session, uri),
          }).install(tail);
          closeEntry = () => entry.close();
        }
        const deliver: NonNullable<Transport['onmessage']> = (message, extra) => tail.onmessage?.(message, extra);
        transport.onclose = () => {
          tail.onclose?.();
          released();
        };
        guard.setNext(deliver);
        for (const [message, extra] of waiting.splice(0)) deliver(message, extra);
      };
      transport.onerror = onerror;
      transport.onclose = released;
      await transport.start();
      const connection: Connection = {
        async close() {
          await closeEntry().catch(() => undefined);
          released();
        },
      };
      connections.add(connection);
      return connection;
    },
    close() {
      closing ??= (async () => {
        await Promise.allSettled([...connections].map((c) => c.close()));
        await Promise.allSettled([...servers].map((s) => s.close()));
        sessions.close();
        await relay.close();
        lister.close();
        issued.close();
        cache?.close();
        await pool.close();
        await audit.close();
      })();
      return closing;
    },
    [Symbol.asyncDispose]() {
      return this.close();
    },
  };
}
