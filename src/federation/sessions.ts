// The live downstream sessions, and list_changed (resources, tools, prompts) broadcast to all of them, coalesced.
import type { Metrics } from '../observe/metrics.js';

/** What the core may send to one downstream session. */
export interface Session {
  /** Unique per process, for logs. */
  readonly id: string;
  /** The principal the session acts for (its subscriptions count against its bounds); absent for the proxy's own holders. */
  readonly principal?: string;
  /** That principal's roles (which of its limits apply). */
  readonly roles?: readonly string[];
  /** Sends `notifications/resources/updated` for a namespaced URI. Never throws. */
  sendUpdated(uri: string): void;
  /** Sends `notifications/<kind>/list_changed` (default: resources). Never throws. */
  sendListChanged(kind?: ListChangeKind): void;
}

/** The lists whose changes are announced. */
export type ListChangeKind = 'resources' | 'tools' | 'prompts';
/** Every list: what an upstream coming or going, or a policy reload, may change. */
export const ALL_LISTS: readonly ListChangeKind[] = ['resources', 'tools', 'prompts'];

const RESOURCES_ONLY: readonly ListChangeKind[] = ['resources'];

/** Which sessions a list change is for; absent: every session. */
export type ListAudience = (session: Session) => boolean;

/**
 * Every live session. `listChanged()` may be called for each upstream event; within
 * `coalesceMs` they become one notification per session (a storm from many upstreams is one).
 */
export class SessionRegistry {
  private readonly sessions = new Set<Session>();
  private timer: NodeJS.Timeout | undefined;
  /** Kinds due at the next broadcast, each with its audiences (null: every session). */
  private readonly pending = new Map<ListChangeKind, ListAudience[] | null>();
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly coalesceMs: number,
    /** Told about list_changed sent and coalesced. Default: none. */
    private readonly metrics?: Metrics,
  ) {}

  /** Number of live sessions. */
  get size(): number {
    return this.sessions.size;
  }

  add(session: Session): void {
    this.sessions.add(session);
  }

  delete(session: Session): void {
    this.sessions.delete(session);
  }

  /** Runs on every change, at once (e.g. to drop list read-ahead that may now be stale). */
  onListChanged(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Schedules one list_changed of each of `kinds` (default: resources) to every session, or only to
   * those `audience` picks (decided when it is sent). Coalesced: within `coalesceMs` a session hears
   * each kind at most once, when any change of it was for that session.
   */
  listChanged(kinds: readonly ListChangeKind[] = RESOURCES_ONLY, audience?: ListAudience): void {
    for (const l of this.listeners) l();
    for (const k of kinds) {
      const audiences = this.pending.get(k);
      if (!audience) this.pending.set(k, null);
      else if (audiences === undefined) this.pending.set(k, [audience]);
      else audiences?.push(audience);
    }
    if (this.timer) return this.metrics?.notification('list_changed', 'coalesced');
    this.timer = setTimeout(() => this.broadcast(), this.coalesceMs);
    this.timer.unref();
  }

  private broadcast(): void {
    this.timer = undefined;
    const due = [...this.pending];
    this.pending.clear();
    for (const s of this.sessions) {
      for (const [kind, audiences] of due) {
        if (audiences && !audiences.some((pick) => pick(s))) continue;
        s.sendListChanged(kind);
        this.metrics?.notification('list_changed', 'sent');
      }
    }
  }

  /** Stops pending broadcasts and forgets every session. Idempotent. */
  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pending.clear();
    this.sessions.clear();
  }
}
