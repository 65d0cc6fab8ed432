// Metrics in the Prometheus text format through prom-client: one private registry per gateway, names after the OTel MCP conventions.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { FastCounter, FastHistogram, type CounterSeries, type HistogramSeries } from './fast-series.js';
import type { CacheResult, FailureClass, MetricSources, Metrics, RequestOutcome, RequestRecord, SessionKind, UpstreamState } from './metrics.js';

/** Options of {@link createPrometheusMetrics}. */
export interface PrometheusOptions {
  /** Label rate-limit refusals and per-principal use with the principal (high cardinality: opt-in). Default: false. */
  principalLabel?: boolean;
  /** Collect the default process and Node.js metrics. Default: true. */
  processMetrics?: boolean;
}

/** Metrics that can be scraped. */
export interface PrometheusMetrics extends Metrics {
  /** The exposition, in the Prometheus text format. */
  exposition(): Promise<string>;
  /** Its `Content-Type` (`text/plain; version=0.0.4; charset=utf-8`). */
  readonly contentType: string;
}

/** Seconds; from half a millisecond (a cached read) to the default 30 s upstream timeout. */
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const AUDIT_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.1, 1];
const STATES: readonly UpstreamState[] = ['up', 'down', 'reconnecting'];

/** A slot per outcome (times two for the policy effect, in request series). */
const OUTCOME_SLOT: Readonly<Record<RequestOutcome, number>> = { ok: 0, denied: 1, not_found: 2, rate_limited: 3, timeout: 4, cancelled: 5, error: 6 };
const CACHE_SLOT: Readonly<Record<CacheResult, number>> = { hit: 0, miss: 1, coalesced: 2, bypass: 3 };

/** Series by method, then server, then a slot of a small fixed set: found per request without building a key. */
class Slots<S> {
  private readonly byMethod = new Map<string, Map<string, (S | undefined)[]>>();

  /** The slots of `method` and `server` (made empty the first time). */
  of(method: string, server: string): (S | undefined)[] {
    let byServer = this.byMethod.get(method);
    if (!byServer) this.byMethod.set(method, (byServer = new Map<string, (S | undefined)[]>()));
    let slots = byServer.get(server);
    if (!slots) byServer.set(server, (slots = []));
    return slots;
  }
}

/** The rate limit a refusal hit, from the rule that decided it. */
function limitOf(rule: string): string | undefined {
  if (rule === 'rate-limit') return 'reads';
  if (rule === 'completion-rate-limit') return 'completions';
  return rule.startsWith('limit:') ? rule.slice('limit:'.length) : undefined;
}

/**
 * Prometheus metrics for one gateway, in a registry of their own (two gateways in one process never
 * share counters). Label values are server ids, method names, outcomes and a few fixed words; a URI,
 * token or session id never becomes one, and a principal only with `principalLabel`.
 *
 * @example
 * const metrics = createPrometheusMetrics();
 * metrics.request({ method: 'resources/read', server: 'docs', outcome: 'ok', effect: 'allow', rule: 'default', cache: 'hit', durationMs: 0.4, principal: 'alice' });
 * res.setHeader('content-type', metrics.contentType).end(await metrics.exposition());
 */
