// Subscription relay: ref-counted upstream subscriptions shared by all sessions; updates to exactly the subscribed ones.
import { createHash } from 'node:crypto';
import { ErrorCodes, ProxyError } from '../errors.js';
import type { Logger } from '../logger.js';
import { Methods, ReadResult } from '../protocol.js';
import type { Session } from './sessions.js';
import type { Upstream } from '../upstream/upstream.js';
import type { UpstreamPool } from '../upstream/pool.js';
import { encodeUri, type UriCodec } from './uri.js';
import type { Metrics } from '../observe/metrics.js';

/** Options of {@link SubscriptionRelay}. */
export interface RelayOptions {
  pool: UpstreamPool;
  /** The URIs clients see: `updated` notifications carry the URI encoded with it. */
  uris: UriCodec;
  logger: Logger;
  /** Re-read interval for upstreams without `resources/subscribe`. */
  pollIntervalMs: number;
  /** Per (session, URI) coalescing window; 0 sends every update. */
  coalesceMs: number;
  /** Most (server, URI) pairs one session may hold. Default: unbounded. */
  maxPerSession?: number;
  /** Most distinct (server, URI) pairs one principal may hold across its sessions. Default: unbounded. */
  maxPerPrincipal?: number;
  /**
   * Charges the principals holding a polled URI for one re-read of it (each pays from its read
   * bucket); false when none could pay, and the poll is skipped until one can. Default: polls are free.
   */
  chargePoll?: (holders: readonly PollPayer[]) => boolean | Promise<boolean>;
  /**
   * Called when a poller detects a change, in place of an upstream notification. The composition
   * root treats both alike (invalidate the cache, then {@link SubscriptionRelay.updated}).
   * Default: relay the update directly.
   */
  onPolledChange?: (server: string, uri: string) => void;
  /** Told about updates coalesced into a later one. Default: none. */
  metrics?: Metrics;
}

/** A principal a poll is made for. */
export interface PollPayer {
  principal: string;
  roles: readonly string[];
}

/** What a refused subscription tells the client to wait: another subscription of its principal must end first. */
const SUBSCRIPTION_RETRY_AFTER_MS = 1000;

/** One (server, upstream URI) that at least one holder wants to hear about. */
interface Entry {
  server: string;
  uri: string;
  holders: Set<Session>;
  /** What the upstream currently has: a subscription, a poller, or nothing. */
  upstream: 'none' | 'subscribed' | 'polling';
  poll?: { timer: NodeJS.Timeout; hash: string | undefined; busy: boolean };
  /** Serialises reconciliations of this entry. */
  chain: Promise<void>;
}

interface Burst {
  timer: NodeJS.Timeout;
  pending: boolean;
}

/**
 * Keeps exactly one upstream subscription (or poller) per (server, URI) while any session holds it,
 * re-establishes them after a reconnect, and delivers `updated` to exactly the sessions subscribed
 * to that URI or a parent of it, once each, coalesced per (session, URI) with leading and trailing
 * edges so the last update of a burst is never lost.
 */
export class SubscriptionRelay {
  private readonly entries = new Map<string, Entry>();
  private readonly bySession = new Map<Session, Set<string>>();
  private readonly bursts = new Map<Session, Map<string, Burst>>();
  /** Per principal, the keys its sessions hold and how many of its sessions hold each. */
  private readonly byPrincipal = new Map<string, Map<string, number>>();
  private closed = false;

  constructor(private readonly options: RelayOptions) {}

  /** Adds `session` as a holder of (server, uri); the first holder subscribes upstream. Idempotent. */
  async subscribe(session: Session, server: string, uri: string): Promise<void> {
    const key = encodeUri(server, uri);
    let entry = this.entries.get(key);
    if (entry?.holders.has(session)) return entry.chain;
    const limit = this.options.maxPerSession ?? Infinity;
    if ((this.bySession.get(session)?.size ?? 0) >= limit) {
      throw new ProxyError(ErrorCodes.LIMIT_EXCEEDED, 'Too many subscriptions', { details: { limit } });
    }
    const principal = session.principal;
    if (principal !== undefined) {
      const held = this.byPrincipal.get(principal);
      const max = this.options.maxPerPrincipal ?? Infinity;
      if (!held?.has(key) && (held?.size ?? 0) >= max) {
        throw new ProxyError(ErrorCodes.LIMIT_EXCEEDED, 'Too many subscriptions', { details: { limit: max, retryAfterMs: SUBSCRIPTION_RETRY_AFTER_MS } });
      }
      let keysOf = held;
      if (!keysOf) this.byPrincipal.set(principal, (keysOf = new Map<string, number>()));
      keysOf.set(key, (keysOf.get(key) ?? 0) + 1);
    }
    if (!entry) {
      entry = { server, uri, holders: new Set(), upstream: 'none', chain: Promise.resolve() };
      this.entries.set(key, entry);
    }
    entry.holders.add(session);
    let keys = this.bySession.get(session);
    if (!keys) this.bySession.set(session, (keys = new Set()));
    keys.add(key);
    try {
      await this.reconcile(entry);
    } catch (err) {
      await this.drop(session, key).catch(() => undefined);
      throw err;
    }
  }

