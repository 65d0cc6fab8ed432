// Merged, paginated lists across upstreams: parallel read-ahead walks, config-order merge, composite cursors.
import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { LazyAbort, onAbort } from '../cancel.js';
import type { CursorCodec, ListKind } from './cursor.js';
import { ErrorCodes, ProxyError } from '../errors.js';
import type { Logger } from '../logger.js';
import { DONE, PageWalker, type WalkedPage, type WalkEnd } from './page-walker.js';
import { META_INCOMPLETE } from '../protocol.js';
import { agedHint, combineHints, type CacheHint } from './cache-hint.js';
import type { Upstream } from '../upstream/upstream.js';
import type { UpstreamPool } from '../upstream/pool.js';
import type { UriCodec } from './uri.js';
import type { NameCodec } from '../uri/names.js';

/** Listing limits (see `list` in the config). */
export interface ListLimits {
  maxItemsPerPage: number;
  maxPagesPerUpstream: number;
  /** How long one list request waits for upstreams still making their first connection. */
  firstWaitMs: number;
}

/** Arms a one-shot timer and returns the function that disarms it (injected by tests). */
export type SetTimer = (ms: number, fire: () => void) => () => void;

const realTimer: SetTimer = (ms, fire) => {
  const t = setTimeout(fire, ms);
  t.unref();
  return () => clearTimeout(t);
};

/** Hooks of a {@link Lister}. */
export interface ListerOptions {
  /** Arms the `firstWaitMs` timer. Default: `setTimeout`. */
  setTimer?: SetTimer;
  /** Told when a page went out without an upstream that was still starting (it will come up later). */
  onStartingSkipped?: (server: string) => void;
  /** Client names of tools and prompts. Default: those lists are empty. */
  names?: NameCodec;
}

/** Why an upstream's part of a list is missing or cut short. */
export interface IncompleteUpstream {
  server: string;
  reason: WalkEnd;
}

/** Who a page is for: which items they may see, and what their cursors are bound to. */
export interface ListAudience {
  /** Whether an item of `server` is shown (items are namespaced; filtered before pagination). Default: all. */
  filter?: (server: string, item: Record<string, unknown>) => boolean;
  /** What cursors are sealed for (e.g. the principal): another audience cannot resume them. Default: ''. */
  binding?: string;
  /** Whether the audience may hear of `server` (named in `_meta` when it is incomplete). Default: all. */
  visible?: (server: string) => boolean;
}

/** One downstream page. */
export interface ListPage {
  items: Record<string, unknown>[];
  /** Items the audience's filter left out of this page. */
  filtered: number;
  nextCursor?: string;
  incomplete: IncompleteUpstream[];
  /**
   * How long this page may be reused and by whom: the shortest TTL of the upstream pages it holds
   * (aged when read ahead), 0 when an upstream's part is missing or there is none, `private` when
   * any part is or an earlier page of the same walk was.
   */
  hint: CacheHint;
}

/** Walks still running ahead for a cursor that was handed out. */
interface Continuation {
  walkers: PageWalker[];
  /** Stops the walks (see {@link stopWalks}). */
  stop: LazyAbort;
  /** An earlier page of the walk was private (from the cursor). */
  private?: boolean;
  /** Set when the next page took these walks over (so leaving the LRU must not stop them). */
  taken?: boolean;
  /** The pool epoch the walk started in: a cursor issued after a `servers` reload carries it, and is refused as stale. */
  epoch: string;
  /** What the cursor these walks are parked under was sealed for (set by {@link Lister.park}). */
  sealed?: { kind: ListKind; binding: string; private: boolean };
}

/**
 * Upstreams (in merge order, from the one being consumed) whose walks read ahead past their first
 * page. Every upstream's first page is fetched at once, which hides latency of remote upstreams;
 * deeper pages are fetched for the next few only, so the pages the client needs first are not
 * slowed down by fetching ones it needs last. Three: the one being consumed and two beyond it, so
 * the client's round trip between pages overlaps the fetching of two upstreams' lists, not one
 * (docs/list-cost.md: 8–9% less time per full list at 10 and 30 upstreams).
 */
const DEEP_UPSTREAMS = 3;

/**
 * Bounds on parked read-ahead: how many continuations, how many items they may buffer together
 * (each counted at its worst case, `maxItemsPerPage` per walking upstream), and how long one waits
 * for its client. A client that abandons list walks cannot pin more than this; an evicted
 * continuation is simply redone from its cursor.
 */
const CONTINUATIONS = { max: 64, maxItems: 100_000, ttlMs: 30_000 };

/**
 * Builds downstream pages of a merged list. Every upstream from the cursor's position on is walked
 * in parallel, each with bounded read-ahead; pages are merged in config order from the stream of
 * items the audience may see, exactly `maxItemsPerPage` of them on every page but the last (an
 * upstream page is split across downstream pages when needed). A page ends only once the next
 * visible item is found, so there is never an empty trailing page, and the page shapes depend on
 * nothing but the visible items. The cursor records which upstream, which of its cursors and the
 * offset inside that upstream page come next (plus a nonce), so it is self-contained; the walks
 * that were running ahead are parked under it and picked up by the next request, so the client's
 * processing of one page overlaps the fetching of the next. A parked walk that is evicted or
 * expires is simply redone. A request waits at most `firstWaitMs` for upstreams still starting;
 * it then reports them `starting` in `_meta` (list_changed follows when they come up).
 */
