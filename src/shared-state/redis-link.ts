// The SharedLink over node-redis: loaded only when the config has a `redis` block (the one module that imports `redis`).
import { readFileSync } from 'node:fs';
import { ErrorCodes, ProxyError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { RedisConfig } from '../config/schema.js';
import { newCounters, type ChannelListener, type SharedLink } from './link.js';

/** Options of {@link openRedisLink} beside the config block. */
export interface RedisLinkOptions {
  logger: Logger;
  /** Where `usernameEnv`/`passwordEnv` are looked up. Default: process.env. */
  env?: NodeJS.ProcessEnv;
}

/** Longest a closing link waits for Redis to answer what was sent before tearing the connections down. */
const CLOSE_WAIT_MS = 1000;

/** Reconnect backoff: 50 ms, 100 ms, … capped at 1 s, so a restarted Redis is found again within a second. */
const backoff = (retries: number): number => Math.min(1000, 50 * 2 ** Math.min(retries, 5));

/**
 * Opens the link to `config.url` without waiting for it: the replica serves at once (on its
 * fallback buckets) and starts sharing when Redis answers. Both connections reconnect forever with
 * {@link backoff}; the command connection has no offline queue, so a command while Redis is down
 * fails at once instead of waiting. Credentials come from the environment variables the config
 * names (a missing one is a `CONFIG_INVALID` naming it); they are never logged.
 */
export async function openRedisLink(config: RedisConfig, options: RedisLinkOptions): Promise<SharedLink> {
  const { createClient } = await import('redis');
  const { logger } = options;
  const env = options.env ?? process.env;
  const secret = (name: string | undefined, field: string): string | undefined => {
    if (name === undefined) return undefined;
    const value = env[name];
    if (value === undefined || value === '') throw new ProxyError(ErrorCodes.CONFIG_INVALID, `redis.${field}: environment variable ${name} is not set`);
    return value;
  };
  const username = secret(config.usernameEnv, 'usernameEnv');
  const password = secret(config.passwordEnv, 'passwordEnv');
  const tls = config.tls || config.url.startsWith('rediss:');
  const ca = config.caFile === undefined ? undefined : readFileSync(config.caFile);
  const socket = {
    reconnectStrategy: backoff,
    connectTimeout: 2000,
    ...(tls ? { tls: true as const, ...(ca ? { ca } : {}) } : {}),
  };
  const client = createClient({
    url: config.url,
    ...(username === undefined ? {} : { username }),
    ...(password === undefined ? {} : { password }),
    socket,
    disableOfflineQueue: true,
  });
  const subscriber = client.duplicate({ disableOfflineQueue: false });
  const counters = newCounters();
  const stateListeners: ((up: boolean) => void)[] = [];
  let closed = false;
  let lastError = '';
  const setUp = (up: boolean) => {
    if ((counters.up === 1) === up) return;
    counters.up = up ? 1 : 0;
    if (!up) counters.disconnects++;
    if (up) logger.info({ redis: redacted(config.url) }, 'redis connected: limits, change events and reloads are shared');
    else if (!closed) logger.warn({ redis: redacted(config.url), err: lastError }, 'redis unreachable: local fallback (limits divided by redis.replicas)');
    for (const l of stateListeners) l(up);
  };
  client.on('ready', () => setUp(true));
  client.on('end', () => setUp(false));
  client.on('reconnecting', () => setUp(false));
  client.on('error', (err: Error) => {
    lastError = err.message;
    setUp(false);
  });
  subscriber.on('error', () => undefined); // its state follows the command connection's; errors are logged there
  // Not awaited: the first attempt may fail, and both keep trying in the background.
  client.connect().catch(() => undefined);
  subscriber.connect().catch(() => undefined);

  return {
    prefix: config.keyPrefix,
    counters,
    get ready() {
      return client.isReady;
    },
    command(args, timeoutMs) {
      if (!client.isReady) return Promise.reject(new ProxyError(ErrorCodes.SHARED_STATE_UNAVAILABLE, 'redis not connected'));
      counters.roundTrips++;
      // node-redis's own `timeout` only covers a command not yet written: one sent to a Redis that
      // stopped answering would wait for it. The timer bounds the whole round trip.
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new ProxyError(ErrorCodes.SHARED_STATE_UNAVAILABLE, `redis: no answer within ${timeoutMs} ms`)), timeoutMs);
        client.sendCommand([...args], { timeout: timeoutMs }).then(
          (reply) => {
            clearTimeout(timer);
            resolve(reply);
          },
          (err: unknown) => {
            clearTimeout(timer);
            reject(new ProxyError(ErrorCodes.SHARED_STATE_UNAVAILABLE, `redis: ${(err as Error).message}`));
          },
        );
      });
    },
    publish(channel, message) {
      if (!client.isReady) return;
      counters.published++;
      client.publish(channel, message).catch(() => undefined);
    },
    async subscribe(channel: string, listener: ChannelListener) {
      await subscriber.subscribe(channel, (message: string) => {
        try {
          listener(message);
        } catch (err) {
          logger.error({ err: String(err), channel }, 'redis message handler failed');
        }
      });
    },
    onState(listener) {
      stateListeners.push(listener);
    },
    async close() {
      if (closed) return;
      closed = true;
      // A ready connection quits politely (waiting for its replies, at most CLOSE_WAIT_MS: a Redis
      // that stopped answering never sends them); one still trying to reconnect is torn down at once.
      const quit = async (c: typeof client): Promise<void> => {
        if (c.isReady) {
          let timer: NodeJS.Timeout | undefined;
          const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)));
          await Promise.race([c.close().catch(() => undefined), waited]);
          clearTimeout(timer);
        }
        try {
          if (c.isOpen) c.destroy();
        } catch {
          // already closed
        }
      };
      await Promise.all([quit(client), quit(subscriber)]);
    },
  };
}

/** The URL without its password, for the log. */
function redacted(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.href;
  } catch {
    return 'redis';
  }
}