  /** Removes `session` as a holder; the last holder unsubscribes upstream. Unknown pairs are a no-op. */
  async unsubscribe(session: Session, server: string, uri: string): Promise<void> {
    const key = encodeUri(server, uri);
    if (!this.entries.get(key)?.holders.has(session)) return;
    await this.drop(session, key);
  }

  /** True when `session` holds (server, uri). */
  holds(session: Session, server: string, uri: string): boolean {
    return this.entries.get(encodeUri(server, uri))?.holders.has(session) ?? false;
  }

  /** Releases everything a closed session held (upstream unsubscribes run in the background). */
  releaseSession(session: Session): void {
    for (const key of [...(this.bySession.get(session) ?? [])]) void this.drop(session, key).catch(() => undefined);
    this.bySession.delete(session);
    for (const burst of this.bursts.get(session)?.values() ?? []) clearTimeout(burst.timer);
    this.bursts.delete(session);
  }

  /** An upstream reported (or a poller detected) a change: tell exactly the sessions that hold it or a parent. */
  updated(server: string, uri: string): void {
    const targets = new Set<Session>();
    for (const entry of this.entries.values()) {
      if (entry.server !== server || !isSameOrParent(entry.uri, uri)) continue;
      for (const s of entry.holders) targets.add(s);
    }
    const federated = this.options.uris.encode(server, uri);
    for (const s of targets) this.deliver(s, federated);
  }

  /** After `server` reconnected: every subscription still held is established again. */
  resubscribe(server: string): void {
    for (const entry of this.entries.values()) {
      if (entry.server !== server) continue;
      if (entry.poll) clearInterval(entry.poll.timer);
      delete entry.poll;
      entry.upstream = 'none';
      this.reconcile(entry).catch((err: unknown) =>
        this.options.logger.warn({ server, code: (err as ProxyError).code }, 're-subscribe after reconnect failed'),
      );
    }
  }

  /**
   * Forgets every subscription to `server` (a reload removed it): pollers stop, holders are
   * released, nothing is sent upstream (the upstream is being closed). The sessions are told by a
   * list_changed from the caller.
   */
  forgetServer(server: string): void {
    for (const [key, entry] of [...this.entries]) {
      if (entry.server !== server) continue;
      if (entry.poll) clearInterval(entry.poll.timer);
      delete entry.poll;
      entry.upstream = 'none';
      for (const session of entry.holders) this.bySession.get(session)?.delete(key);
      entry.holders.clear();
      this.entries.delete(key);
    }
  }

  /** Number of (server, URI) pairs with at least one holder. */
  get size(): number {
    return this.entries.size;
  }

  /** Best-effort upstream unsubscribes, then stops every poller and timer. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const all = [...this.entries.values()];
    for (const e of all) e.holders.clear();
    await Promise.allSettled(all.map((e) => this.reconcile(e)));
    for (const m of this.bursts.values()) for (const b of m.values()) clearTimeout(b.timer);
    this.bursts.clear();
    this.entries.clear();
    this.bySession.clear();
    this.byPrincipal.clear();
  }

  private async drop(session: Session, key: string): Promise<void> {
    const entry = this.entries.get(key);
    if (this.bySession.get(session)?.delete(key)) this.forPrincipal(session, key);
    if (!entry) return;
    entry.holders.delete(session);
    await this.reconcile(entry);
  }

  /** `session` no longer holds `key`: one less of its principal's. */
  private forPrincipal(session: Session, key: string): void {
    if (session.principal === undefined) return;
    const held = this.byPrincipal.get(session.principal);
    const n = (held?.get(key) ?? 1) - 1;
    if (n > 0) return void held!.set(key, n);
    held?.delete(key);
    if (held?.size === 0) this.byPrincipal.delete(session.principal);
  }

  /** Distinct URIs each principal holds now (for metrics). */
  *principalUse(): Generator<{ limit: string; principal: string; used: number }> {
    for (const [principal, held] of this.byPrincipal) yield { limit: 'subscriptions', principal, used: held.size };
  }

  /** Distinct URIs `principal` holds now. */
  heldBy(principal: string): number {
    return this.byPrincipal.get(principal)?.size ?? 0;
  }

