// One path for every change a replica learns or hears of: invalidate, deliver once, tell the other replicas.
import type { Logger } from '../logger.js';
import type { ChangedList, ChangeEvent } from '../shared-state/change-bus.js';
import { RecentChanges } from './recent-changes.js';

/** Where changes go beyond this process (scale-out); absent: nowhere. */
export interface ChangePeers {
  /** Repeats within this many ms are not delivered again (`redis.dedupeMs`). */
  readonly dedupeMs: number;
  /** Counted: changes dropped as repeats. */
  readonly counters: { duplicates: number };
  /** Tells the other replicas (never waits). */
  publishChange(change: ChangeEvent): void;
}

/** Options of {@link ChangeFanout}. */
export interface ChangeFanoutOptions {
  /** Drops the cached entry of (server, uri). */
  invalidate: (server: string, uri: string) => void;
  /** Delivers `updated` to this process's subscribers and listeners of (server, uri). */
  deliver: (server: string, uri: string) => void;
  /**
   * One of `server`'s lists changed: drop what is held of it and schedule list_changed to this
   * process's sessions (for tools and prompts, to those whose view of the list changed); `remote`
   * when another replica published it.
   */
  listChanged: (server: string, list: ChangedList, remote: boolean) => void;
  logger: Logger;
  /** The other replicas. Default: none (a single process: every change is delivered as it comes). */
  peers?: ChangePeers;
  /** Monotonic ms clock for the dedupe window. Default: performance.now. */
  now?: () => number;
}

/**
 * Every change, whether an upstream said so, a poller noticed, or another replica published it,
 * takes one path: invalidate first (so a client that re-reads as soon as it hears gets fresh
 * content), then deliver. Scaled out, a change learned here is also published, and one heard from
 * several sources (each replica holding the upstream subscription hears it, then the others' copies)
 * is delivered once: a repeat within `dedupeMs` only invalidates. Tool and prompt list changes are
 * not windowed: `listChanged` compares the list with the one last announced, so a repeat announces
 * nothing, and two real changes in quick succession are both announced.
 */
export class ChangeFanout {
  private readonly recent: RecentChanges | undefined;

  constructor(private readonly options: ChangeFanoutOptions) {
    const { peers } = options;
    this.recent = peers ? new RecentChanges({ windowMs: peers.dedupeMs, ...(options.now ? { now: options.now } : {}) }) : undefined;
  }

  /** A resource's content changed; `remote` when another replica published it. */
  updated(server: string, uri: string, remote = false): void {
    const { peers, logger } = this.options;
    this.options.invalidate(server, uri);
    if (this.recent && !this.recent.fresh(`u\0${server}\0${uri}`)) {
      peers!.counters.duplicates++;
      logger.debug({ server, remote }, 'change repeated: cache invalidated, not delivered again');
      return;
    }
    this.options.deliver(server, uri);
    if (!peers) return;
    logger.debug({ server, remote }, 'change delivered');
    if (!remote) peers.publishChange({ kind: 'updated', server, uri });
  }

  /** One of an upstream's lists changed; `remote` when another replica published it. */
  listChanged(server: string, list: ChangedList = 'resources', remote = false): void {
    const { peers, logger } = this.options;
    if (list === 'resources' && this.recent && !this.recent.fresh(`l\0${server}`)) {
      peers!.counters.duplicates++;
      return;
    }
    this.options.listChanged(server, list, remote);
    if (!peers) return;
    logger.debug({ server, list, remote }, 'list change heard');
    if (!remote) peers.publishChange({ kind: 'list', server, list });
  }
}
