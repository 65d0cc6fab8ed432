// Composition root: builds the shared core (pool, cache, relay, lister, resources, gate), wires its events, owns the close order.
import { randomBytes } from 'node:crypto';
import { ReadCache } from './federation/cache.js';
import { createCursorCodec } from './federation/cursor.js';
import { Lister } from './federation/listing.js';
import { ErrorCodes, ProxyError } from './errors.js';
import { FederatedResources } from './federation/resources.js';
import { IssuedUris } from './federation/issued-uris.js';
import { isPlainCanonical } from './uri/normalize-uri.js';
import { SessionRegistry } from './federation/sessions.js';
import { SubscriptionRelay } from './federation/subscriptions.js';
import { createCoherence } from './federation/coherence.js';
import { reloadableNames, reloadableUris, ServerSet } from './federation/servers.js';
import { ALL_LISTS } from './federation/sessions.js';
import { VERSION } from './version.js';
import { AccessGate } from './access/gate.js';
import { closeInOrder, federateItems, inputBridge, rulesFactory, upstreamPool } from './proxy-parts.js';
import type { ProxyOptions } from './proxy-options.js';
import { openAuditLog } from './audit/log.js';
import { SessionOpener } from './serve/sessions.js';
import { serveConnection } from './serve/stdio.js';
import type { CallerIdentity, Connection, Proxy } from './serve/proxy-types.js';
import { noopMetrics } from './observe/metrics.js';
import { itemAudience, offersOf, reportToMetrics, routeNotifications } from './proxy-events.js';
import { createAccessLog } from './observe/access-log.js';
import { readiness } from './observe/readiness.js';
import { ChangeFanout } from './federation/change-fanout.js';
import { ItemChanges } from './federation/item-changes.js';

export type { CallerIdentity, Connection, DownstreamSession, Proxy, SessionOptions } from './serve/proxy-types.js';
export type { ProxyOptions } from './proxy-options.js';

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
  const bridge = inputBridge(options, () => gate);
  const metrics = options.metrics ?? noopMetrics;
  const pool = upstreamPool(options, bridge, metrics, SERVER_INFO);
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
    listChanged: (server, list, remote) => (list === 'resources' ? sessions.listChanged() : itemChanges.changed(server, list, remote)),
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
  const items = federateItems({ config, pool, names, uris: shown, lister, logger, now: options.now });
  const { catalog, calls } = items;
  // A tool or prompt list change is told to the sessions whose view of it changed, by policy.
  const itemChanges = new ItemChanges({ catalog, sessions, mayHear: itemAudience(() => gate), logger });
  const rulesOf = rulesFactory(pool, cluster, options.now);
  const audit = options.audit ?? openAuditLog(config.audit, { logger, ...(cluster ? { chain: cluster.replica } : {}) });
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
  reportToMetrics(metrics, pool, cache, relay);
  sessions.onListChanged(() => lister.dropReadAhead()); // read-ahead from before a change is not reused

  let started = false;
  let starting: Promise<void> | undefined;
  const start = (): Promise<void> =>
    (starting ??= pool.start().then(() => {
      started = true;
    }));
  routeNotifications(pool, cluster, { fanout, calls, logger });
  const served = new ServerSet({ pool, uris: codec, issued, cache, relay, lister, sessions, catalog, names: naming, started: () => started });
  const offers = offersOf(pool);
  const defaultCaller: CallerIdentity = { principal: config.stdio.principal, roles: config.stdio.roles, transport: 'stdio' };
  const fastLane = options.fastLane ?? process.env.MCP_FEDERATE_SDK_REQUESTS !== '1';
  const opener = new SessionOpener({ gate, sessions, relay, logger, serverInfo: SERVER_INFO, defaultCaller, offers, bridge, metrics, fastLane });
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
    fastLane,
    offers,
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
      closing ??= closeInOrder({ connections, opener, bridge, sessions, relay, lister, issued, cache, catalog, pool, audit });
      return closing;
    },
    [Symbol.asyncDispose]() {
      return this.close();
    },
  };
}
