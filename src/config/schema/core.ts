// The blocks that tune the shared core: list, cache, subscriptions, wire, reconnect, listChanged. Pure.
import { z } from 'zod';
import { positiveInt } from './fields.js';

/** Listing limits. */
export const ListSchema = z.strictObject({
  /**
   * Items in one downstream page, exactly: every page but the last holds this many of the items the
   * caller may see (an upstream page is split across downstream pages when needed), and there is
   * never an empty page. Also how far each upstream's walk reads ahead of the client. Default: 1000.
   */
  maxItemsPerPage: positiveInt().default(1000),
  /** Most pages walked per upstream in one list (guards servers that return cursors forever). Default: 1000. */
  maxPagesPerUpstream: positiveInt().default(1000),
  /**
   * How long one list request waits for upstreams still making their first connection, in
   * milliseconds. It then answers with the others and names the late ones in `_meta`
   * (`mcp-federate/incomplete`, reason `starting`); `list_changed` follows when they come up.
   * Default: 2000.
   */
  firstWaitMs: z.number().int().min(0).default(2000),
});

/** The shared read cache. */
export const CacheSchema = z.strictObject({
  /** Set to false to turn the read cache off for every upstream. Default: true. */
  enabled: z.boolean().default(true),
  /**
   * Bound on the total size of cached contents (text characters + base64 blob characters). An entry
   * once served also keeps the JSON text of its answer (written once, spliced into every hit), so the
   * memory the cache holds is up to about twice this. Default: 64 MiB.
   */
  maxBytes: positiveInt().default(64 * 1024 * 1024),
  /**
   * How long a finished read may be served again without asking its upstream, in milliseconds.
   * 0 (the default) keeps the proxy transparent: concurrent identical reads share one upstream call,
   * but every later read goes upstream, unless the upstream's own result carries a `ttlMs` hint.
   * Default: 0.
   */
  ttlMs: z.number().int().min(0).default(0),
  /** Larger results are served but not stored. Default: 1 MiB. */
  maxEntryBytes: positiveInt().default(1024 * 1024),
  /**
   * For upstreams that support `resources/subscribe`: hold an upstream subscription for up to this
   * many stored entries at once (taken before the read, released with the entry or when the read is
   * not stored), so those entries are invalidated exactly when they change rather than only when
   * their TTL runs out. 0 turns it off. Default: 1000.
   */
  coherentUris: z.number().int().min(0).default(1000),
});

/** The subscription relay. */
export const SubscriptionsSchema = z.strictObject({
  /** For upstreams without `resources/subscribe`: how often a subscribed URI is re-read to detect changes. Default: 5000. */
  pollIntervalMs: positiveInt().default(5000),
  /** Updates of one URI to one session within this window become one notification (plus the last one). Default: 50. */
  coalesceMs: z.number().int().min(0).default(50),
  /** Most URIs one session may be subscribed to at once; one more is refused (`-32603 Too many subscriptions`). Default: 10000. */
  maxPerSession: positiveInt().default(10_000),
  /**
   * Most distinct URIs one principal may be subscribed to at once, across all its sessions and 2026
   * listens; one more is refused (`-32603 Too many subscriptions`, `data.retryAfterMs`), audited as
   * `error:LIMIT_EXCEEDED`. Default: 1000.
   */
  maxPerPrincipal: positiveInt().default(1000),
});

/** Bounds on the JSON-RPC messages the proxy accepts and queues. */
export const WireSchema = z.strictObject({
  /** Deepest nesting of objects and arrays accepted in a message from a client or an upstream. Default: 1000. */
  maxDepth: z.number().int().min(8).max(10_000).default(1000),
  /**
   * Most requests one client may have in flight; past it the proxy stops reading that client's
   * input until half of them are answered (backpressure, nothing is refused). Default: 1000.
   */
  maxInFlight: positiveInt().default(1000),
  /** Largest message (one line on stdio) a client may send, in bytes. Default: 16 MiB. */
  maxMessageBytes: positiveInt().default(16 * 1024 * 1024),
  /**
   * Bound on one session's output that the client has not read yet, in bytes. Past it, pending
   * `resources/updated` notifications are coalesced per URI; if answers alone exceed it, the session
   * is closed with an error log. Default: 64 MiB.
   */
  maxQueuedBytes: positiveInt().default(64 * 1024 * 1024),
  /**
   * HTTP: most requests one principal may have in flight at once, across its sessions and
   * connections (2026 listens are bounded by `http.maxListensPerPrincipal` instead). One more gets
   * 429 with `Retry-After` and a JSON-RPC error with `data.retryAfterMs`; audited as `limited`.
   * Default: 64.
   */
  maxInFlightPerPrincipal: positiveInt().default(64),
  /**
   * HTTP: bound on the answer bytes queued for one principal that its clients have not read yet,
   * across all its responses and streams (kernel socket buffers excluded). A principal at it gets
   * 429 with `Retry-After` for new requests (backpressure); a response whose write takes it past the
   * bound is closed (its connection is not reading). Default: 64 MiB.
   */
  maxQueuedBytesPerPrincipal: positiveInt().default(64 * 1024 * 1024),
});

/** Reconnecting upstreams that went away. */
export const ReconnectSchema = z.strictObject({
  /** First delay before reconnecting, doubled each failed attempt (with jitter). Default: 500. */
  initialDelayMs: positiveInt().default(500),
  /** Upper bound of the delay. Default: 30000. */
  maxDelayMs: positiveInt().default(30_000),
});

/** `notifications/resources/list_changed` towards clients. */
export const ListChangedSchema = z.strictObject({
  /** Changes within this window become one notification. Default: 100. */
  coalesceMs: z.number().int().min(0).default(100),
});
