// All upstreams by id in config order: parallel start, shared by every session, fan-in of their events.
import { withFields } from '../copy.js';
import { createHash } from 'node:crypto';
import type { FederateConfig, ServerConfig } from '../config/schema.js';
import type { ServerChanges } from '../config/reload-diff.js';
import { ErrorCodes, ProxyError } from '../errors.js';
import type { Logger } from '../logger.js';
import { Upstream, type UpstreamNotification, type UpstreamOptions, type UpstreamStatus } from './upstream.js';

/** A notification tagged with the upstream that sent it. */
export interface PoolNotification extends UpstreamNotification {
  server: string;
}

/**
 * The upstream pool. Disabled servers are not part of it (their ids are unknown to the facade).
 * Listeners registered here hear every upstream, including ones (re)connected later and ones a
 * reload added; an upstream a reload removed or replaced is heard no more.
 */
export class UpstreamPool {
  private byId = new Map<string, Upstream>();
  private current: { upstreams: readonly Upstream[]; ids: ReadonlySet<string>; epoch: string } = { upstreams: [], ids: new Set(), epoch: '' };
  private readonly notificationListeners = new Set<(n: PoolNotification) => void>();
  private readonly statusListeners = new Set<(server: string, s: UpstreamStatus) => void>();
  private closed = false;
  private started = false;
  /** Bumped by every {@link UpstreamPool.reconcile} that touches an upstream: cursors from before it are refused. */
  private revision = 0;

  constructor(
    config: FederateConfig,
    private readonly options: UpstreamOptions,
    private readonly logger: Logger,
  ) {
    for (const [id, server] of Object.entries(config.servers)) {
      if (server.enabled) this.byId.set(id, this.make(id, server));
    }
    this.refresh();
  }

  /** Enabled upstreams, in config order. */
  get upstreams(): readonly Upstream[] {
    return this.current.upstreams;
  }

  /** Ids of the enabled upstreams (for URI decoding). */
  get ids(): ReadonlySet<string> {
    return this.current.ids;
  }

  /** Identifies this set and order of upstreams; list cursors from another epoch are refused. */
  get epoch(): string {
    return this.current.epoch;
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
    this.started = true;
    await this.connectAll(this.upstreams);
  }

  /**
   * Applies an edit of the `servers` block at once: `removed` and `restarted` upstreams leave the
   * pool (and are closed), `added` and `restarted` ones join it as new upstreams (connected when
   * the pool has started), `unchanged` ones are kept as they are. The order follows `servers`.
   * Resolves when the closes and connection attempts have finished; never rejects.
   */
  reconcile(servers: Readonly<Record<string, ServerConfig>>, changes: ServerChanges): Promise<void> {
    if (this.closed) return Promise.resolve();
    const leaving = [...changes.removed, ...changes.restarted].flatMap((id) => this.byId.get(id) ?? []);
    const fresh = new Set([...changes.added, ...changes.restarted]);
    const next = new Map<string, Upstream>();
    const joining: Upstream[] = [];
    for (const [id, server] of Object.entries(servers)) {
      if (!server.enabled) continue;
      const kept = fresh.has(id) ? undefined : this.byId.get(id);
      const upstream = kept ?? this.make(id, server);
      if (!kept) joining.push(upstream);
      next.set(id, upstream);
    }
    this.byId = next;
    if (leaving.length > 0 || joining.length > 0) this.revision++;
    this.refresh();
    const closing = Promise.allSettled(leaving.map((u) => u.close()));
    const starting = this.started ? this.connectAll(joining) : Promise.resolve();
    return Promise.all([closing, starting]).then(() => undefined);
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

  private make(id: string, server: ServerConfig): Upstream {
    const upstream = new Upstream(id, server, this.options);
    // An upstream that left the pool (removed or replaced by a reload) is heard no more.
    upstream.onNotification((n) => {
      if (this.byId.get(id) !== upstream) return;
      const tagged = withFields(n, { server: id });
      for (const l of this.notificationListeners) l(tagged);
    });
    upstream.onStatus((s) => {
      if (this.byId.get(id) !== upstream) return;
      for (const l of this.statusListeners) l(id, s);
    });
    return upstream;
  }

  private refresh(): void {
    const ids = [...this.byId.keys()];
    const epoch = createHash('sha256')
      .update(JSON.stringify(this.revision === 0 ? ids : [ids, this.revision]))
      .digest('base64url')
      .slice(0, 12);
    this.current = { upstreams: [...this.byId.values()], ids: new Set(ids), epoch };
  }

  private async connectAll(upstreams: readonly Upstream[]): Promise<void> {
    const results = await Promise.allSettled(upstreams.map((u) => u.connect()));
    results.forEach((r, i) => {
      if (r.status === 'rejected' && !(r.reason instanceof ProxyError && r.reason.code === ErrorCodes.CLOSED)) {
        // A child's last stderr lines go with it: the usual reason it failed, and otherwise logged only at info.
        const stderr = upstreams[i]?.failure?.stderr ?? [];
        const fields = { server: upstreams[i]?.id, err: String(r.reason), ...(stderr.length > 0 ? { stderr } : {}) };
        this.logger.error(fields, 'upstream failed to start; serving the others');
      }
    });
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
