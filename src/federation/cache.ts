// Read cache: single-flight upstream reads, reuse only where opted in or hinted, byte-bounded, TTL on an injected clock.
import { onAbort, type SignalSource } from '../cancel.js';
import { isPersonal } from './relay.js';
import { LRUCache } from 'lru-cache';
import type { ReadResultT } from '../protocol.js';
import { encodeUri } from './uri.js';

/** A monotonic millisecond clock (lru-cache's `perf`). */
export interface Clock {
  now(): number;
}

/** Options of {@link ReadCache}. */
export interface ReadCacheOptions {
  /** Bound on the total size of stored contents. */
  maxBytes: number;
  /** Default reuse window, in milliseconds; 0: a finished read is never reused unless its upstream hints a TTL. */
  ttlMs: number;
  /** Larger results are returned but not stored. */
  maxEntryBytes: number;
  /** Clock for TTLs. Default: performance. */
  clock?: Clock;
  /** Called whenever a stored entry leaves (evicted, expired, invalidated, cleared); not when it is replaced. */
  onRemove?: (server: string, uri: string) => void;
}

/** How one read is fetched on a miss. */
export interface CacheLoad {
  server: string;
  uri: string;
  /** This server's reuse window (its `cacheTtlMs`); undefined: the cache's default. */
  ttlMs?: number | undefined;
  /** The upstream call. */
  load: () => Promise<ReadResultT>;
  /**
   * Runs before a load whose result the operator's TTL would store (e.g. subscribe upstream
   * first, so no change can fall between the read and the subscription). Resolves true when it
   * took something that `release` must give back unless the result ends up stored.
   */
  hold?: (() => Promise<boolean>) | undefined;
  /** Gives back what `hold` took; called on every path that does not end in a stored entry. */
  release?: (() => void) | undefined;
}

/** Which entry a read was served from, and how much life that entry has left. */
export interface CacheOutcome {
  result: ReadResultT;
  hit: boolean;
  /** True when this read joined another's read in flight (coalesced) instead of starting one. */
  shared?: boolean;
  /** How long ago the result was fetched from the upstream (0 unless `hit`). */
  ageMs: number;
  /** Remaining life of the stored entry that holds this result; undefined when it is not stored. */
  remainingMs: number | undefined;
}

/** A shared load in flight; `stale` once its URI was invalidated meanwhile (its result is then not stored). */
interface Flight {
  promise: Promise<ReadResultT>;
  stale: boolean;
}

/**
 * The read cache shared by every session, keyed by server id + upstream URI. Concurrent reads of
 * one key share one upstream call (single-flight); a caller that gives up (its own signal) does not
 * abort the shared call. A finished result is stored only when it may be reused: the operator's TTL
 * (`ttlMs`, or the server's) or, without one, the upstream's own `ttlMs` hint in the result; a
 * `cacheScope: "private"` result is never stored. Errors are never stored, nor a result whose URI
 * was invalidated while it was being read (its callers still get it: it is as fresh as their request).
 */
export class ReadCache {
  private readonly lru: LRUCache<string, ReadResultT>;
  private readonly flights = new Map<string, Flight>();

  constructor(private readonly options: ReadCacheOptions) {
    this.lru = new LRUCache<string, ReadResultT>({
      maxSize: options.maxBytes,
      maxEntrySize: options.maxEntryBytes,
      sizeCalculation: (value) => Math.max(1, sizeOf(value)),
      ttlAutopurge: false,
      ttlResolution: 0, // read the (injectable) clock on every lookup; no memoised 'now'
      updateAgeOnGet: false,
      allowStale: false,
      ...(options.clock ? { perf: options.clock } : {}),
      dispose: (_value, key, reason) => {
        if (reason === 'set') return; // replaced by a fresher result: still stored
        const plus = key.indexOf('+');
        options.onRemove?.(key.slice(0, plus), key.slice(plus + 1));
      },
    });
  }

  /** Number of stored entries (expired ones included until they are next touched). */
  get size(): number {
    return this.lru.size;
  }

