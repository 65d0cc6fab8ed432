// A listener of its own for `/metrics`, `/healthz` and `/readyz` (`metrics.listen`): for stdio deployments, or a scrape port apart from MCP.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MetricsConfig } from '../../config/schema.js';
import type { Logger } from '../../logger.js';
import type { PrometheusMetrics } from '../../observe/prometheus.js';
import { createOriginHostCheck, type OriginHostCheck } from '../origin-host.js';
import type { Proxy } from '../proxy-types.js';
import { OpsPaths } from './ops-paths.js';
import { json } from './reply.js';

/** A running operator listener. */
export interface OpsListener extends AsyncDisposable {
  /** Binds `metrics.listen`; resolves with the base URL (`http://127.0.0.1:9464`). */
  listen(): Promise<URL>;
  /** Stops listening and drops open connections. Idempotent. */
  close(): Promise<void>;
}

/** Splits `host:port` (`[::1]:9464` too). */
export function splitListen(listen: string): { host: string; port: number } {
  const colon = listen.lastIndexOf(':');
  const host = listen.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  return { host, port: Number(listen.slice(colon + 1)) };
}

/**
 * Serves the operator's paths on `config.listen` (see {@link OpsPaths}); Host and Origin are checked
 * as on the MCP endpoint (DNS rebinding of a loopback scrape port). `/readyz` names every upstream here:
 * the MCP credentials are not known on this port, so bind it where only operators reach it.
 *
 * @example
 * const ops = createOpsListener({ proxy, logger, metrics, config: { ...config.metrics, listen: '127.0.0.1:9464' } });
 * const url = await ops.listen();
 */
export function createOpsListener(options: {
  proxy: Pick<Proxy, 'pool' | 'gate' | 'readiness'>;
  logger: Logger;
  metrics: PrometheusMetrics | undefined;
  config: MetricsConfig;
}): OpsListener {
  const { host, port } = splitListen(options.config.listen ?? '127.0.0.1:0');
  const ops = new OpsPaths({ proxy: options.proxy, logger: options.logger, metrics: options.metrics, config: options.config, host });
  let guard: OriginHostCheck | undefined;
  const server = createServer({ headersTimeout: 10_000, requestTimeout: 10_000 });
  server.on('request', (req, res) => {
    const checked = guard ? guard(req.headersDistinct) : ({ ok: false } as const);
    if (!checked.ok) return json(res, 403, { error: 'forbidden' });
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (!ops.owns(path)) return json(res, 404, { error: 'not_found' });
    ops.handle(req, res, path).catch((err: unknown) => {
      options.logger.warn({ err: String(err) }, 'metrics listener: request failed');
      json(res, 500, { error: 'internal' });
    });
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  let closing: Promise<void> | undefined;
  const listener: OpsListener = {
    async listen() {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      const bound = (server.address() as AddressInfo).port;
      guard = createOriginHostCheck({ host, port: bound });
      return new URL(`http://${host.includes(':') ? `[${host}]` : host}:${bound}`);
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
    [Symbol.asyncDispose]() {
      return listener.close();
    },
  };
  return listener;
}