export function createPrometheusMetrics(options: PrometheusOptions = {}): PrometheusMetrics {
  const registers = [new Registry()];
  const [registry] = registers as [Registry];
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry });
  const byPrincipal = options.principalLabel === true;
  let sources: Partial<MetricSources> = {};
  const principalSources: MetricSources['principalUse'][] = [];
  const principalUse = function* () {
    for (const source of principalSources) yield* source();
  };

  const { requests, duration, upstreamDuration, decisions, cacheReads } = perRequestSeries(registry);
  const limited = new Counter({
    name: 'mcp_federate_rate_limited_total',
    help: 'Requests refused by a rate limit or a per-principal bound, by limit.',
    labelNames: byPrincipal ? ['limit', 'principal'] : ['limit'],
    registers,
  });
  new Gauge({
    name: 'mcp_federate_cache_entries',
    help: 'Entries stored in the read cache.',
    registers,
    collect() {
      this.set(sources.cacheEntries?.() ?? 0);
    },
  });
  const auditDuration = new Histogram({
    name: 'mcp_federate_audit_write_duration_seconds',
    help: 'Time a request waited for its audit record to be written.',
    buckets: AUDIT_BUCKETS,
    registers,
  });
  const auditFailures = new Counter({ name: 'mcp_federate_audit_write_failures_total', help: 'Audit records that could not be written.', registers });
  const notifications = new Counter({
    name: 'mcp_federate_notifications_total',
    help: 'Relayed notifications by kind and result: sent, coalesced, denied at delivery, dropped.',
    labelNames: ['kind', 'result'],
    registers,
  });
  const sessions = new Gauge({
    name: 'mcp_federate_sessions',
    help: 'Open downstream sessions by transport and era.',
    labelNames: ['transport', 'era'],
    registers,
  });
  const listens = new Gauge({
    name: 'mcp_federate_listens',
    help: 'Open downstream subscriptions/listen streams by transport and era.',
    labelNames: ['transport', 'era'],
    registers,
  });
  const reconnects = new Counter({
    name: 'mcp_federate_upstream_reconnects_total',
    help: 'Upstream connections made after the first (restarts, reconnects, recycles).',
    labelNames: ['server'],
    registers,
  });
  // What upstreamStatus heard: the last failure class, and whether each server was ever up.
  const lastFailure = new Map<string, FailureClass>();
  const everUp = new Set<string>();
  watchedGauges(registers, { sources: () => sources, lastFailure, principalUse, byPrincipal });

  // Series found per request by nested lookups of the label values as they come (method, then server,
  // then a slot for the small fixed sets): no key string built and no label object made per request.
  const requestSeries = new Slots<{ count: CounterSeries; time: HistogramSeries; decision: CounterSeries }>();
  const upstreamSeries = new Slots<HistogramSeries>();
  const cacheSeries = new Slots<CounterSeries>();

  return {
    enabled: true,
    contentType: registry.contentType,
    exposition: () => registry.metrics(),
    request(r: RequestRecord) {
      const server = r.server ?? '';
      const slots = requestSeries.of(r.method, server);
      const slot = OUTCOME_SLOT[r.outcome] * 2 + (r.effect === 'allow' ? 0 : 1);
      let series = slots[slot];
      if (!series) {
        const key = `${r.method}\0${server}\0${r.outcome}\0${r.effect}`;
        const labels = { mcp_method_name: r.method, server, outcome: r.outcome };
        series = slots[slot] = {
          count: requests.series(key, labels),
          time: duration.series(key, labels),
          decision: decisions.series(`${r.method}\0${r.effect}`, { mcp_method_name: r.method, effect: r.effect }),
        };
      }
      series.count.value++;
      duration.observe(series.time, r.durationMs / 1000);
      series.decision.value++;
      if (r.cache !== undefined) {
        const cached = cacheSeries.of('', server);
        const c = (cached[CACHE_SLOT[r.cache]] ??= cacheReads.series(`${server}\0${r.cache}`, { server, result: r.cache }));
        c.value++;
      }
      if (r.outcome === 'rate_limited') {
        const limit = limitOf(r.rule) ?? 'other';
        limited.inc(byPrincipal ? { limit, principal: r.principal } : { limit });
      }
    },
    upstreamRequest(server: string, method: string, outcome: RequestOutcome, durationMs: number) {
      const slots = upstreamSeries.of(method, server);
      const series = (slots[OUTCOME_SLOT[outcome]] ??= upstreamDuration.series(`${method}\0${server}\0${outcome}`, {
        mcp_method_name: method,
        server,
        outcome,
      }));
      upstreamDuration.observe(series, durationMs / 1000);
    },
    upstreamStatus(server: string, state: UpstreamState | 'gone', failure: FailureClass | undefined) {
      if (state === 'gone') {
        lastFailure.delete(server);
        everUp.delete(server);
        return;
      }
      if (failure !== undefined) lastFailure.set(server, failure);
      if (state !== 'up') return;
      if (everUp.has(server)) reconnects.inc({ server });
      else {
        everUp.add(server);
        reconnects.inc({ server }, 0); // present from the first connection, so increase() sees the first reconnect
      }
    },
    auditWrite(durationMs: number, ok: boolean) {
      auditDuration.observe(durationMs / 1000);
      if (!ok) auditFailures.inc();
    },
    notification(kind, result) {
      notifications.inc({ kind, result });
    },
    session(kind: SessionKind, delta: 1 | -1) {
      sessions.inc({ transport: kind.transport, era: kind.era }, delta);
    },
    listen(kind: SessionKind, delta: 1 | -1) {
      listens.inc({ transport: kind.transport, era: kind.era }, delta);
    },
    watch(next: Partial<MetricSources>) {
      if (next.principalUse) principalSources.push(next.principalUse);
      sources = { ...sources, ...next };
    },
  };
}