export class Lister {
  private readonly continuations = new LRUCache<string, Continuation>({
    max: CONTINUATIONS.max,
    maxSize: CONTINUATIONS.maxItems,
    sizeCalculation: (c) => Math.max(1, c.walkers.length * this.limits.maxItemsPerPage),
    ttl: CONTINUATIONS.ttlMs,
    dispose: (c) => {
      if (!c.taken) stopWalks(c.stop); // evicted, expired or cleared: nobody will resume these walks
    },
  });

  constructor(
    private readonly pool: UpstreamPool,
    private readonly codec: CursorCodec,
    private readonly limits: ListLimits,
    private readonly logger: Logger,
    /** The URIs clients see: list items are encoded with it. */
    private readonly uris: UriCodec,
    private readonly options: ListerOptions = {},
  ) {}

  /** One downstream page of `kind`, continuing from `cursor` when given. */
  async page(kind: ListKind, cursor: string | undefined, signal?: AbortSignal, audience: ListAudience = {}): Promise<ListPage> {
    const { filter, binding = '' } = audience;
    const { walkers, stop, private: wasPrivate, epoch } = this.resume(kind, cursor, binding);
    const max = this.limits.maxItemsPerPage;
    let filtered = 0;
    const items: Record<string, unknown>[] = [];
    const incomplete: IncompleteUpstream[] = [];
    let hiddenIncomplete = false;
    let hint: CacheHint = { ttlMs: Infinity, scope: wasPrivate ? 'private' : 'public' };
    // How long this request waits for upstreams still starting.
    const startWait = new LazyAbort();
    const disarm = (this.options.setTimer ?? realTimer)(this.limits.firstWaitMs, () => startWait.abort());
    // The caller's cancellation as a LazyAbort too: the per-page code then reads one kind of object.
    const cancel = new LazyAbort();
    const offCancel = signal && onAbort(signal, () => cancel.abort(signal.reason));
    // No closure is made per page or per upstream page below (each new one cost the optimised page a
    // deoptimisation, docs/list-cost.md). One scope for every page of a list: the first page is
    // private when any upstream's first page is (they are all fetched at once anyway); a later page
    // can only turn it private, never back.
    try {
      for (let k = 0; k < walkers.length; k++) {
        const walker = walkers[k]!;
        const server = walker.upstream.id;
        for (let d = k; d < Math.min(walkers.length, k + DEEP_UPSTREAMS); d++) walkers[d]?.deepen();
        for (;;) {
          const page = await walker.next(cancel, startWait);
          if (page === DONE) break;
          for (let j = 0; j < page.items.length; j++) {
            const item = page.items[j]!;
            if (filter && !filter(server, item)) {
              filtered++;
              continue;
            }
            if (items.length < max) {
              items.push(item);
              continue;
            }
            // The first item of the next page: the cursor points at it, the rest of its upstream page waits.
            // An upstream page counts towards this page's hint unless its first item already starts the next page.
            if (j > 0) hint = counted(hint, page);
            walker.pushBack({ ...page, items: page.items.slice(j), offset: page.offset + j });
            if (cursor === undefined && hint.scope !== 'private' && (await anyPrivate(walkers, startWait))) hint = { ttlMs: hint.ttlMs, scope: 'private' };
            const isPrivate = hint.scope === 'private';
            const nextCursor = this.park(kind, walkers.slice(k), stop, walker.upstream, page.at, page.pages - 1, page.offset + j, isPrivate, binding, epoch);
            return pageOf(items, filtered, incomplete, hiddenIncomplete, hint, nextCursor);
          }
          hint = counted(hint, page);
        }
        if (cancel.aborted) break;
        if (walker.endedBy) {
          // A server the audience may not see is not named; the page is still not cacheable.
          if (audience.visible?.(server) ?? true) incomplete.push({ server, reason: walker.endedBy });
          else hiddenIncomplete = true;
          if (walker.endedBy === 'starting') this.options.onStartingSkipped?.(server);
        }
      }
      if (!cancel.aborted && cursor === undefined && hint.scope !== 'private' && (await anyPrivate(walkers, startWait))) {
        hint = { ttlMs: hint.ttlMs, scope: 'private' };
      }
    } catch (err) {
      stopWalks(stop);
      throw err;
    } finally {
      disarm();
      offCancel?.();
    }
    stopWalks(stop);
    if (cancel.aborted) throw new ProxyError(ErrorCodes.CANCELLED, 'list cancelled');
    return pageOf(items, filtered, incomplete, hiddenIncomplete, hint, undefined);
  }

  /** Wraps `_meta` reporting incomplete upstreams onto a list result, when there are any. */
  static meta(incomplete: IncompleteUpstream[]): { _meta?: Record<string, unknown> } {
    return incomplete.length === 0 ? {} : { _meta: { [META_INCOMPLETE]: incomplete } };
  }

