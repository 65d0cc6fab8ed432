// Composition root: builds the shared core (pool, cache, relay, lister, resources, gate), wires its events, owns the close order.
import { randomBytes } from 'node:crypto';
import { ReadCache, type Clock } from './federation/cache.js';
import type { FederateConfig } from './config/schema.js';
import { createCursorCodec } from './federation/cursor.js';
import { Lister, type SetTimer } from './federation/listing.js';
import type { Logger } from './logger.js';
import { Methods } from './protocol.js';
import { ErrorCodes, ProxyError } from './errors.js';
import { FederatedResources } from './federation/resources.js';
import { IssuedUris } from './federation/issued-uris.js';
import { isPlainCanonical } from './uri/normalize-uri.js';
import { SessionRegistry } from './federation/sessions.js';
import { SubscriptionRelay } from './federation/subscriptions.js';
import { createCoherence } from './federation/coherence.js';
import { reloadableNames, reloadableUris, ServerSet } from './federation/servers.js';
import { ItemCatalog } from './federation/item-catalog.js';
import { CallsInFlight } from './federation/calls-in-flight.js';
import { FederatedTools } from './federation/tools.js';
import { FederatedPrompts } from './federation/prompts.js';
import { ALL_LISTS } from './federation/sessions.js';
import { defaultTransportFactory, type TransportFactory } from './upstream/transports.js';
import { UpstreamPool } from './upstream/pool.js';
import { VERSION } from './version.js';
import { AccessGate, type AccessRules } from './access/gate.js';
import { compilePolicy } from './access/policy.js';
import { RateLimiter } from './access/rate-limiter.js';
import { openAuditLog, type AuditLog } from './audit/log.js';
import { SessionOpener } from './serve/sessions.js';
import { serveConnection } from './serve/stdio.js';
import { InputBridge } from './eras/input-bridge.js';
import type { CallerIdentity, Connection, Proxy } from './serve/proxy-types.js';
import { failureClass, noopMetrics, type Metrics, type UpstreamState } from './observe/metrics.js';
import { createAccessLog } from './observe/access-log.js';
import { readiness } from './observe/readiness.js';
import type { UpstreamStatus } from './upstream/upstream.js';
import type { Cluster } from './cluster.js';
import { ChangeFanout } from './federation/change-fanout.js';

export type { CallerIdentity, Connection, DownstreamSession, Proxy, SessionOptions } from './serve/proxy-types.js';

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
  /** Arms held-call expiry (`bridge.heldCallTtlMs`). Default: setTimeout. */
  bridgeTimer?: SetTimer;
  /** Wall clock (ms) for the expiry of sealed input states. Default: Date.now. */
  wallClock?: () => number;
  /** Where requests, upstreams, the cache, audit writes and sessions are reported. Default: {@link noopMetrics}. */
  metrics?: Metrics;
  /** Scale-out (the `redis` block, opened by `openCluster`): shared limits and change events. Default: none (nothing shared). */
  cluster?: Cluster;
}

/** An upstream's status as the metrics show it. */
function stateOf(status: UpstreamStatus): UpstreamState {
  if (status === 'ready') return 'up';
  return status === 'connecting' ? 'reconnecting' : 'down';
}

