// Read cache over lru-cache: coalesced upstream reads, byte-bounded, TTL on an injected clock, exact invalidation.
import { LRUCache } from 'lru-cache';
import type { ReadResultT } from './protocol.js';
import { encodeUri } from './uri.js';

/** A monotonic millisecond clock (lru-cache's `perf`). */
export interface Clock {
  now(): number;
}

/** Options of {@link ReadCache}. */
export interface ReadCacheOptions {
  /** Bound on the total size of stored contents. */
  maxBytes: number;
  /** Default entry age limit, in milliseconds. */
  ttlMs: number;
  /** Larger results are returned but not stored. */
  maxEntryBytes: number;
  /** Clock for TTLs. Default: performance. */
  clock?: Clock;
  /** Called when an entry is evicted (size bound) or expires; not when it is invalidated. */
  onEvict?: (server: string, uri: string) => void;
}

/** How one read is fetched on a miss: the upstream call, given the server's TTL. */
export interface CacheLoad {
  server: string;
  uri: string;
  ttlMs?: number | undefined;
  load: () => Promise<ReadResultT>;
  /** Awaited on a miss before the (shared) load starts, e.g. to subscribe upstream first. */
  beforeLoad?: (() => Promise<void>) | undefined;
}

interface Context {
  load: () => Promise<ReadResultT>;
}

/** Which entry a read was served from. */
export interface CacheOutcome {
  result: ReadResultT;
  hit: boolean;
}

/**
 * The read cache shared by every session. Keyed by server id + upstream URI. Concurrent misses of
 * one key share one upstream call; a caller that gives up (its own signal) does not abort the
 * shared call; errors are never stored; an entry invalidated while its fetch is in flight is not
 * stored when the fetch completes (callers already waiting still get that result, which is as
 * fresh as their request).
 */
export class ReadCache {
  private readonly lru: LRUCache<string, ReadResultT, Context>;

  constructor(private readonly options: ReadCacheOptions) {
    this.lru = new LRUCache<string, ReadResultT, Context>({
      maxSize: options.maxBytes,
      maxEntrySize: options.maxEntryBytes,
      sizeCalculation: (value) => Math.max(1, sizeOf(value)),
      ttl: options.ttlMs,
      ttlAutopurge: false,
      ttlResolution: 0, // read the (injectable) clock on every lookup; no memoised 'now'
      updateAgeOnGet: false,
      ignoreFetchAbort: true,
      ...(options.clock ? { perf: options.clock } : {}),
      fetchMethod: (_key, _stale, { context }) => context.load(),
      dispose: (_value, key, reason) => {
        if (reason !== 'evict' && reason !== 'expire') return;
        const plus = key.indexOf('+');
        options.onEvict?.(key.slice(0, plus), key.slice(plus + 1));
      },
    });
  }

  /** Number of stored entries. */
  get size(): number {
    return this.lru.size;
  }

  /** Serves from the cache or loads (coalesced); `signal` only abandons this caller's wait. */
  async read(req: CacheLoad, signal?: AbortSignal): Promise<CacheOutcome> {
    const key = encodeUri(req.server, req.uri);
    const cached = this.lru.get(key);
    if (cached !== undefined) return { result: cached, hit: true };
    if (req.beforeLoad) await req.beforeLoad();
    const pending = this.lru.fetch(key, { context: { load: req.load }, ...(req.ttlMs ? { ttl: req.ttlMs } : {}) });
    return { result: await abandonable(pending as Promise<ReadResultT>, signal), hit: false };
  }

  /** Drops one entry (and any fetch in flight for it, which then will not be stored). */
  invalidate(server: string, uri: string): void {
    this.lru.delete(encodeUri(server, uri));
  }

  /** Drops every entry of one upstream (on reconnect; a scan, which is rare enough). */
  invalidateServer(server: string): void {
    const prefix = encodeUri(server, '');
    for (const key of [...this.lru.keys()]) if (key.startsWith(prefix)) this.lru.delete(key);
  }


  /** Drops everything. Idempotent. */
  close(): void {
    this.lru.clear();
  }
}

/** Bytes a result holds, counted as characters of text and base64 blobs (what dominates memory). */
export function sizeOf(result: ReadResultT): number {
  let n = 0;
  for (const c of result.contents) {
    if (typeof c.text === 'string') n += c.text.length;
    if (typeof c.blob === 'string') n += c.blob.length;
    n += c.uri.length;
  }
  return n;
}

/** Resolves like `p`, but rejects with the signal's reason as soon as `signal` aborts. */
function abandonable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
