// The operator's paths: `/healthz`, `/readyz` (503 naming what is not ready) and the Prometheus `/metrics`, on the MCP listener or a listener of their own.
import { timingSafeEqual, createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MetricsConfig } from '../../config/schema.js';
import type { Logger } from '../../logger.js';
import type { PrometheusMetrics } from '../../observe/prometheus.js';
import type { AuthResult } from '../auth/authenticator.js';
import type { Proxy } from '../proxy-types.js';
import { isLoopback } from '../origin-host.js';
import { json } from './reply.js';

/** Options of {@link OpsPaths}. */
export interface OpsPathsOptions {
  proxy: Pick<Proxy, 'pool' | 'gate' | 'readiness'>;
  logger: Logger;
  /** The exposition, when metrics are served on this listener. */
  metrics?: PrometheusMetrics | undefined;
  /** The `metrics` block (path, token). */
  config: MetricsConfig;
  /** The host this listener is bound to (decides `requireToken: auto`). */
  host: string;
}

/**
 * Authenticates a caller of `/readyz` with the MCP credentials; undefined when there is no `auth`
 * block (every caller then hears everything, as on a loopback-only gateway).
 */
export type OpsAuthenticate = ((req: IncomingMessage) => Promise<AuthResult>) | undefined;

/**
 * Serves the operator's paths. `/readyz` answers 200 or 503 with `{ ready, notReady }`: `config`,
 * `audit`, `upstreams` (none ready) and `upstream:<id>` entries; an upstream's id is named only to a
 * caller that may see it (with an `auth` block: authenticated and allowed by policy), others read
 * `upstreams`. `/metrics` needs the scrape token unless the listener is on loopback
 * (`metrics.requireToken: auto`).
 */
export class OpsPaths {
  private readonly tokenRequired: boolean;
  private readonly digest: Buffer | undefined;

  constructor(private readonly options: OpsPathsOptions) {
    const { config } = options;
    this.tokenRequired = config.requireToken === 'auto' ? !isLoopback(options.host) : config.requireToken;
    this.digest = config.sha256 === undefined ? undefined : Buffer.from(config.sha256, 'hex');
    if (options.metrics && this.tokenRequired && !this.digest) {
      options.logger.warn({ host: options.host }, 'metrics: a token is required on this bind and none is configured (metrics.token): every scrape gets 401');
    }
  }

  /** True for the paths served here (each answers GET only). */
  owns(path: string): boolean {
    return path === '/healthz' || path === '/readyz' || (this.options.metrics !== undefined && path === this.options.config.path);
  }

  /** Answers one request for a path {@link owns} says is served here. */
  async handle(req: IncomingMessage, res: ServerResponse, path: string, authenticate?: OpsAuthenticate): Promise<void> {
    if (req.method !== 'GET') return json(res, 405, { error: 'method_not_allowed' }, { allow: 'GET' });
    if (path === '/healthz') return json(res, 200, { status: 'ok' });
    if (path === '/readyz') return this.readyz(req, res, authenticate);
    return this.scrape(req, res);
  }

  private async scrape(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const metrics = this.options.metrics!;
    if (this.tokenRequired && !this.presented(req.headersDistinct.authorization)) {
      return json(res, 401, { error: 'unauthorized' }, { 'www-authenticate': 'Bearer realm="metrics"' });
    }
    const body = await metrics.exposition();
    res.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' }).end(body);
  }

  /** True when `Authorization: Bearer <token>` carries the scrape token (compared as SHA-256 digests, in constant time). */
  private presented(values: string[] | undefined): boolean {
    if (!this.digest || values?.length !== 1) return false;
    const match = /^Bearer ([^\s]+)$/i.exec(values[0]!);
    if (!match) return false;
    return timingSafeEqual(createHash('sha256').update(match[1]!, 'utf8').digest(), this.digest);
  }

  private async readyz(req: IncomingMessage, res: ServerResponse, authenticate: OpsAuthenticate): Promise<void> {
    const { proxy } = this.options;
    const state = proxy.readiness();
    const status = state.ready ? 200 : 503;
    const scraper = this.digest !== undefined && this.presented(req.headersDistinct.authorization);
    // No auth block (a loopback gateway) or the scrape token: every upstream may be named.
    if (!authenticate || scraper) {
      const upstreams = proxy.pool.upstreams.map((u) => ({ server: u.id, status: u.status }));
      return json(res, status, { ready: state.ready, ...(state.ready ? {} : { notReady: state.notReady }), upstreams });
    }
    const who = req.headersDistinct.authorization ? await authenticate(req) : undefined;
    if (!who?.ok) {
      const notReady = [...new Set(state.notReady.map((n) => (n.startsWith('upstream:') ? 'upstreams' : n)))];
      return json(res, status, state.ready ? { ready: true } : { ready: false, notReady });
    }
    const caller = { principal: who.principal, roles: who.roles };
    const visible = (server: string) => proxy.gate.visibleServer(caller, server);
    const notReady = [...new Set(state.notReady.map((n) => (n.startsWith('upstream:') && !visible(n.slice('upstream:'.length)) ? 'upstreams' : n)))];
    const upstreams = proxy.pool.upstreams.filter((u) => visible(u.id)).map((u) => ({ server: u.id, status: u.status }));
    json(res, status, { ready: state.ready, ...(state.ready ? {} : { notReady }), upstreams });
  }
}
