// All upstreams by id in config order: parallel start, shared by every session, fan-in of their events.
import { createHash } from 'node:crypto';
import type { FederateConfig } from '../config/schema.js';
import { ErrorCodes, ProxyError } from '../errors.js';
import type { Logger } from '../logger.js';
import { Upstream, type UpstreamNotification, type UpstreamOptions, type UpstreamStatus } from './upstream.js';

/** A notification tagged with the upstream that sent it. */
export interface PoolNotification extends UpstreamNotification {
  server: string;
}

/**
 * The upstream pool. Disabled servers are not part of it (their ids are unknown to the facade).
 * Listeners registered here hear every upstream, including ones (re)connected later.
 */
export class UpstreamPool {
  /** Enabled upstreams, in config order. */
  readonly upstreams: readonly Upstream[];
  /** Ids of the enabled upstreams (for URI decoding). */
  readonly ids: ReadonlySet<string>;
  /** Identifies this set and order of upstreams; list cursors from another epoch are refused. */
  readonly epoch: string;
  private readonly byId = new Map<string, Upstream>();
  private readonly notificationListeners = new Set<(n: PoolNotification) => void>();
  private readonly statusListeners = new Set<(server: string, s: UpstreamStatus) => void>();
  private closed = false;

  constructor(
    config: FederateConfig,
    options: UpstreamOptions,
    private readonly logger: Logger,
  ) {
    for (const [id, server] of Object.entries(config.servers)) {
      if (!server.enabled) continue;
      const upstream = new Upstream(id, server, options);
      upstream.onNotification((n) => {
        const tagged = { ...n, server: id };
        for (const l of this.notificationListeners) l(tagged);
      });
      upstream.onStatus((s) => {
        for (const l of this.statusListeners) l(id, s);
      });
      this.byId.set(id, upstream);
    }
    this.upstreams = [...this.byId.values()];
    this.ids = new Set(this.byId.keys());
    this.epoch = createHash('sha256').update(JSON.stringify([...this.ids])).digest('base64url').slice(0, 12);
  }

  /** The upstream with this id, if enabled. */
  get(id: string): Upstream | undefined {
    return this.byId.get(id);
  }

  /**
   * Connects every upstream in parallel. Never rejects: an upstream that fails is logged and left
   * out (status "unavailable") while the others serve.
   */
  async start(): Promise<void> {
    const results = await Promise.allSettled(this.upstreams.map((u) => u.connect()));
    results.forEach((r, i) => {
      if (r.status === 'rejected' && !(r.reason instanceof ProxyError && r.reason.code === ErrorCodes.CLOSED)) {
        // A child's last stderr lines go with it: the usual reason it failed, and otherwise logged only at info.
        const stderr = this.upstreams[i]?.failure?.stderr ?? [];
        const fields = { server: this.upstreams[i]?.id, err: String(r.reason), ...(stderr.length > 0 ? { stderr } : {}) };
        this.logger.error(fields, 'upstream failed to start; serving the others');
      }
    });
  }

  /** Hears every notification of every upstream. Returns the unsubscribe function. */
  onNotification(listener: (n: PoolNotification) => void): () => void {
    this.notificationListeners.add(listener);
    return () => this.notificationListeners.delete(listener);
  }

  /** Hears every status change of every upstream. Returns the unsubscribe function. */
  onStatus(listener: (server: string, s: UpstreamStatus) => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  /** Closes every upstream in parallel. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled(this.upstreams.map((u) => u.close()));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
