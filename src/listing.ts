// Merged, paginated lists across upstreams: parallel page walks, config-order merge, composite cursors.
import type { CursorCodec, ListKind } from './cursor.js';
import { ErrorCodes, ProxyError } from './errors.js';
import type { Logger } from './logger.js';
import { ListResourcesResult, ListTemplatesResult, META_INCOMPLETE, Methods } from './protocol.js';
import type { ResultSchema, Upstream } from './upstream.js';
import type { UpstreamPool } from './upstream-pool.js';
import { encodeUri } from './uri.js';

/** Listing limits (see `list` in the config). */
export interface ListLimits {
  maxItemsPerPage: number;
  maxPagesPerUpstream: number;
}

/** Why an upstream's part of a list is missing or cut short. */
export interface IncompleteUpstream {
  server: string;
  reason: 'unavailable' | 'timeout' | 'error' | 'page-limit';
}

/** One downstream page. */
export interface ListPage {
  items: Record<string, unknown>[];
  nextCursor?: string;
  incomplete: IncompleteUpstream[];
}

type Item = Record<string, unknown>;
/** One upstream page, already namespaced, and the upstream cursor that follows it. */
interface Page {
  items: Item[];
  next: string | undefined;
}
interface Walk {
  pages: Page[];
  /** Pages walked before this walk began (from the cursor). */
  before: number;
  incomplete?: IncompleteUpstream['reason'];
}

const KINDS = {
  resources: { method: Methods.listResources, schema: ListResourcesResult, field: 'resources', key: 'uri' },
  templates: { method: Methods.listTemplates, schema: ListTemplatesResult, field: 'resourceTemplates', key: 'uriTemplate' },
} as const;

/**
 * Builds downstream pages of a merged list. All upstreams from the cursor's position on are walked
 * in parallel (each one's own pages in sequence, each page bounded by `maxItemsPerPage`); results
 * are merged in config order, whole upstream pages at a time, until the page holds
 * `maxItemsPerPage` items. The cursor then records which upstream and which of its cursors come next.
 */
export class Lister {
  constructor(
    private readonly pool: UpstreamPool,
    private readonly codec: CursorCodec,
    private readonly limits: ListLimits,
    private readonly logger: Logger,
  ) {}

  /** One downstream page of `kind`, continuing from `cursor` when given. */
  async page(kind: ListKind, cursor: string | undefined, signal?: AbortSignal): Promise<ListPage> {
    const start = cursor === undefined ? undefined : this.codec.decode(cursor, kind, this.pool.epoch);
    const first = start?.index ?? 0;
    const upstreams = this.pool.upstreams.slice(first);
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const walks = upstreams.map((u, k) =>
      this.walk(kind, u, k === 0 ? start?.upstreamCursor : undefined, k === 0 ? (start?.pages ?? 0) : 0, stop.signal),
    );
    walks.forEach((w) => w.catch(() => undefined));
    const items: Item[] = [];
    const incomplete: IncompleteUpstream[] = [];
    let nextCursor: string | undefined;
    try {
      for (let k = 0; k < upstreams.length && nextCursor === undefined; k++) {
        const upstream = upstreams[k] as Upstream;
        const walk = await walks[k];
        if (walk === undefined) continue;
        if (walk.incomplete) incomplete.push({ server: upstream.id, reason: walk.incomplete });
        let taken = 0;
        for (const page of walk.pages) {
          if (taken > 0 && items.length + page.items.length > this.limits.maxItemsPerPage) break;
          for (const item of page.items) items.push(item);
          taken++;
        }
        const last = walk.pages[taken - 1];
        const resumeUpstream = taken < walk.pages.length || (last?.next !== undefined && walk.incomplete === undefined);
        if (resumeUpstream && last?.next !== undefined) {
          nextCursor = this.codec.encode({ kind, epoch: this.pool.epoch, index: first + k, upstreamCursor: last.next, pages: walk.before + taken });
        } else if (items.length >= this.limits.maxItemsPerPage && k + 1 < upstreams.length) {
          nextCursor = this.codec.encode({ kind, epoch: this.pool.epoch, index: first + k + 1, upstreamCursor: undefined, pages: 0 });
        }
      }
    } finally {
      stop.abort(); // walks not needed for this page stop early
      signal?.removeEventListener('abort', onAbort);
    }
    if (signal?.aborted) throw new ProxyError(ErrorCodes.CANCELLED, 'list cancelled');
    return nextCursor === undefined ? { items, incomplete } : { items, nextCursor, incomplete };
  }

  /** Wraps `_meta` reporting incomplete upstreams onto a list result, when there are any. */
  static meta(incomplete: IncompleteUpstream[]): { _meta?: Record<string, unknown> } {
    return incomplete.length === 0 ? {} : { _meta: { [META_INCOMPLETE]: incomplete } };
  }

  /** Walks one upstream's pages from `cursor` until it ends, or holds a downstream page's worth. */
  private async walk(kind: ListKind, u: Upstream, cursor: string | undefined, before: number, signal: AbortSignal): Promise<Walk | undefined> {
    const spec = KINDS[kind];
    if (u.status === 'ready' && !u.supports('resources')) return undefined;
    const pages: Page[] = [];
    const seen = new Set<string>();
    let count = 0;
    let next = cursor;
    try {
      do {
        if (before + pages.length >= this.limits.maxPagesPerUpstream) return { pages, before, incomplete: 'page-limit' };
        const schema = spec.schema as ResultSchema<{ nextCursor?: string | undefined }>;
        const result = await u.request(spec.method, next === undefined ? undefined : { cursor: next }, schema, signal);
        const raw = (result as Record<string, unknown>)[spec.field] as Item[];
        const items = raw.map((item) => ({ ...item, [spec.key]: encodeUri(u.id, item[spec.key] as string) }));
        next = result.nextCursor;
        if (next !== undefined && seen.has(next)) next = undefined; // a cursor loop ends the walk
        if (next !== undefined) seen.add(next);
        pages.push({ items, next });
        count += items.length;
      } while (next !== undefined && count < this.limits.maxItemsPerPage && !signal.aborted);
      return { pages, before };
    } catch (err) {
      if (signal.aborted) return { pages: [], before };
      const code = err instanceof ProxyError ? err.code : undefined;
      if (kind === 'templates' && (err as ProxyError).details?.rpcCode === -32601) return undefined; // no templates
      this.logger.warn({ server: u.id, list: kind, code, details: (err as ProxyError).details }, 'upstream skipped in list');
      const reason = code === ErrorCodes.UPSTREAM_UNAVAILABLE ? 'unavailable' : code === ErrorCodes.UPSTREAM_TIMEOUT ? 'timeout' : 'error';
      return { pages: [], before, incomplete: reason };
    }
  }
}
