// Walks one upstream's list pages with bounded read-ahead, so a downstream page never waits for a fetch it could have overlapped.
import type { LazyAbort } from '../cancel.js';
import { withFields } from '../copy.js';
import type { ListKind } from './cursor.js';
import { ErrorCodes, JsonRpc, ProxyError } from '../errors.js';
import { ListPromptsResult, ListResourcesResult, ListTemplatesResult, ListToolsResult, META_UPSTREAM_NAME, Methods } from '../protocol.js';
import type { NameCodec } from '../uri/names.js';
import { hintOf, type CacheHint, type CacheScope } from './cache-hint.js';
import type { ResultSchema, Upstream } from '../upstream/upstream.js';
import type { UriCodec } from './uri.js';

/** One upstream page, already namespaced. */
export interface WalkedPage {
  items: Record<string, unknown>[];
  /** The upstream cursor that follows this page (undefined: the upstream's list ends here). */
  next: string | undefined;
  /** The upstream cursor this page was fetched with (undefined: the upstream's first page). */
  at: string | undefined;
  /** Items of that upstream page before `items[0]` (already consumed, or skipped on resume). */
  offset: number;
  /** Pages of this upstream walked up to and including this one (for the page limit). */
  pages: number;
  /** The upstream's own cache hint for this page, as of `fetchedAt`. */
  hint: CacheHint;
  /** When the page arrived (`performance.now()`), to age the hint of a page read ahead. */
  fetchedAt: number;
}

/**
 * Why a walk ended early: the upstream's part of the list is missing or cut short. `starting`: it
 * was still making its first connection when the list's wait for it (`list.firstWaitMs`) ran out.
 */
export type WalkEnd = 'unavailable' | 'timeout' | 'error' | 'page-limit' | 'starting';

const KINDS = {
  resources: { method: Methods.listResources, schema: ListResourcesResult, field: 'resources', key: 'uri', capability: 'resources' },
  templates: { method: Methods.listTemplates, schema: ListTemplatesResult, field: 'resourceTemplates', key: 'uriTemplate', capability: 'resources' },
  tools: { method: Methods.listTools, schema: ListToolsResult, field: 'tools', key: 'name', capability: 'tools' },
  prompts: { method: Methods.listPrompts, schema: ListPromptsResult, field: 'prompts', key: 'name', capability: 'prompts' },
} as const;

/** The list field of each kind's result. */
export const LIST_FIELDS: Record<ListKind, string> = { resources: 'resources', templates: 'resourceTemplates', tools: 'tools', prompts: 'prompts' };

/**
 * A listed tool or prompt as clients see it: its client name, and the upstream's own in `_meta`
 * (`mcp-federate/upstreamName`); every other field kept.
 */
export function namedItem(names: NameCodec, server: string, item: Record<string, unknown>): Record<string, unknown> {
  const name = item.name as string;
  const meta = typeof item._meta === 'object' && item._meta !== null ? (item._meta as Record<string, unknown>) : undefined;
  return withFields(item, { name: names.encode(server, name), _meta: withFields(meta, { [META_UPSTREAM_NAME]: name }) });
}

/** Sentinel returned by {@link PageWalker.next} when the walk is over. */
export const DONE = Symbol('done');

/**
 * Fetches pages of one upstream in sequence, running ahead of its consumer until `readAhead` items
 * are buffered. Never throws: a failed upstream ends the walk with a reason in `endedBy`.
 */
export class PageWalker {
  /** Set when the walk stopped before the upstream's list ended. */
  endedBy: WalkEnd | undefined;
  private readonly buffer: WalkedPage[] = [];
  private buffered = 0;
  private finished = false;
  private pumping = false;
  private wake: (() => void) | undefined;
  private readonly seen = new Set<string>();
  /** Until {@link deepen} is called, only the first page is fetched ahead. */
  private shallow = true;
  /** True while the walk waits for its upstream's first connection attempt. */
  private awaitingStart = false;
  private scopeOfFirst!: (scope: CacheScope) => void;
  /**
   * The cache scope of the first page this walk fetches; `public` (neutral: it adds nothing to the
   * list) when the walk ends without a page. Settles as soon as the first page arrives.
   */
  readonly firstScope = new Promise<CacheScope>((resolve) => (this.scopeOfFirst = resolve));

  constructor(
    readonly upstream: Upstream,
    private readonly uris: UriCodec,
    private readonly kind: ListKind,
    private cursor: string | undefined,
    private pages: number,
    /** Items to drop from the front of the first page fetched (a cursor's offset inside it). */
    private skip: number,
    private readonly limits: { readAhead: number; maxPages: number },
    /** The walk's stop: a {@link LazyAbort}, not an `AbortSignal` (in Node 20 each of those has a map of its own, so code that reads one is never monomorphic). */
    private readonly signal: LazyAbort,
    private readonly onSkip: (upstream: Upstream, err: unknown) => void,
    /** Client names of tools and prompts (required for those lists). */
    private readonly names?: NameCodec,
  ) {
    void this.pump();
  }

  /** Lets the walk read ahead past its first page (the consumer is getting close). */
  deepen(): void {
    if (!this.shallow) return;
    this.shallow = false;
    void this.pump();
  }

