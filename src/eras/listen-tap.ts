// subscriptions/listen on a connection: filters narrowed to the URIs the federation accepted, relay holds for as long as each listen lives.
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import type { Send } from '../wire/compose.js';
import { acceptEach } from './listen-accept.js';

const LISTEN = 'subscriptions/listen';
const CANCELLED = 'notifications/cancelled';

/** What the tap asks of the federation for one connection. */
export interface ListenHolds {
  /**
   * Subscribes the connection's session to a namespaced URI: the URI as held (its canonical form,
   * which updates carry), or undefined when it is not served (unknown, refused, denied).
   */
  accept(uri: string): Promise<string | undefined>;
  /** Gives up what `accept` took, given the URI it returned. Never throws. */
  release(uri: string): void;
}

/** Told when a listen opens (forwarded to what serves it) and when it ends (answered, cancelled): a gauge of open listens. */
export interface ListenCounter {
  opened(): void;
  ended(): void;
}

interface Pending {
  cancelled: boolean;
}

type Id = string | number;
interface Listen {
  id: Id;
  method: string;
  params?: { notifications?: { resourceSubscriptions?: unknown } } & Record<string, unknown>;
}

/**
 * Two wrappers ({@link receive}, {@link send}) between a connection's transport and the SDK's stdio entry (which serves `subscriptions/listen`
 * itself, acknowledging every requested URI and routing updates by exact match). The tap holds a
 * listen request back until each requested resource URI has been accepted by the federation (the
 * session is subscribed through the relay, so no update can be missed once the acknowledgement is
 * out), then forwards it with `resourceSubscriptions` narrowed to the accepted URIs, each in the
 * canonical form it is held in (the form updates carry): the acknowledgement then names exactly
 * those. Every listen is decided again, even for a URI another listen holds. A listen lives until an answer with its id goes out
 * (graceful close, error, or the connection ends) or the client cancels it; then its URIs are
 * released (counted per URI, so two listens of one URI hold it until both end).
 *
 * Other messages pass straight through, in order; a listen is forwarded when its URIs are settled.
 */
export class ListenTap {
  private readonly pending = new Map<Id, Pending>();
  private readonly active = new Map<Id, string[]>();
  private readonly counts = new Map<string, number>();
  /** Accepts and releases run one at a time, so a release cannot race an accept of the same URI. */
  private chain: Promise<unknown> = Promise.resolve();
  /** Listens forwarded and not yet answered or cancelled, each counted once by `counter`. */
  private readonly open = new Set<Id>();

  constructor(
    private readonly holds: ListenHolds,
    private readonly counter?: ListenCounter,
  ) {}

  /** The inbound wrapper: holds a listen back until its URIs are settled, and sees cancels. */
  readonly receive =
    <A extends unknown[]>(next: (message: JSONRPCMessage, ...rest: A) => void) =>
    (message: JSONRPCMessage, ...rest: A): void => {
      const m = message as Partial<Listen> & { params?: { requestId?: unknown } };
      if (m.method === LISTEN && m.id !== undefined) return this.listen(m as Listen, (narrowed) => next(this.opened(narrowed), ...rest));
      if (m.method === CANCELLED && m.id === undefined) this.cancelled(m.params?.requestId);
      next(message, ...rest);
    };

  /** The outbound wrapper: an answer with a listen's id ends that listen. */
  readonly send =
    (next: Send): Send =>
    (message, options) => {
      const m = message as { id?: Id; method?: string };
      if (m.method === undefined && m.id !== undefined && this.open.size > 0) this.end(m.id);
      return next(message, options);
    };

  /** URIs currently held for listens. */
  get size(): number {
    return this.counts.size;
  }

  private listen(message: Listen, forward: (message: JSONRPCMessage) => void): void {
    const filter = message.params?.notifications;
    const requested = filter?.resourceSubscriptions;
    if (!Array.isArray(requested) || requested.length === 0 || !requested.every((u) => typeof u === 'string') || this.pending.has(message.id)) {
      return forward(message as unknown as JSONRPCMessage); // nothing to narrow: the entry answers it as it is
    }
    const pending: Pending = { cancelled: false };
    this.pending.set(message.id, pending);
    this.chain = this.chain.then(async () => {
      const accepted = await acceptEach(requested, (uri) => this.holds.accept(uri));
      this.pending.delete(message.id);
      for (const uri of accepted) this.counts.set(uri, (this.counts.get(uri) ?? 0) + 1);
      if (pending.cancelled) return this.releaseAll(accepted);
      this.active.set(message.id, accepted);
      forward({
        ...message,
        params: { ...message.params, notifications: { ...filter, resourceSubscriptions: accepted } },
      } as unknown as JSONRPCMessage);
    });
  }

  /** `message`, a listen about to be forwarded, counted open (once per id). */
  private opened(message: JSONRPCMessage): JSONRPCMessage {
    const id = (message as { id: Id }).id;
    if (!this.open.has(id)) {
      this.open.add(id);
      this.counter?.opened();
    }
    return message;
  }

  private cancelled(id: unknown): void {
    if (typeof id !== 'string' && typeof id !== 'number') return;
    const pending = this.pending.get(id);
    if (pending) pending.cancelled = true;
    else this.end(id);
  }

  /** The listen `id` ended (answered or cancelled): its URIs released, and it is no longer counted. */
  private end(id: Id): void {
    if (!this.open.delete(id)) return;
    this.counter?.ended();
    const uris = this.active.get(id);
    this.active.delete(id);
    if (uris) this.releaseAll(uris);
  }

  private releaseAll(uris: string[]): void {
    for (const uri of uris) {
      const n = (this.counts.get(uri) ?? 1) - 1;
      if (n > 0) {
        this.counts.set(uri, n);
        continue;
      }
      this.counts.delete(uri);
      this.chain = this.chain.then(() => this.holds.release(uri));
    }
  }
}
