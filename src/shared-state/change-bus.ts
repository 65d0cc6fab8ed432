// Change events between replicas: one pub/sub channel, one small JSON message per change, this replica's own echoes ignored.
import type { SharedLink } from './link.js';

/** Which of an upstream's lists changed (resource templates change with `resources`: the protocol has no notice of their own). */
export type ChangedList = 'resources' | 'tools' | 'prompts';

/**
 * A change one replica learned: a resource's content (`updated`) or one of an upstream's lists
 * (`list`). On the wire a `list` message without `list` is a resource list change (what replicas
 * before tool and prompt changes were shared publish).
 */
export type ChangeEvent =
  { readonly kind: 'updated'; readonly server: string; readonly uri: string } | { readonly kind: 'list'; readonly server: string; readonly list: ChangedList };

const LISTS: readonly unknown[] = ['resources', 'tools', 'prompts'] satisfies ChangedList[];

/** Longest message accepted from the channel; a change names one server id and one URI. */
const MAX_MESSAGE_CHARS = 16_384;

/**
 * Publishes this replica's changes on `<prefix>changes` and hands every other replica's to
 * `listener`. Each message carries the publishing process's `origin` (random per process, so two
 * replicas with one `chain` id still hear each other), and its own come back to it ignored. A
 * message that is not exactly one of ours (wrong shape, too long) is dropped: it cannot reach a
 * session.
 */
export class ChangeBus {
  private readonly channel: string;

  constructor(
    private readonly link: SharedLink,
    private readonly origin: string,
  ) {
    this.channel = `${link.prefix}changes`;
  }

  /** Tells the other replicas; lost while Redis is down (they invalidate on their own upstreams' notices). */
  publish(change: ChangeEvent): void {
    this.link.publish(this.channel, JSON.stringify({ o: this.origin, ...change }));
  }

  /** Starts listening; `listener` gets every other replica's change, validated. */
  listen(listener: (change: ChangeEvent) => void): Promise<void> {
    return this.link.subscribe(this.channel, (message) => {
      const change = this.parse(message);
      if (!change) return;
      this.link.counters.received++;
      listener(change);
    });
  }

  private parse(message: string): ChangeEvent | undefined {
    if (message.length > MAX_MESSAGE_CHARS) return undefined;
    let m: unknown;
    try {
      m = JSON.parse(message);
    } catch {
      return undefined;
    }
    if (typeof m !== 'object' || m === null) return undefined;
    const { o, kind, server, uri, list = 'resources' } = m as Record<string, unknown>;
    if (o === this.origin || typeof o !== 'string' || typeof server !== 'string') return undefined;
    if (kind === 'updated' && typeof uri === 'string') return { kind, server, uri };
    if (kind === 'list' && LISTS.includes(list)) return { kind, server, list: list as ChangedList };
    return undefined;
  }
}