  /**
   * The next page, or {@link DONE}. Resolves early (DONE) when `cancel` aborts, and when `startWait`
   * aborts while the upstream is still making its first connection: the walk then ends `starting`.
   */
  async next(cancel?: LazyAbort, startWait?: LazyAbort): Promise<WalkedPage | typeof DONE> {
    for (;;) {
      this.deepen();
      const page = this.buffer.shift();
      if (page) {
        this.buffered -= page.items.length;
        void this.pump();
        return page;
      }
      if (this.finished || this.signal.aborted || cancel?.aborted === true) return DONE;
      if (this.awaitingStart && startWait?.aborted === true) {
        this.end('starting');
        this.scopeOfFirst('public'); // it adds nothing to this walk
        return DONE;
      }
      await new Promise<void>((resolve) => {
        const onAbort = () => {
          this.wake = undefined;
          offCancel?.();
          offStart?.();
          resolve();
        };
        this.wake = onAbort;
        // Neither fires at once: `cancel` is not aborted (checked above), and an aborted `startWait` is not listened to.
        const offCancel = cancel?.onAbort(onAbort);
        const offStart = startWait?.aborted === false ? startWait.onAbort(onAbort) : undefined;
      });
    }
  }

  /**
   * Puts the unconsumed rest of a page back at the front (a downstream page ended inside it): the
   * next {@link next} returns it first.
   */
  pushBack(page: WalkedPage): void {
    this.buffer.unshift(page);
    this.buffered += page.items.length;
  }

  /**
   * {@link firstScope}, but `private` (no basis to share) when `startWait` aborts while the upstream
   * is still making its first connection, so a page never waits past `startWait` for its scope.
   */
  scopeBy(startWait: LazyAbort): Promise<CacheScope> {
    if (!this.awaitingStart) return this.firstScope;
    return new Promise((resolve) => {
      const onAbort = () => {
        if (this.endedBy === 'starting') resolve('public');
        else if (this.awaitingStart) resolve('private');
      };
      const off = startWait.onAbort(onAbort);
      void this.firstScope.then((scope) => {
        off();
        resolve(scope);
      });
    });
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    const spec = KINDS[this.kind];
    const schema = spec.schema as ResultSchema<{ nextCursor?: string | undefined }>;
    try {
      if (this.upstream.generation === 0) {
        // Still starting: wait for it (the consumer decides how long it waits for us: see next()).
        this.awaitingStart = true;
        await this.upstream.settled();
        this.awaitingStart = false;
      }
      if (this.upstream.status === 'ready' && !this.upstream.supports(spec.capability)) this.finished = true;
      while (!this.finished && !this.signal.aborted && this.buffered < (this.shallow ? 1 : this.limits.readAhead)) {
        if (this.pages >= this.limits.maxPages) {
          this.end('page-limit');
          break;
        }
        const at = this.cursor;
        const params = at === undefined ? undefined : { cursor: at };
        const result = await this.fetch(spec.method, params, schema);
        const raw = (result as Record<string, unknown>)[spec.field] as Record<string, unknown>[];
        const id = this.upstream.id;
        const key = spec.key;
        const uris = this.uris;
        let items = raw;
        const names = this.names;
        if (key === 'name') items = names ? raw.map((item) => namedItem(names, id, item)) : [];
        else if (this.upstream.freshMessages) for (const item of raw) item[key] = uris.encode(id, item[key] as string);
        else items = raw.map((item) => ({ ...item, [key]: uris.encode(id, item[key] as string) })); // the sender's own objects
        const offset = Math.min(this.skip, items.length);
        if (offset > 0) items = items.slice(offset); // the part earlier downstream pages consumed
        this.skip = 0;
        let next = result.nextCursor;
        if (next !== undefined && this.seen.has(next)) next = undefined; // a cursor loop ends the walk
        if (next !== undefined) this.seen.add(next);
        this.cursor = next;
        this.pages++;
        const hint = hintOf(result);
        this.buffer.push({ items, next, at, offset, pages: this.pages, hint, fetchedAt: performance.now() });
        this.scopeOfFirst(hint.scope); // later calls are no-ops
        this.buffered += items.length;
        if (next === undefined) this.finished = true;
        this.notify();
      }
    } catch (err) {
      if (!this.signal.aborted) this.fail(err);
    } finally {
      this.pumping = false;
      if (this.finished || this.signal.aborted) this.scopeOfFirst('public');
      this.notify();
    }
  }

  /**
   * One page request, cancelled upstream if the walk stops while it is in flight. The SDK never
   * removes its listener from a request's signal: given the walk's own signal, every page already
   * answered would be "cancelled" (a `notifications/cancelled` upstream, an McpError) when the walk
   * stops at the end of each list. A signal per request, linked only while it is pending, avoids that.
   * The fast path removes its listener when the request settles: there the walk's signal is given as it is.
   */
  private async fetch<T>(method: string, params: Record<string, unknown> | undefined, schema: ResultSchema<T>): Promise<T> {
    if (this.upstream.releasesSignals) return this.upstream.request(method, params, schema, this.signal);
    const pending = new AbortController();
    const off = this.signal.onAbort(() => pending.abort(this.signal.reason));
    try {
      return await this.upstream.request(method, params, schema, pending.signal);
    } finally {
      off();
    }
  }

  private fail(err: unknown): void {
    const rpcCode = err instanceof ProxyError ? err.details?.rpcCode : undefined;
    if (this.kind !== 'resources' && rpcCode === JsonRpc.METHOD_NOT_FOUND) {
      this.finished = true; // an upstream without templates/list (tools/list, prompts/list) simply has none
      return;
    }
    this.onSkip(this.upstream, err);
    const code = err instanceof ProxyError ? err.code : undefined;
    this.end(code === ErrorCodes.UPSTREAM_UNAVAILABLE ? 'unavailable' : code === ErrorCodes.UPSTREAM_TIMEOUT ? 'timeout' : 'error');
  }

  private end(reason: WalkEnd): void {
    this.endedBy = reason;
    this.finished = true;
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
