// Scale-out, composed: the Redis link, shared rate limits per bucket, change events and reloads between replicas. Loaded only with a `redis` block.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { RedisConfig } from './config/schema.js';
import type { Logger } from './logger.js';
import type { BucketLimit, Limiter } from './access/rate-limiter.js';
import { SharedRateLimiter } from './access/shared-limiter.js';
import { ChangeBus, type ChangeEvent } from './shared-state/change-bus.js';
import type { SharedLink, SharedStateCounters } from './shared-state/link.js';
import { openRedisLink } from './shared-state/redis-link.js';
import { preloadScripts } from './shared-state/lua-script.js';
import { TOKEN_BUCKET } from './shared-state/token-bucket.js';
import { GIVE_BACK, TOKEN_LEASE } from './shared-state/token-lease.js';

export type { ChangeEvent } from './shared-state/change-bus.js';
export type { SharedStateCounters } from './shared-state/link.js';

/**
 * What one replica shares with the others. The composition root asks it for limiters and wires
 * change events and reloads through it; the metrics endpoint reads `counters`.
 */
export interface Cluster {
  /** This replica's id (`redis.chain`, default the host name): the audit `chain` of its records. */
  readonly replica: string;
  /** The config block it was opened with. */
  readonly config: RedisConfig;
  /** Round trips, fallbacks, publishes, duplicates, and whether Redis is up (see {@link SharedStateCounters}). */
  readonly counters: SharedStateCounters;
  /**
   * A limiter for the named bucket (`reads`, `completions`, `calls`, …): its buckets live in Redis
   * under `<prefix>rl:<bucket>:<principal>`, so every replica draws on the same ones.
   */
  limiter(bucket: string, limits: readonly BucketLimit[], options?: { now?: () => number }): Limiter;
  /** Tells the other replicas of a change this one learned (from its upstream or a poll). Never waits. */
  publishChange(change: ChangeEvent): void;
  /** `listener` hears every other replica's changes. */
  onChange(listener: (change: ChangeEvent) => void): void;
  /** With `redis.reloadChannel`: tells the other replicas to reload their config files. */
  publishReload(): void;
  /** With `redis.reloadChannel`: `listener` runs when another replica published a reload. */
  onReload(listener: () => void): void;
  /** Gives back every open limiter's leased tokens, then closes the link. Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link openCluster}. */
export interface ClusterOptions {
  logger: Logger;
  /** Where credential variables are looked up. Default: process.env. */
  env?: NodeJS.ProcessEnv;
  /** The link to use instead of node-redis (tests). */
  link?: SharedLink;
}

/**
 * Opens the link to Redis (without waiting for it: see `openRedisLink`) and the channels. A
 * replica that cannot reach Redis still serves: on its fallback buckets, with its own changes only.
 *
 * @example const cluster = await openCluster(config.redis, { logger });
 */
export async function openCluster(config: RedisConfig, options: ClusterOptions): Promise<Cluster> {
  const { logger } = options;
  const link = options.link ?? (await openRedisLink(config, { logger, ...(options.env ? { env: options.env } : {}) }));
  const replica = config.chain ?? hostname();
  const origin = `${replica}/${randomBytes(6).toString('base64url')}`;
  preloadScripts(link, [TOKEN_BUCKET, TOKEN_LEASE, GIVE_BACK], config.timeoutMs);
  const bus = new ChangeBus(link, origin);
  const changeListeners: ((c: ChangeEvent) => void)[] = [];
  const reloadListeners: (() => void)[] = [];
  /** The limiters handed out and not closed yet (a reload closes those it replaced). */
  const limiters = new Set<SharedRateLimiter>();
  const reloadChannel = config.reloadChannel === undefined ? undefined : `${link.prefix}${config.reloadChannel}`;
  const subscribed = (what: string, p: Promise<void>) =>
    p.catch((err: unknown) => logger.error({ err: String(err), channel: what }, 'redis subscribe failed: changes of other replicas are not heard'));
  void subscribed(
    'changes',
    bus.listen((c) => changeListeners.forEach((l) => l(c))),
  );
  if (reloadChannel) {
    void subscribed(
      reloadChannel,
      link.subscribe(reloadChannel, (message) => {
        if (message === origin) return;
        logger.info({ from: message.split('/')[0] }, 'reload published by another replica');
        reloadListeners.forEach((l) => l());
      }),
    );
  }
  logger.info({ replica, redis: config.url.replace(/\/\/[^@]*@/, '//***@'), replicas: config.replicas }, 'scale-out: sharing state through redis');
  return {
    replica,
    config,
    counters: link.counters,
    limiter: (bucket, limits, o = {}) => {
      const limiter: SharedRateLimiter = new SharedRateLimiter(bucket, limits, link, {
        replicas: config.replicas,
        timeoutMs: config.timeoutMs,
        leaseMs: config.leaseMs,
        onClose: () => limiters.delete(limiter),
        ...(o.now ? { now: o.now } : {}),
      });
      limiters.add(limiter);
      return limiter;
    },
    publishChange: (change) => bus.publish(change),
    onChange: (listener) => void changeListeners.push(listener),
    publishReload: () => {
      if (reloadChannel) link.publish(reloadChannel, origin);
    },
    onReload: (listener) => void reloadListeners.push(listener),
    close: async () => {
      // Leased tokens go back while the link is still up: a replica that stops takes nothing from the others.
      await Promise.allSettled([...limiters].map((l) => l.close()));
      await link.close();
    },
  };
}