  /** Stops and forgets every parked read-ahead (after a list change it may be stale). */
  dropReadAhead(): void {
    this.continuations.clear();
  }

  /** Drops every parked walk. Idempotent. */
  close(): void {
    this.dropReadAhead();
  }

  /**
   * The walks for a page: parked ones for a cursor we handed out, else fresh ones from its position.
   * A cursor found parked, presented for the list, audience and epoch it was sealed for, is the very
   * token sealed for them (nobody else can spell it), so it is taken without unsealing it again;
   * any other token is unsealed first, and refused as before (another audience, list or epoch included).
   */
  private resume(kind: ListKind, cursor: string | undefined, binding: string): Continuation {
    if (cursor !== undefined) {
      const parked = this.continuations.peek(cursor);
      const sealed = parked?.sealed;
      if (parked && sealed && sealed.kind === kind && sealed.binding === binding && parked.epoch === this.pool.epoch)
        return this.take(cursor, parked, sealed.private);
    }
    const start = cursor === undefined ? undefined : this.codec.decode(cursor, kind, this.pool.epoch, binding);
    if (cursor !== undefined) {
      const parked = this.continuations.get(cursor);
      if (parked) return this.take(cursor, parked, start?.private === true);
    }
    const stop = new LazyAbort();
    const first = start?.index ?? 0;
    const limits = { readAhead: this.limits.maxItemsPerPage, maxPages: this.limits.maxPagesPerUpstream };
    const onSkip = (up: Upstream, err: unknown) =>
      this.logger.warn(
        { server: up.id, list: kind, code: (err as ProxyError | undefined)?.code, details: (err as ProxyError | undefined)?.details },
        'upstream skipped in list',
      );
    const walkers = this.pool.upstreams
      .slice(first)
      .map((u, k) =>
        k === 0
          ? new PageWalker(u, this.uris, kind, start?.upstreamCursor, start?.pages ?? 0, start?.offset ?? 0, limits, stop, onSkip, this.options.names)
          : new PageWalker(u, this.uris, kind, undefined, 0, 0, limits, stop, onSkip, this.options.names),
      );
    return { walkers, stop, epoch: this.pool.epoch, ...(start?.private ? { private: true } : {}) };
  }

  /** Takes the walks parked under `cursor` over (leaving the LRU must not stop them). */
  private take(cursor: string, parked: Continuation, wasPrivate: boolean): Continuation {
    parked.taken = true;
    this.continuations.delete(cursor);
    const { walkers, stop, epoch } = parked;
    return { walkers, stop, epoch, ...(wasPrivate ? { private: true } : {}) };
  }

  /** Issues the cursor for the rest of the list and parks the walks that are already running ahead. */
  private park(
    kind: ListKind,
    walkers: PageWalker[],
    stop: LazyAbort,
    upstream: Upstream,
    upstreamCursor: string | undefined,
    pages: number,
    offset: number,
    isPrivate: boolean,
    binding: string,
    epoch: string,
  ): string {
    const index = this.pool.upstreams.indexOf(upstream);
    const nonce = randomBytes(6).toString('base64url');
    const token = this.codec.encode({ kind, epoch, index, upstreamCursor, pages, offset, nonce, private: isPrivate }, binding);
    this.continuations.set(token, { walkers, stop, epoch, sealed: { kind, binding, private: isPrivate } });
    return token;
  }
}

/** `hint` with an upstream page's own hint counted in (aged by the time since it arrived). */
function counted(hint: CacheHint, page: WalkedPage): CacheHint {
  return combineHints(hint, agedHint(page.hint, Math.floor(performance.now() - page.fetchedAt)));
}

/** Whether any walk's first page is private (each waits no longer than `startWait` for its scope). */
async function anyPrivate(walkers: PageWalker[], startWait: LazyAbort): Promise<boolean> {
  const scopes = await Promise.all(walkers.map((w) => w.scopeBy(startWait)));
  return scopes.includes('private');
}

/** A finished downstream page: not cacheable (TTL 0) when an upstream's part is missing or no page had a TTL. */
function pageOf(
  items: Record<string, unknown>[],
  filtered: number,
  incomplete: IncompleteUpstream[],
  hiddenIncomplete: boolean,
  hint: CacheHint,
  nextCursor: string | undefined,
): ListPage {
  const final = incomplete.length > 0 || hiddenIncomplete || hint.ttlMs === Infinity ? { ttlMs: 0, scope: hint.scope } : hint;
  const page: ListPage = { items, filtered, incomplete, hint: final };
  if (nextCursor !== undefined) page.nextCursor = nextCursor;
  return page;
}

/**
 * Stops a list's walks, with the reason an `AbortController` gives when aborted without one (an
 * upstream page in flight is cancelled with it, as before the walks' stop was a {@link LazyAbort}).
 */
function stopWalks(stop: LazyAbort): void {
  if (!stop.aborted) stop.abort(new DOMException('This operation was aborted', 'AbortError'));
}
