// What the replicas share through: one link to Redis (commands, pub/sub, up or down), and the counters it keeps. No Redis import.

/**
 * Counters of the shared state, for the metrics endpoint (issue 19) to export as they are: all are
 * monotonic except `up`. Read them at any time; nothing resets them.
 */
export interface SharedStateCounters {
  /** 1 while the command connection to Redis is ready, else 0. */
  up: number;
  /**
   * Commands sent to Redis (each one round trip): rate-limit takes, lease requests, leased tokens
   * given back. Publishes are counted apart.
   */
  roundTrips: number;
  /** Rate-limit takes decided by the local fallback bucket (Redis down, slow, or refusing). */
  fallbacks: number;
  /** Tokens granted to this replica in leases (served later without a round trip). */
  leasedTokens: number;
  /** Leased tokens this replica did not use and gave back to their shared bucket. */
  returnedTokens: number;
  /** Times the link went from up to down. */
  disconnects: number;
  /** Messages published (change events, reloads); fire and forget, never on a request's path. */
  published: number;
  /** Change events received from other replicas. */
  received: number;
  /** Changes dropped as repeats within `redis.dedupeMs` (their cache entry is still invalidated). */
  duplicates: number;
}

/** A fresh set of counters, all zero. */
export function newCounters(): SharedStateCounters {
  return { up: 0, roundTrips: 0, fallbacks: 0, leasedTokens: 0, returnedTokens: 0, disconnects: 0, published: 0, received: 0, duplicates: 0 };
}

/** Called with each message on a channel (its text as published). */
export type ChannelListener = (message: string) => void;

/**
 * One replica's connection to Redis: a command connection (offline queue off, so nothing waits for
 * a reconnect) and a subscriber connection. Both reconnect by themselves.
 */
export interface SharedLink {
  /** The `redis.keyPrefix` every key and channel starts with. */
  readonly prefix: string;
  /** True while commands can be sent now (connected and ready). */
  readonly ready: boolean;
  readonly counters: SharedStateCounters;
  /** Sends one command; rejects at once when not ready, and after `timeoutMs` without an answer. */
  command(args: readonly string[], timeoutMs: number): Promise<unknown>;
  /** Publishes on `channel` (prefixed by the caller); never throws, never waits: lost while Redis is down. */
  publish(channel: string, message: string): void;
  /** Listens on `channel` for as long as the link lives (re-subscribed after every reconnect). */
  subscribe(channel: string, listener: ChannelListener): Promise<void>;
  /** Called with true when the link comes up, false when it goes down. */
  onState(listener: (up: boolean) => void): void;
  /** Closes both connections. Idempotent. */
  close(): Promise<void>;
}
