// Cache coherence: an upstream subscription held for each cached entry of an upstream that notifies, bounded in number.
import type { Upstream } from '../upstream/upstream.js';
import type { Session } from './sessions.js';
import type { SubscriptionRelay } from './subscriptions.js';

/** The holds the read path takes and the cache gives back (see {@link createCoherence}). */
export interface Coherence {
  /** Subscribes for `uri`; true when this call took a hold that must be released. */
  hold(upstream: Upstream, uri: string): Promise<boolean>;
  /** Gives back the hold for `uri` of `server`, if there is one (an entry left the cache, or was never stored). */
  release(this: void, server: string, uri: string): void;
}

/**
 * Cache coherence: before a read whose result the operator's TTL would store, from an upstream that
 * supports `resources/subscribe`, the proxy subscribes to that URI upstream (up to `max` URIs), so
 * no change can fall between the read and the subscription: such entries are dropped the moment the
 * upstream reports a change. A hold lives exactly as long as its entry: it is released when the read
 * fails, is not stored (too large, invalidated meanwhile, hinted private) or its entry leaves the
 * cache for any reason. `max` counts live holds; at the bound, expired entries are purged first.
 *
 * @example
 * const coherence = createCoherence(config.cache.coherentUris, relay, () => cache?.purgeExpired());
 * const cache = new ReadCache({ ...config.cache, onRemove: coherence.release });
 */
export function createCoherence(max: number, relay: SubscriptionRelay, purgeExpired: () => void): Coherence {
  const holder: Session = { id: 'cache', sendUpdated: () => undefined, sendListChanged: () => undefined };
  let held = 0;
  return {
    async hold(upstream: Upstream, uri: string): Promise<boolean> {
      if (max === 0 || !upstream.canSubscribe || relay.holds(holder, upstream.id, uri)) return false;
      if (held >= max) purgeExpired();
      if (held >= max) return false; // beyond the bound, entries are TTL-bound only
      held++;
      try {
        await relay.subscribe(holder, upstream.id, uri);
        return true;
      } catch {
        held--; // a refused subscribe leaves the entry TTL-bound
        return false;
      }
    },
    release(server: string, uri: string): void {
      if (!relay.holds(holder, server, uri)) return;
      held--;
      void relay.unsubscribe(holder, server, uri).catch(() => undefined);
    },
  };
}
