// What the gateway reports about itself (requests, upstreams, cache, audit, sessions, notifications): the Metrics interface and its no-op. Pure.

/** How one downstream request ended, folded to a few values (a label: never a URI, token or session). */
export type RequestOutcome = 'ok' | 'denied' | 'not_found' | 'rate_limited' | 'timeout' | 'cancelled' | 'error';

/** How a read met the cache: served from it, read through it, joined a read in flight, or not cached. */
export type CacheResult = 'hit' | 'miss' | 'coalesced' | 'bypass';

/** Upstream status as a gauge shows it. */
export type UpstreamState = 'up' | 'down' | 'reconnecting';

/** The transport and era a downstream session or listen uses. */
export interface SessionKind {
  transport: 'stdio' | 'http';
  /** `2025-11-25` or `2026-07-28`. */
  era: string;
}

/** One downstream request as the gate decided and finished it. */
export interface RequestRecord {
  /** The MCP method (`resources/read`, `tools/call`, …). */
  method: string;
  /** The configured server id it was routed to; undefined when none (lists, unknown URIs). */
  server: string | undefined;
  outcome: RequestOutcome;
  /** The policy's effect. */
  effect: 'allow' | 'deny';
  /** The rule that decided (`rate-limit`, `limit:sessions`, …): only rate-limit rules become a label. */
  rule: string;
  cache: CacheResult | undefined;
  durationMs: number;
  /** Who asked: a label only where the operator opted in (`metrics.principalLabel`). */
  principal: string;
}

/** Why an upstream was last unavailable, as a class (a label). */
export type FailureClass = 'closed' | 'timeout' | 'spawn' | 'connect' | 'http' | 'ping' | 'protocol' | 'error';

/** What gauges read at scrape time (never kept up to date on the hot path). */
export interface MetricSources {
  /** Every enabled upstream with its state and, when down, its last failure class. */
  upstreams(): Iterable<{ server: string; state: UpstreamState; failure: FailureClass | undefined }>;
  /** Stored read-cache entries. */
  cacheEntries(): number;
  /** Current use of per-principal bounds (each part of the gateway that holds some adds its own). */
  principalUse(): Iterable<{ limit: string; principal: string; used: number }>;
}

/**
 * What the gateway reports. Every method is cheap and never throws; {@link noopMetrics} does nothing,
 * so callers need no check (those that would build an argument first look at `enabled`).
 */
export interface Metrics {
  /** False for {@link noopMetrics}: skip building what would only be thrown away. */
  readonly enabled: boolean;
  /** One downstream request, decided and finished (or refused). */
  request(record: RequestRecord): void;
  /** One request to an upstream, answered or failed. */
  upstreamRequest(server: string, method: string, outcome: RequestOutcome, durationMs: number): void;
  /** An upstream changed status; a failure reason is classed by {@link failureClass}. */
  upstreamStatus(server: string, state: UpstreamState | 'gone', failure: FailureClass | undefined): void;
  /** One audit write awaited by a request: how long, and whether it failed. */
  auditWrite(durationMs: number, ok: boolean): void;
  /** A relayed notification: sent, coalesced into a later one, denied by policy at delivery, or dropped. */
  notification(kind: 'updated' | 'list_changed', result: 'sent' | 'coalesced' | 'denied' | 'dropped'): void;
  /** A downstream session opened (+1) or closed (-1). */
  session(kind: SessionKind, delta: 1 | -1): void;
  /** A downstream listen (2026 `subscriptions/listen`) opened (+1) or ended (-1). */
  listen(kind: SessionKind, delta: 1 | -1): void;
  /** What gauges read when scraped; each call adds to the sources (`principalUse` ones are summed, the others replaced). */
  watch(sources: Partial<MetricSources>): void;
}

/** Metrics off: every call is a no-op. */
export const noopMetrics: Metrics = Object.freeze({
  enabled: false,
  request: () => undefined,
  upstreamRequest: () => undefined,
  upstreamStatus: () => undefined,
  auditWrite: () => undefined,
  notification: () => undefined,
  session: () => undefined,
  listen: () => undefined,
  watch: () => undefined,
});

/**
 * The audit outcome of a request (`ok`, `denied`, `error:UPSTREAM_ERROR`, …) as a {@link RequestOutcome}.
 *
 * @example outcomeOf('error:UPSTREAM_ERROR') // 'error'
 */
export function requestOutcome(audit: string): RequestOutcome {
  switch (audit) {
    case 'ok':
    case 'denied':
    case 'not_found':
    case 'rate_limited':
    case 'timeout':
    case 'cancelled':
      return audit;
    default:
      return 'error';
  }
}

/**
 * An upstream's failure reason (free text) as a class.
 *
 * @example failureClass('connection closed') // 'closed'
 */
export function failureClass(reason: string): FailureClass {
  const r = reason.toLowerCase();
  if (r.startsWith('ping')) return 'ping';
  if (r === 'connection closed' || r.includes('closed')) return 'closed';
  if (r.includes('timed out') || r.includes('timeout')) return 'timeout';
  if (r.includes('enoent') || r.includes('spawn') || r.includes('eacces')) return 'spawn';
  if (r.includes('fetch failed') || r.includes('econnrefused') || r.includes('econnreset') || r.includes('enotfound')) return 'connect';
  if (/\bhttp \d{3}\b/.test(r) || r.includes('error posting')) return 'http';
  if (r.includes('protocol') || r.includes('version')) return 'protocol';
  return 'error';
}