const SERVER_INFO = { name: 'mcp-federate', version: VERSION };

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
  // Upstreams' requests for user input go to the caller whose call caused them (audited by the gate, made below).
  const bridge: InputBridge = new InputBridge({
    config: config.bridge,
    logger,
    audit: (r): Promise<void> => gate.relayedInput(r.caller, { ...r, allow: r.decision === 'allow' }),
    ...(options.bridgeTimer ? { setTimer: options.bridgeTimer } : {}),
    ...(options.wallClock ? { now: options.wallClock } : {}),
  });
  const metrics = options.metrics ?? noopMetrics;
  const pool = new UpstreamPool(
    config,
    {
      serverRequests: bridge.serverRequest,
      transportFactory: options.transportFactory ?? defaultTransportFactory,
      limits: { maxDepth: config.wire.maxDepth },
      logger,
      clientInfo: SERVER_INFO,
      ...(options.reconnect === false ? {} : { reconnect: config.reconnect }),
      ...(options.random ? { random: options.random } : {}),
      metrics,
    },
    logger,
  );
  // Every part holds this one codec; a `servers` reload swaps what is behind it.
  const codec = reloadableUris(pool, config);
  const uris = codec.uris;
  const naming = reloadableNames(pool, config);
  const names = naming.names;
  // What upstreams give out is recorded as it is shown (only spellings a client could not send canonically).
  const issued = new IssuedUris({ keep: (uri) => !isPlainCanonical(uri) });
  const shown = issued.recording(uris);
  const sessions = new SessionRegistry(config.listChanged.coalesceMs, metrics);
  // One path for every change (an upstream's notice, a poll, another replica's): invalidate, deliver once, publish.
  const { cluster } = options;
  const fanout = new ChangeFanout({
    invalidate: (server, uri) => cache?.invalidate(server, uri),
    deliver: (server, uri) => relay.updated(server, uri),
    listChanged: () => sessions.listChanged(),
    logger,
    ...(cluster ? { peers: { dedupeMs: cluster.config.dedupeMs, counters: cluster.counters, publishChange: cluster.publishChange.bind(cluster) } } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  const changed = (server: string, uri: string): void => fanout.updated(server, uri);
  // Polls are reads made for the principals holding the URI: they pay for them from their read buckets.
  const relay: SubscriptionRelay = new SubscriptionRelay({
    pool,
    uris: shown,
    logger,
    ...config.subscriptions,
    onPolledChange: changed,
    chargePoll: (holders) => gate.chargeBackground(holders),
    metrics,
  });
  const lister = new Lister(pool, createCursorCodec(options.cursorKey ?? randomBytes(32)), config.list, logger, shown, {
    names,
    onStartingSkipped: (server) => served.startingSkipped(server),
    ...(options.listTimer ? { setTimer: options.listTimer } : {}),
  });
  const coherence = createCoherence(config.cache.coherentUris, relay, () => cache?.purgeExpired());
  const cache = config.cache.enabled
    ? new ReadCache({ ...config.cache, ...(options.clock ? { clock: options.clock } : {}), onRemove: coherence.release })
    : undefined;
  const resources = new FederatedResources({ pool, uris: shown, lister, relay, cache, coherence });
  const catalog = new ItemCatalog({ pool, names, maxPages: config.list.maxPagesPerUpstream, logger, ...(options.now ? { now: options.now } : {}) });
  const calls = new CallsInFlight();
  const timeouts = () => config.timeouts;
  const tools = new FederatedTools({ uris: shown, lister, calls, timeouts });
  const prompts = new FederatedPrompts({ uris: shown, calls, timeouts });
  // One bucket name per kind of limit: scaled out, each is shared by every replica through Redis.
  const clock = options.now ? { now: options.now } : {};
  const limiterOf = (bucket: string, limits: FederateConfig['limits']['reads' | 'completions' | 'calls']) =>
    cluster ? cluster.limiter(bucket, limits, clock) : new RateLimiter(limits, clock);
  const rulesOf = (c: FederateConfig): AccessRules => ({
    policy: compilePolicy(c.policy, pool.ids),
    limiter: limiterOf('reads', c.limits.reads),
    completions: limiterOf('completions', c.limits.completions),
    calls: limiterOf('calls', c.limits.calls),
  });
  const audit = options.audit ?? openAuditLog(config.audit, { logger, ...(cluster ? { chain: cluster.replica } : {}) });
  const items = { tools, prompts, catalog, names, recordArguments: config.audit?.arguments === true };
  const accessLog = config.accessLog ? createAccessLog(logger) : undefined;
  const gate = new AccessGate({
    resources,
    uris,
    issued,
    rules: rulesOf(config),
    audit,
    logger,
    items,
    metrics,
    accessLog,
    ...(options.now ? { now: options.now } : {}),
  });
  pool.onStatus((server, status) => {
    const failure = status === 'unavailable' ? pool.get(server)?.failure : undefined;
    metrics.upstreamStatus(server, stateOf(status), failure ? failureClass(failure.reason) : undefined);
  });
  metrics.watch({
    upstreams: () => pool.upstreams.map((u) => ({ server: u.id, state: stateOf(u.status), failure: u.failure ? failureClass(u.failure.reason) : undefined })),
    cacheEntries: () => cache?.size ?? 0,
    principalUse: () => relay.principalUse(),
  });
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
      fanout.listChanged(n.server);
    } else if (n.method === Methods.toolsListChanged || n.method === Methods.promptsListChanged) {
      const kind = n.method === Methods.toolsListChanged ? 'tools' : 'prompts';
      catalog.invalidate(n.server, kind);
      sessions.listChanged([kind]);
    } else if (n.method === Methods.message) {
      if (!calls.message(n.server, n.params)) logger.debug({ server: n.server }, 'upstream log message not relayed: no single call in flight');
    }
  });
  // Another replica's change: only for servers configured here too (an unknown id is dropped).
  cluster?.onChange((c) => {
    if (!pool.ids.has(c.server)) return;
    if (c.kind === 'updated') fanout.updated(c.server, c.uri, true);
    else fanout.listChanged(c.server, true);
  });
  const served = new ServerSet({ pool, uris: codec, issued, cache, relay, lister, sessions, catalog, names: naming, started: () => started });
  // A kind is offered while some upstream has it, or may have it (not connected yet): a session can
  // only be given capabilities when it opens.
  const offers = () => {
    const has = (kind: 'tools' | 'prompts') => pool.upstreams.some((u) => (u.status === 'ready' ? u.supports(kind) : u.status !== 'closed'));
    return { tools: has('tools'), prompts: has('prompts') };
  };
  const defaultCaller: CallerIdentity = { principal: config.stdio.principal, roles: config.stdio.roles, transport: 'stdio' };
  const opener = new SessionOpener({ gate, sessions, relay, logger, serverInfo: SERVER_INFO, defaultCaller, offers, bridge, metrics });
  const connections = new Set<Connection>();
  let closing: Promise<void> | undefined;

  return {
    pool,
    uris,
    resources,
    cache,
    relay,
    sessions,
    gate,
    bridge,
    metrics,
    start,
    readiness() {
      const upstreams = pool.upstreams.map((u) => ({ server: u.id, status: u.status, required: u.config.required }));
      return readiness({ configLoaded: true, auditWritable: audit.writable !== false, upstreams });
    },
    reload(next) {
      gate.reload(rulesOf(next));
      lister.dropReadAhead();
      sessions.listChanged(ALL_LISTS); // what each caller may see may have changed
    },
    applyServers(next, changes) {
      if (closing) return Promise.resolve();
      return served.apply(next, changes);
    },
    statelessServer(era, caller) {
      if (closing) throw new ProxyError(ErrorCodes.CLOSED, 'proxy is closed');
      void start();
      return opener.stateless(era, caller);
    },
    openSession(sessionOptions) {
      if (closing) throw new ProxyError(ErrorCodes.CLOSED, 'proxy is closed');
      void start(); // requests wait for their upstreams' first connection attempt
      return opener.open(sessionOptions);
    },
    async connect(transport, identity) {
      const downstream = this.openSession(identity ? { caller: identity } : {});
      return serveConnection(transport, downstream, { gate, logger, maxInFlight: config.wire.maxInFlight, connections });
    },
    close() {
      closing ??= (async () => {
        await Promise.allSettled([...connections].map((c) => c.close()));
        await opener.closeServers();
        bridge.close(); // held calls are cancelled upstream before the upstreams close
        sessions.close();
        await relay.close();
        lister.close();
        issued.close();
        cache?.close();
        catalog.close();
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
