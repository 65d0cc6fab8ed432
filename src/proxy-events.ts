// The composition root's event wiring: upstream notifications routed to the federation, upstream status reported to metrics, what a new session is offered.
import type { Logger } from './logger.js';
import { Methods } from './protocol.js';
import type { ItemAudience } from './federation/item-changes.js';
import type { CallsInFlight } from './federation/calls-in-flight.js';
import type { ChangeFanout } from './federation/change-fanout.js';
import type { ReadCache } from './federation/cache.js';
import type { SubscriptionRelay } from './federation/subscriptions.js';
import type { UpstreamPool } from './upstream/pool.js';
import type { UpstreamStatus } from './upstream/upstream.js';
import type { Cluster } from './cluster.js';
import type { AccessGate } from './access/gate.js';
import type { Offers } from './serve/facade.js';
import { failureClass, type Metrics, type UpstreamState } from './observe/metrics.js';

/** What {@link routeNotifications} hands each kind of upstream notification to. */
export interface NotificationRoutes {
  fanout: ChangeFanout;
  calls: CallsInFlight;
  logger: Logger;
}

/**
 * Routes what upstreams (and, scaled out, other replicas) tell: a resource update or any list
 * change through the fanout (invalidate, deliver once, publish), a log message to the one call in
 * flight it can belong to.
 */
export function routeNotifications(pool: UpstreamPool, cluster: Cluster | undefined, routes: NotificationRoutes): void {
  const { fanout, calls, logger } = routes;
  pool.onNotification((n) => {
    if (n.method === Methods.updated && typeof n.params?.uri === 'string') {
      fanout.updated(n.server, n.params.uri);
    } else if (n.method === Methods.listChanged) {
      fanout.listChanged(n.server);
    } else if (n.method === Methods.toolsListChanged || n.method === Methods.promptsListChanged) {
      fanout.listChanged(n.server, n.method === Methods.toolsListChanged ? 'tools' : 'prompts');
    } else if (n.method === Methods.message) {
      if (!calls.message(n.server, n.params)) logger.debug({ server: n.server }, 'upstream log message not relayed: no single call in flight');
    }
  });
  // Another replica's change: only for servers configured here too (an unknown id is dropped).
  cluster?.onChange((c) => {
    if (!pool.ids.has(c.server)) return;
    if (c.kind === 'updated') fanout.updated(c.server, c.uri, true);
    else fanout.listChanged(c.server, c.list, true);
  });
}

/** An upstream's status as the metrics show it. */
function stateOf(status: UpstreamStatus): UpstreamState {
  if (status === 'ready') return 'up';
  return status === 'connecting' ? 'reconnecting' : 'down';
}

/** Reports upstream status changes, and lets a scrape read upstreams, cache entries and per-principal use. */
export function reportToMetrics(metrics: Metrics, pool: UpstreamPool, cache: ReadCache | undefined, relay: SubscriptionRelay): void {
  pool.onStatus((server, status) => {
    const failure = status === 'unavailable' ? pool.get(server)?.failure : undefined;
    metrics.upstreamStatus(server, stateOf(status), failure ? failureClass(failure.reason) : undefined);
  });
  metrics.watch({
    upstreams: () => pool.upstreams.map((u) => ({ server: u.id, state: stateOf(u.status), failure: u.failure ? failureClass(u.failure.reason) : undefined })),
    cacheEntries: () => cache?.size ?? 0,
    principalUse: () => relay.principalUse(),
  });
}

/**
 * What a session opened now is offered: a kind while some upstream has it, or may have it (not
 * connected yet), since a session can only be given capabilities when it opens.
 */
export function offersOf(pool: UpstreamPool): () => Offers {
  return () => {
    const has = (kind: 'tools' | 'prompts') => pool.upstreams.some((u) => (u.status === 'ready' ? u.supports(kind) : u.status !== 'closed'));
    return { tools: has('tools'), prompts: has('prompts') };
  };
}

/**
 * Who hears of a tool or prompt list change, by the gate's policy at the time the notice goes out:
 * a session that may see one of the changed items (or, when they are unknown, may know the server).
 */
export function itemAudience(gate: () => Pick<AccessGate, 'mayListItem' | 'visibleServer'>): ItemAudience {
  return (session, kind, server, items) => {
    if (session.principal === undefined) return true; // the proxy's own holders: their notices go nowhere
    const who = { principal: session.principal, roles: session.roles ?? [] };
    const g = gate();
    return items ? items.some((item) => g.mayListItem(who, kind, server, item)) : g.visibleServer(who, server);
  };
}