  /** Brings the upstream side of `entry` in line with whether anyone holds it; serialised per entry. */
  private reconcile(entry: Entry): Promise<void> {
    const run = entry.chain.then(() => this.apply(entry));
    entry.chain = run.catch(() => undefined);
    return run;
  }

  private async apply(entry: Entry): Promise<void> {
    const wanted = entry.holders.size > 0 && !this.closed ? 1 : 0;
    const upstream = this.options.pool.get(entry.server);
    if (wanted && entry.upstream === 'none') {
      if (!upstream || upstream.status !== 'ready') throw new ProxyError(ErrorCodes.UPSTREAM_UNAVAILABLE, 'upstream unavailable');
      if (upstream.canSubscribe) {
        await upstream.subscribe(entry.uri);
        entry.upstream = 'subscribed';
      } else {
        entry.poll = { timer: setInterval(() => void this.poll(upstream, entry), this.options.pollIntervalMs), hash: undefined, busy: false };
        entry.poll.timer.unref();
        entry.upstream = 'polling';
        await this.poll(upstream, entry); // the baseline the next polls compare against
      }
    } else if (!wanted && entry.upstream !== 'none') {
      if (entry.poll) clearInterval(entry.poll.timer);
      delete entry.poll;
      const was = entry.upstream;
      entry.upstream = 'none';
      if (was === 'subscribed' && upstream?.status === 'ready') {
        await upstream
          .unsubscribe(entry.uri)
          .catch((err: unknown) => this.options.logger.debug({ server: entry.server, code: (err as ProxyError).code }, 'upstream unsubscribe failed'));
      }
    }
    if (entry.holders.size === 0 && entry.upstream === 'none') {
      const key = encodeUri(entry.server, entry.uri);
      if (this.entries.get(key) === entry) this.entries.delete(key);
    }
  }

  /** Emulated subscription: re-read, compare a content hash, report only a change. */
  private async poll(upstream: Upstream, entry: Entry): Promise<void> {
    const poll = entry.poll;
    if (!poll || poll.busy || upstream.status !== 'ready') return;
    const payers = payersOf(entry.holders);
    poll.busy = true;
    if (payers.length > 0 && this.options.chargePoll && !(await this.options.chargePoll(payers))) {
      poll.busy = false;
      this.options.logger.debug({ server: entry.server, principals: payers.length }, 'poll paused: read limit reached');
      return;
    }
    let hash: string;
    try {
      const result = await upstream.request(Methods.read, { uri: entry.uri }, ReadResult, undefined, payers[0]?.principal);
      hash = createHash('sha256').update(JSON.stringify(result.contents)).digest('base64');
    } catch (err) {
      hash = `error:${(err as { code?: string }).code ?? 'unknown'}`;
    } finally {
      poll.busy = false;
    }
    if (entry.poll !== poll) return; // stopped meanwhile
    const before = poll.hash;
    poll.hash = hash;
    if (before !== undefined && before !== hash) {
      if (this.options.onPolledChange) this.options.onPolledChange(entry.server, entry.uri);
      else this.updated(entry.server, entry.uri);
    }
  }

  /** Leading edge at once; further updates in the window collapse into one trailing send. */
  private deliver(session: Session, uri: string): void {
    if (this.options.coalesceMs === 0) return session.sendUpdated(uri);
    let perSession = this.bursts.get(session);
    if (!perSession) this.bursts.set(session, (perSession = new Map<string, Burst>()));
    const burst = perSession.get(uri);
    if (burst) {
      if (burst.pending) this.options.metrics?.notification('updated', 'coalesced'); // one pending already stands for it
      burst.pending = true;
      return;
    }
    session.sendUpdated(uri);
    const arm = (): Burst => {
      const b: Burst = {
        pending: false,
        timer: setTimeout(() => {
          if (b.pending) {
            session.sendUpdated(uri);
            perSession.set(uri, arm());
          } else perSession.delete(uri);
        }, this.options.coalesceMs),
      };
      b.timer.unref();
      return b;
    };
    perSession.set(uri, arm());
  }
}

/** The principals holding an entry, each once (the proxy's own holders have none and pay nothing). */
function payersOf(holders: Iterable<Session>): PollPayer[] {
  const seen = new Map<string, PollPayer>();
  for (const s of holders) {
    if (s.principal !== undefined && !seen.has(s.principal)) seen.set(s.principal, { principal: s.principal, roles: s.roles ?? [] });
  }
  return [...seen.values()];
}

/** True when `parent` is `uri` itself or a URI the spec would call its parent (`a/` of `a/b`). */
export function isSameOrParent(parent: string, uri: string): boolean {
  if (parent === uri) return true;
  if (!uri.startsWith(parent)) return false;
  if (parent.endsWith('/')) return true;
  const next = uri.charAt(parent.length);
  return next === '/' || next === '?' || next === '#';
}
