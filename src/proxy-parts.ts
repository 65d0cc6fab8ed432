// Parts the composition root builds by concern: the input bridge, the upstream pool, the access rules (policy and rate limits, shared when scaled out), the federation of tools and prompts, and the close order.
import type { FederateConfig } from './config/schema.js';
import type { AccessGate, AccessRules, ItemParts } from './access/gate.js';
import { compilePolicy } from './access/policy.js';
import { RateLimiter } from './access/rate-limiter.js';
import { ItemCatalog } from './federation/item-catalog.js';
import { CallsInFlight } from './federation/calls-in-flight.js';
import { FederatedTools } from './federation/tools.js';
import { FederatedPrompts } from './federation/prompts.js';
import type { Lister } from './federation/listing.js';
import type { NameCodec } from './uri/names.js';
import type { UriCodec } from './federation/uri.js';
import type { Logger } from './logger.js';
import type { Cluster } from './cluster.js';
import { InputBridge } from './eras/input-bridge.js';
import type { Metrics } from './observe/metrics.js';
import type { ProxyOptions } from './proxy-options.js';
import { UpstreamPool } from './upstream/pool.js';
import { defaultTransportFactory } from './upstream/transports.js';

/** The bridge that takes upstreams' requests for user input to the caller whose call caused them, audited by the gate (`gate()`, made later). */
export function inputBridge(options: ProxyOptions, gate: () => Pick<AccessGate, 'relayedInput'>): InputBridge {
  return new InputBridge({
    config: options.config.bridge,
    logger: options.logger,
    audit: (r): Promise<void> => gate().relayedInput(r.caller, { ...r, allow: r.decision === 'allow' }),
    ...(options.bridgeTimer ? { setTimer: options.bridgeTimer } : {}),
    ...(options.wallClock ? { now: options.wallClock } : {}),
  });
}

/** One client session per configured upstream, their requests for input going to `bridge`. */
export function upstreamPool(options: ProxyOptions, bridge: InputBridge, metrics: Metrics, clientInfo: { name: string; version: string }): UpstreamPool {
  const { config, logger } = options;
  return new UpstreamPool(
    config,
    {
      serverRequests: bridge.serverRequest,
      transportFactory: options.transportFactory ?? defaultTransportFactory,
      limits: { maxDepth: config.wire.maxDepth },
      logger,
      clientInfo,
      ...(options.reconnect === false ? {} : { reconnect: config.reconnect }),
      ...(options.random ? { random: options.random } : {}),
      metrics,
    },
    logger,
  );
}

/**
 * The rules a configuration gives: its policy, and one limiter per bucket (reads, completions,
 * calls), each shared by every replica through Redis when scaled out.
 */
export function rulesFactory(pool: UpstreamPool, cluster: Cluster | undefined, now: (() => number) | undefined): (c: FederateConfig) => AccessRules {
  const clock = now ? { now } : {};
  const limiterOf = (bucket: string, limits: FederateConfig['limits']['reads' | 'completions' | 'calls']) =>
    cluster ? cluster.limiter(bucket, limits, clock) : new RateLimiter(limits, clock);
  return (c) => ({
    policy: compilePolicy(c.policy, pool.ids),
    limiter: limiterOf('reads', c.limits.reads),
    completions: limiterOf('completions', c.limits.completions),
    calls: limiterOf('calls', c.limits.calls),
  });
}

/** What {@link federateItems} builds from. */
export interface ItemSources {
  config: FederateConfig;
  pool: UpstreamPool;
  names: NameCodec;
  uris: UriCodec;
  lister: Lister;
  logger: Logger;
  now?: (() => number) | undefined;
}

/** Tools and prompts federated: the catalog of both lists, the calls in flight, and the routed calls. */
export function federateItems(sources: ItemSources): ItemParts & { calls: CallsInFlight } {
  const { config, pool, names, uris, lister, logger, now } = sources;
  const catalog = new ItemCatalog({ pool, names, maxPages: config.list.maxPagesPerUpstream, logger, ...(now ? { now } : {}) });
  const calls = new CallsInFlight();
  const timeouts = () => config.timeouts;
  const tools = new FederatedTools({ uris, lister, calls, timeouts });
  const prompts = new FederatedPrompts({ uris, calls, timeouts });
  return { tools, prompts, catalog, names, calls, recordArguments: config.audit?.arguments === true };
}

/** What {@link closeInOrder} closes. */
export interface Closeable {
  connections: ReadonlySet<{ close(): Promise<void> }>;
  opener: { closeServers(): Promise<void> };
  bridge: { close(): void };
  sessions: { close(): void };
  relay: { close(): Promise<void> };
  lister: { close(): void };
  issued: { close(): void };
  cache: { close(): void } | undefined;
  catalog: { close(): void };
  pool: { close(): Promise<void> };
  audit: { close(): void | Promise<void> };
}

/**
 * Closes a proxy's parts, outside in: connections and their Servers first, held calls before the
 * upstreams they wait on, the upstreams before the audit log that records what they answered.
 */
export async function closeInOrder(p: Closeable): Promise<void> {
  await Promise.allSettled([...p.connections].map((c) => c.close()));
  await p.opener.closeServers();
  p.bridge.close(); // held calls are cancelled upstream before the upstreams close
  p.sessions.close();
  await p.relay.close();
  p.lister.close();
  p.issued.close();
  p.cache?.close();
  p.catalog.close();
  await p.pool.close();
  await p.audit.close();
}
