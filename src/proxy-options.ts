// The options of the composition root (`createProxy`): what tests and the CLI inject instead of the defaults. Types only.
import type { Clock } from './federation/cache.js';
import type { FederateConfig } from './config/schema.js';
import type { SetTimer } from './federation/listing.js';
import type { Logger } from './logger.js';
import type { TransportFactory } from './upstream/transports.js';
import type { AuditLog } from './audit/log.js';
import type { Metrics } from './observe/metrics.js';
import type { Cluster } from './cluster.js';

/** Options of `createProxy` (`proxy.ts`). */
export interface ProxyOptions {
  config: FederateConfig;
  logger: Logger;
  /** How upstream transports are made. Default: stdio / Streamable HTTP / SSE from the config. */
  transportFactory?: TransportFactory;
  /** Key for list cursors. Default: 32 random bytes per process. */
  cursorKey?: Uint8Array;
  /** Clock for cache TTLs. Default: performance. */
  clock?: Clock;
  /** Jitter source for reconnect backoff, in [0, 1). Default: Math.random. */
  random?: () => number;
  /** Reconnect upstreams that fail or go away (off for one-shot commands like `ls`). Default: true. */
  reconnect?: boolean;
  /** The audit log. Default: opened from `config.audit` (none: records nothing). */
  audit?: AuditLog;
  /** Monotonic ms clock for rate limits. Default: performance.now. */
  now?: () => number;
  /** Arms the `list.firstWaitMs` timer of each list request. Default: setTimeout. */
  listTimer?: SetTimer;
  /** Arms held-call expiry (`bridge.heldCallTtlMs`). Default: setTimeout. */
  bridgeTimer?: SetTimer;
  /** Wall clock (ms) for the expiry of sealed input states. Default: Date.now. */
  wallClock?: () => number;
  /** Where requests, upstreams, the cache, audit writes and sessions are reported. Default: {@link noopMetrics}. */
  metrics?: Metrics;
  /** Scale-out (the `redis` block, opened by `openCluster`): shared limits and change events. Default: none (nothing shared). */
  cluster?: Cluster;
  /**
   * Plain 2025-11-25 reads and tool calls on stdio connections take the edge fast lane
   * (`serve/fast-lane.ts`). Default: true, unless the environment sets `MCP_FEDERATE_SDK_REQUESTS=1`
   * (every request through the SDK, as the suites run to prove the lane changes nothing).
   */
  fastLane?: boolean;
}