/** What {@link watchedGauges} reads when scraped. */
interface WatchedReads {
  sources: () => Partial<MetricSources>;
  lastFailure: ReadonlyMap<string, FailureClass>;
  principalUse: () => Iterable<ReturnType<MetricSources['principalUse']> extends Iterable<infer U> ? U : never>;
  byPrincipal: boolean;
}

/** The gauges read at scrape time: upstream status, up, last failure class, per-principal use. */
function watchedGauges(registers: Registry[], reads: WatchedReads): void {
  const { lastFailure, principalUse, byPrincipal } = reads;
  const upstreams = () => reads.sources().upstreams?.() ?? [];
  new Gauge({
    name: 'mcp_federate_upstream_status',
    help: 'Upstream status: 1 for the state it is in (up, down, reconnecting), 0 for the others.',
    labelNames: ['server', 'state'],
    registers,
    collect() {
      this.reset();
      for (const u of upstreams()) for (const state of STATES) this.set({ server: u.server, state }, u.state === state ? 1 : 0);
    },
  });
  new Gauge({
    name: 'mcp_federate_upstream_up',
    help: 'Whether the upstream is connected and ready (1) or not (0).',
    labelNames: ['server'],
    registers,
    collect() {
      this.reset();
      for (const u of upstreams()) this.set({ server: u.server }, u.state === 'up' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'mcp_federate_upstream_last_failure',
    help: 'The class of the last reason an upstream was unavailable (1 for that class).',
    labelNames: ['server', 'class'],
    registers,
    collect() {
      this.reset();
      for (const [server, cls] of lastFailure) this.set({ server, class: cls }, 1);
    },
  });
  new Gauge({
    name: 'mcp_federate_principal_limit_use',
    help: 'Current use of per-principal bounds (sessions, listens, in-flight, subscriptions), summed over principals unless labelled.',
    labelNames: byPrincipal ? ['limit', 'principal'] : ['limit'],
    registers,
    collect() {
      this.reset();
      if (byPrincipal) {
        for (const u of principalUse()) this.inc({ limit: u.limit, principal: u.principal }, u.used);
        return;
      }
      const sums = new Map<string, number>();
      for (const u of principalUse()) sums.set(u.limit, (sums.get(u.limit) ?? 0) + u.used);
      for (const [limit, used] of sums) this.set({ limit }, used);
    },
  });
}

/** The per-request series: plain fields on the hot path (see fast-series.ts), read by the registry when scraped. */
function perRequestSeries(registry: Registry) {
  const requests = new FastCounter('mcp_federate_requests_total', 'Downstream MCP requests by method, upstream server and outcome.');
  const duration = new FastHistogram(
    'mcp_server_operation_duration_seconds',
    'Duration of downstream MCP requests, decided and answered (OTel mcp.server.operation.duration).',
    DURATION_BUCKETS,
  );
  const upstreamDuration = new FastHistogram(
    'mcp_client_operation_duration_seconds',
    'Duration of requests to upstream MCP servers, queue wait included (OTel mcp.client.operation.duration).',
    DURATION_BUCKETS,
  );
  const decisions = new FastCounter('mcp_federate_policy_decisions_total', 'Access policy decisions by method and effect.');
  const cacheReads = new FastCounter(
    'mcp_federate_cache_reads_total',
    'Reads by how they met the read cache: hit, miss, coalesced (joined a read in flight), bypass.',
  );
  for (const metric of [requests, duration, upstreamDuration, decisions, cacheReads]) registry.registerMetric(metric as never);
  return { requests, duration, upstreamDuration, decisions, cacheReads };
}
