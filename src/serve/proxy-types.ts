// The running federation as serve/ sees it: the proxy, its downstream sessions and connections (types only; `proxy.ts` builds them).
import type { Server, Transport } from '@modelcontextprotocol/server';
import type { Caller } from '../caller.js';
import type { AccessGate } from '../access/gate.js';
import type { ServerChanges } from '../config/reload-diff.js';
import type { FederateConfig } from '../config/schema.js';
import type { ReadCache } from '../federation/cache.js';
import type { FederatedResources } from '../federation/resources.js';
import type { Session, SessionRegistry } from '../federation/sessions.js';
import type { SubscriptionRelay } from '../federation/subscriptions.js';
import type { UriCodec } from '../federation/uri.js';
import type { UpstreamPool } from '../upstream/pool.js';
import type { Era } from '../eras/claim.js';
import type { InputBridge } from '../eras/input-bridge.js';
import type { ListenCounter } from '../eras/listen-tap.js';
import type { Metrics } from '../observe/metrics.js';
import type { Readiness } from '../observe/readiness.js';
import type { ClassifiedHandler, Send, Wrapper } from '../wire/compose.js';
import type { Offers } from './facade.js';

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
  /** Upstreams' requests for user input, relayed to the caller whose call caused them (held calls, sealed states). */
  readonly bridge: InputBridge;
  /** What the gateway reports (no-op when metrics are off). */
  readonly metrics: Metrics;
  /** Whether plain reads and calls take the edge lanes past the SDK (off with `MCP_FEDERATE_SDK_REQUESTS=1`, so the suites run both ways). */
  readonly fastLane: boolean;
  /** Which of tools and prompts a session or request opened now is offered (as its facade Server is made). */
  offers(): Offers;
  /** Whether the gateway is ready (every required upstream ready, the audit log writable), and what is not. */
  readiness(): Readiness;
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
  /**
   * The edge fast lane for a Server this session made (`serve/fast-lane.ts`), answering on `send`;
   * undefined when the lane is off (`MCP_FEDERATE_SDK_REQUESTS=1`) or the Server is not this session's.
   */
  fastLane?(server: Server, send: Send): Wrapper<ClassifiedHandler> | undefined;
  /**
   * Counts the 2026 `subscriptions/listen` streams served on this session's connection (stdio: hand it
   * to the era as `StdioHooks.listens`); those still open end when the session closes.
   */
  readonly listens: ListenCounter;
  /** Releases the session's subscriptions and forgets it. Idempotent. */
  close(): void;
}