  /** Serves a stored entry, joins the read in flight, or starts one; `signal` only abandons this caller's wait. */
  async read(req: CacheLoad, signal?: SignalSource): Promise<CacheOutcome> {
    const key = encodeUri(req.server, req.uri);
    const cached = this.lru.get(key);
    if (cached !== undefined) {
      const remainingMs = Math.max(0, this.lru.getRemainingTTL(key));
      const window = reuseWindow(req.ttlMs ?? this.options.ttlMs, cached); // the TTL the entry was stored with
      return { result: cached, hit: true, ageMs: Math.max(0, window - remainingMs), remainingMs };
    }
    let flight = this.flights.get(key);
    const shared = flight !== undefined;
    if (!flight) {
      const f: Flight = { promise: undefined as unknown as Promise<ReadResultT>, stale: false };
      f.promise = this.load(key, req, f);
      f.promise.catch(() => undefined); // observed by the callers; never an unhandled rejection
      this.flights.set(key, (flight = f));
    }
    const result = await abandonable(flight.promise, signal);
    const remainingMs = this.lru.peek(key) === result ? Math.max(0, this.lru.getRemainingTTL(key)) : undefined;
    return { result, hit: false, shared, ageMs: 0, remainingMs };
  }

  /** Drops one entry; a read in flight for it will not be stored. */
  invalidate(server: string, uri: string): void {
    const key = encodeUri(server, uri);
    this.lru.delete(key);
    const flight = this.flights.get(key);
    if (flight) {
      flight.stale = true;
      this.flights.delete(key); // later callers start a fresh read
    }
  }

  /** Drops every entry of one upstream (on reconnect; a scan, which is rare enough). */
  invalidateServer(server: string): void {
    const prefix = encodeUri(server, '');
    for (const key of [...this.lru.keys()]) if (key.startsWith(prefix)) this.lru.delete(key);
    for (const [key, flight] of [...this.flights]) {
      if (!key.startsWith(prefix)) continue;
      flight.stale = true;
      this.flights.delete(key);
    }
  }

  /** Removes expired entries now (each removal is reported to `onRemove`). */
  purgeExpired(): void {
    this.lru.purgeStale();
  }

  /** Drops everything. Idempotent. */
  close(): void {
    this.lru.clear();
    for (const flight of this.flights.values()) flight.stale = true;
    this.flights.clear();
  }

  private async load(key: string, req: CacheLoad, flight: Flight): Promise<ReadResultT> {
    const operatorTtl = req.ttlMs ?? this.options.ttlMs;
    let held = false;
    let stored = false;
    try {
      if (operatorTtl > 0 && req.hold) held = await req.hold().catch(() => false);
      const result = await req.load();
      const ttl = reuseWindow(operatorTtl, result);
      if (ttl > 0 && !flight.stale) {
        this.lru.set(key, result, { ttl });
        stored = this.lru.has(key); // false when larger than maxEntryBytes
      }
      return result;
    } finally {
      if (this.flights.get(key) === flight) this.flights.delete(key);
      if (held && !stored) req.release?.();
    }
  }
}

/**
 * How long a result may be reused: the operator's TTL when set; otherwise the upstream's own hint
 * (an MCP 2026-07-28 style `ttlMs` on the result); 0 for a `private` result or without either.
 */
export function reuseWindow(operatorTtlMs: number, result: ReadResultT): number {
  if (result.cacheScope === 'private' || isPersonal(result)) return 0; // a question for one caller, or an answer made with one caller's input
  if (operatorTtlMs > 0) return operatorTtlMs;
  const hint = result.ttlMs;
  return typeof hint === 'number' && Number.isFinite(hint) && hint > 0 ? Math.floor(hint) : 0;
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
function abandonable<T>(p: Promise<T>, signal: SignalSource | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const off = onAbort(signal, () => reject(signal.reason));
    p.then(
      (v) => {
        off();
        resolve(v);
      },
      (e: unknown) => {
        off();
        reject(e);
      },
    );
  });
}
