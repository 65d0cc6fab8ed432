// Each upstream's tools and prompts by the names clients see: how a client's name finds its owner and the upstream's own name, without parsing short forms.
import { ErrorCodes, ProxyError } from '../errors.js';
import type { Logger } from '../logger.js';
import { ListPromptsResult, ListToolsResult, Methods } from '../protocol.js';
import type { NameCodec } from '../uri/names.js';
import type { Upstream } from '../upstream/upstream.js';
import type { UpstreamPool } from '../upstream/pool.js';

/** The two kinds of named items. */
export type ItemKind = 'tools' | 'prompts';

/** A tool or prompt a client named, found at its owner. */
export interface FoundItem {
  kind: ItemKind;
  server: string;
  upstream: Upstream;
  /** The upstream's own name. */
  name: string;
  /** The name the client sent. */
  clientName: string;
  /** The item as the upstream listed it (annotations, schemas). */
  item: Record<string, unknown>;
}

/** Options of {@link ItemCatalog}. */
export interface ItemCatalogOptions {
  pool: UpstreamPool;
  /** Client names (the one every part holds: a reload swaps what is behind it). */
  names: NameCodec;
  /** Most pages of one upstream's list walked. */
  maxPages: number;
  logger: Logger;
  /** Monotonic ms clock. Default: performance.now. */
  now?: () => number;
}

interface Entry {
  /** Items by client name. */
  items: Map<string, Record<string, unknown>>;
  /** The upstream connection it was listed on. */
  generation: number;
  at: number;
}

/** A name that is not in the list may be new: the list is fetched again, at most this often per upstream. */
const REFRESH_MS = 1000;

const SPECS = {
  tools: { method: Methods.listTools, schema: ListToolsResult, field: 'tools', capability: 'tools' },
  prompts: { method: Methods.listPrompts, schema: ListPromptsResult, field: 'prompts', capability: 'prompts' },
} as const;

/**
 * Knows each upstream's tools and prompts by client name. A list is fetched (all pages) the first
 * time a name of that upstream is looked up, kept until the upstream says its list changed or
 * reconnects, and fetched again (at most once a second) when a name is not in it. Concurrent
 * lookups share one fetch. Routing never depends on a client having listed first.
 */
export class ItemCatalog {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<Entry>>();
  /** Bumped by each invalidation: a fetch that began before one does not keep its (maybe stale) list. */
  private invalidations = 0;
  private readonly now: () => number;

  constructor(private readonly options: ItemCatalogOptions) {
    this.now = options.now ?? (() => performance.now());
  }

  /**
   * The item `clientName` stands for, or undefined when no ready upstream has one by that name.
   * Throws the upstream's failure when its list cannot be fetched.
   */
  /**
   * {@link find} without waiting, for the common case: the owner is ready and what it listed is
   * known and current, and holds `clientName`. Undefined when {@link find} has anything to wait for
   * or to decide (then call it).
   */
  findNow(kind: ItemKind, clientName: string): FoundItem | undefined {
    const server = this.options.names.serverOf(clientName);
    const upstream = server === undefined ? undefined : this.options.pool.get(server);
    if (!upstream || server === undefined || upstream.status !== 'ready' || !upstream.supports(SPECS[kind].capability)) return undefined;
    const entry = this.entries.get(`${kind}\u0000${upstream.id}`);
    if (!entry || entry.generation !== upstream.generation) return undefined;
    const item = entry.items.get(clientName);
    return item ? { kind, server, upstream, name: item.name as string, clientName, item } : undefined;
  }

  async find(kind: ItemKind, clientName: string): Promise<FoundItem | undefined> {
    const server = this.options.names.serverOf(clientName);
    const upstream = server === undefined ? undefined : this.options.pool.get(server);
    if (!upstream || server === undefined) return undefined;
    if (upstream.generation === 0 && upstream.status !== 'unavailable') await upstream.settled();
    if (upstream.status !== 'ready' || !upstream.supports(SPECS[kind].capability)) return undefined;
    let entry = await this.load(kind, upstream, false);
    let item = entry.items.get(clientName);
    if (!item && this.now() - entry.at >= REFRESH_MS) {
      entry = await this.load(kind, upstream, true);
      item = entry.items.get(clientName);
    }
    return item ? { kind, server, upstream, name: item.name as string, clientName, item } : undefined;
  }

  /** Forgets what `server` listed (its list changed, or it left); a fetch under way is not kept, and the next lookup fetches again. */
  invalidate(server: string, kind?: ItemKind): void {
    this.invalidations++;
    for (const k of kind ? [kind] : (['tools', 'prompts'] as const)) {
      this.entries.delete(`${k}\u0000${server}`);
      this.loading.delete(`${k}\u0000${server}`);
    }
  }

  /** What `server` listed of `kind` when last fetched, by client name, without fetching; undefined when nothing is held. */
  held(kind: ItemKind, server: string): ReadonlyMap<string, Record<string, unknown>> | undefined {
    return this.entries.get(`${kind}\u0000${server}`)?.items;
  }

  /**
   * What `server` lists of `kind` now, by client name (fetched when not held); undefined when it is
   * not ready or has no such list. Throws the upstream's failure.
   */
  async current(kind: ItemKind, server: string): Promise<ReadonlyMap<string, Record<string, unknown>> | undefined> {
    const upstream = this.options.pool.get(server);
    if (upstream?.status !== 'ready' || !upstream.supports(SPECS[kind].capability)) return undefined;
    return (await this.load(kind, upstream, false)).items;
  }

  /** Forgets everything. Idempotent. */
  close(): void {
    this.entries.clear();
  }

  private load(kind: ItemKind, upstream: Upstream, refresh: boolean): Promise<Entry> {
    const key = `${kind}\u0000${upstream.id}`;
    const entry = this.entries.get(key);
    if (entry && !refresh && entry.generation === upstream.generation) return Promise.resolve(entry);
    const loading = this.loading.get(key);
    if (loading) return loading;
    const pending: Promise<Entry> = this.fetch(kind, upstream).finally(() => {
      if (this.loading.get(key) === pending) this.loading.delete(key); // not a newer fetch begun after an invalidation
    });
    this.loading.set(key, pending);
    return pending;
  }

  private async fetch(kind: ItemKind, upstream: Upstream): Promise<Entry> {
    const spec = SPECS[kind];
    const generation = upstream.generation;
    const invalidations = this.invalidations;
    const items = new Map<string, Record<string, unknown>>();
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < this.options.maxPages; page++) {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the list's schema is picked per kind at run time
      const result = (await upstream.request(spec.method, cursor === undefined ? undefined : { cursor }, spec.schema as never)) as Record<string, unknown>;
      for (const item of result[spec.field] as Record<string, unknown>[]) items.set(this.options.names.encode(upstream.id, item.name as string), item);
      const next = result.nextCursor as string | undefined;
      if (next === undefined || seen.has(next)) break;
      seen.add(next);
      cursor = next;
    }
    if (upstream.generation !== generation) throw new ProxyError(ErrorCodes.UPSTREAM_UNAVAILABLE, `upstream ${upstream.id} reconnected`);
    const entry: Entry = { items, generation, at: this.now() };
    if (invalidations === this.invalidations) this.entries.set(`${kind}\u0000${upstream.id}`, entry);
    this.options.logger.debug({ server: upstream.id, list: kind, items: items.size }, 'item catalog fetched');
    return entry;
  }
}
