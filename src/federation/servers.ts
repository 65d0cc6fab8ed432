// The served set of upstreams as it changes: the URI codec every part holds, availability announced as list_changed, and a `servers` reload applied to the core.
import type { ServerChanges } from '../config/reload-diff.js';
import type { FederateConfig } from '../config/schema.js';
import type { UpstreamPool } from '../upstream/pool.js';
import type { UpstreamStatus } from '../upstream/upstream.js';
import type { ReadCache } from './cache.js';
import type { IssuedUris } from './issued-uris.js';
import type { Lister } from './listing.js';
import type { SessionRegistry } from './sessions.js';
import type { SubscriptionRelay } from './subscriptions.js';
import { createUriCodec, type UriCodec } from './uri.js';
import { createNameCodec, type NameCodec } from '../uri/names.js';
import type { ItemCatalog } from './item-catalog.js';
import { ALL_LISTS } from './sessions.js';

/**
 * Client names of tools and prompts for the enabled upstreams, as one object that follows
 * `servers` reloads (see {@link reloadableUris}).
 */
export function reloadableNames(pool: Pick<UpstreamPool, 'ids'>, config: FederateConfig): { names: NameCodec; reload(config: FederateConfig): void } {
  const codecFor = (c: FederateConfig): NameCodec =>
    createNameCodec(
      pool.ids,
      [...pool.ids].find((id) => c.servers[id]?.prefix === false),
      c.tools.maxNameLength,
    );
  let codec = codecFor(config);
  return {
    names: {
      get unprefixed() {
        return codec.unprefixed;
      },
      encode: (server, name) => codec.encode(server, name),
      serverOf: (name) => codec.serverOf(name),
    },
    reload(next) {
      codec = codecFor(next);
    },
  };
}

/** A {@link UriCodec} whose set of servers a reload replaces. */
export interface ReloadableUris {
  /** The one object every part holds: it always encodes and decodes for the current set. */
  readonly uris: UriCodec;
  /** Swaps what is behind {@link ReloadableUris.uris} for the pool's ids under `config`. */
  reload(config: FederateConfig): void;
}

/**
 * The URIs clients see for the enabled upstreams (namespaced, except a `prefix: false` server's),
 * as one object that follows `servers` reloads. A disabled unprefixed server is not served: its URIs
 * are then simply not found.
 *
 * @example
 * const { uris, reload } = reloadableUris(pool, config);
 */
export function reloadableUris(pool: Pick<UpstreamPool, 'ids'>, config: FederateConfig): ReloadableUris {
  const codecFor = (c: FederateConfig): UriCodec =>
    createUriCodec(
      pool.ids,
      [...pool.ids].find((id) => c.servers[id]?.prefix === false),
    );
  let codec = codecFor(config);
  return {
    uris: {
      get ids() {
        return codec.ids;
      },
      get unprefixed() {
        return codec.unprefixed;
      },
      encode: (server, uri) => codec.encode(server, uri),
      decode: (federated) => codec.decode(federated),
    },
    reload(next) {
      codec = codecFor(next);
    },
  };
}

/** The parts of the core that follow the served set. */
export interface ServerSetOptions {
  pool: UpstreamPool;
  uris: ReloadableUris;
  issued: IssuedUris;
  /** Absent when caching is off. */
  cache: ReadCache | undefined;
  relay: SubscriptionRelay;
  lister: Lister;
  sessions: SessionRegistry;
  /** Tools and prompts by client name (forgotten when their upstream leaves or restarts). */
  catalog?: ItemCatalog;
  /** Client names of tools and prompts, reloaded with `servers`. */
  names?: { reload(config: FederateConfig): void };
  /** True once the pool's first start has settled (before it, a status change is no catalog change). */
  started(): boolean;
}

/**
 * Keeps the core in step with its upstreams: a reconnected or restarted upstream starts afresh
 * (issued URIs and cached reads forgotten, subscriptions re-established), a change of availability
 * is announced to every session once (a failed retry of an upstream already down is not one, so a
 * crash loop does not make clients re-list on each attempt), and a `servers` reload reaches every
 * part at once.
 */
export class ServerSet {
  /** Availability as last announced. */
  private readonly available = new Set<string>();
  /** Servers a reload restarted: their first connection re-establishes the subscriptions still held. */
  private readonly replaced = new Set<string>();
  /** Upstreams a list went out without (still starting): they bring list_changed when they come up. */
  private readonly listedWithout = new Set<string>();

  constructor(private readonly parts: ServerSetOptions) {
    parts.pool.onStatus((server, status) => this.statusChanged(server, status));
  }

  /**
   * A list was answered without `server`, still starting. When it is already up (it settled while
   * that page was being cut) no status change is coming to announce it, so it is announced now.
   */
  startingSkipped(server: string): void {
    const { pool, sessions } = this.parts;
    if (pool.get(server)?.status === 'ready') sessions.listChanged(ALL_LISTS);
    else this.listedWithout.add(server);
  }

  /**
   * Applies the `servers` block of a new configuration: removed upstreams leave (their
   * subscriptions and cached reads are forgotten), restarted ones are replaced, added ones join,
   * URIs route by the new set, and every session hears list_changed. Resolves when the closes and
   * starts have finished.
   */
  apply(next: FederateConfig, changes: ServerChanges): Promise<void> {
    const { pool, uris, cache, relay, issued, lister, sessions } = this.parts;
    const done = pool.reconcile(next.servers, changes);
    uris.reload(next);
    this.parts.names?.reload(next);
    for (const id of [...changes.removed, ...changes.restarted]) this.parts.catalog?.invalidate(id);
    for (const id of changes.removed) {
      this.available.delete(id);
      this.replaced.delete(id);
      cache?.invalidateServer(id); // first: it releases the cache's coherence holds
      relay.forgetServer(id);
      issued.forget(id);
    }
    for (const id of changes.restarted) {
      this.available.delete(id);
      this.replaced.add(id);
      cache?.invalidateServer(id);
      issued.forget(id); // the new process may give out other URIs
    }
    if (changes.added.length + changes.removed.length + changes.restarted.length > 0) {
      lister.dropReadAhead();
      sessions.listChanged(ALL_LISTS);
    }
    return done;
  }

  private statusChanged(server: string, status: UpstreamStatus): void {
    const { pool, cache, relay, issued, sessions } = this.parts;
    if (status === 'ready' && ((pool.get(server)?.generation ?? 0) > 1 || this.replaced.delete(server))) {
      issued.forget(server); // a new process may give out other URIs
      cache?.invalidateServer(server);
      relay.resubscribe(server);
    }
    const now = status === 'ready' ? true : status === 'unavailable' ? false : undefined;
    if (now === undefined || now === this.available.has(server)) return;
    if (now) this.available.add(server);
    else this.available.delete(server);
    this.parts.catalog?.invalidate(server);
    if (this.listedWithout.delete(server) || this.parts.started()) sessions.listChanged(ALL_LISTS);
  }
}
