// Federated resources, shared by all sessions: list/templates/read/subscribe/complete = route the edge's target -> encode.
import { sizeOf, type ReadCache } from './cache.js';
import type { ListKind } from './cursor.js';
import { ErrorCodes, JsonRpc, ProxyError } from '../errors.js';
import { Lister, type ListAudience } from './listing.js';
import { CompleteResult, Methods, ReadResult, withoutHopFields, type CompleteResultT, type ReadResultT } from '../protocol.js';
import type { Session } from './sessions.js';
import type { SubscriptionRelay } from './subscriptions.js';
import type { Coherence } from './coherence.js';
import type { Upstream } from '../upstream/upstream.js';
import type { UpstreamPool } from '../upstream/pool.js';
import type { NamespacedUri, UriCodec } from './uri.js';
import type { SignalSource } from '../cancel.js';
import { shareJson } from '../wire/shared-json.js';
import { agedHint, hintOf, withHint, type CacheHint } from './cache-hint.js';
import { isInputRequired, isPersonal, plainRelay, type CallRelay, type InputRequiredResult } from './relay.js';

/** A downstream list result (resources or templates), ready to send. */
export type ListResult = Record<string, unknown> & { nextCursor?: string };

/** Parameters of `completion/complete` as the facade received them. */
export interface CompleteParams {
  ref: { type: string; uri?: string; name?: string };
  argument: { name: string; value: string };
  context?: { arguments?: Record<string, string> };
}

/**
 * What one operation did, for the audit record: filled in by the operation as it goes (a failed
 * operation leaves what it had learned).
 */
export interface OperationTrace {
  server?: string;
  upstreamUri?: string;
  /** `hit`: served from the read cache; `miss`: read upstream through it; `bypass`: the cache was not used. */
  cache?: 'hit' | 'miss' | 'bypass';
  /** True when a `miss` joined another caller's read in flight (single-flight) instead of starting one. */
  coalesced?: boolean;
  /** Size of the contents returned (text characters and base64 blob characters). */
  bytes?: number;
  /** List items returned, and items the audience's filter left out. */
  returned?: number;
  filtered?: number;
  /** Tools and prompts: the name the client sent. */
  name?: string;
  /** Tools and prompts: hex SHA-256 of the canonical JSON (RFC 8785) of the arguments (made when an audit record or a long key needs it). */
  argumentsSha256?: string | undefined;
  /** Tools and prompts: the canonical JSON of the arguments, which keys the call's fair share upstream when it has no hash. */
  argumentsKey?: string;
  /** Whether `bytes` is wanted (an audit record holds it). Default: true. */
  weigh?: boolean;
  /** Tools and prompts, with `audit.arguments`: the canonical JSON of the arguments. */
  arguments?: string;
  /** The tool answered with `isError: true`. */
  toolError?: boolean;
}

/** The shared parts the resource operations use. */
export interface ResourcesDeps {
  pool: UpstreamPool;
  /** The URIs clients see: every one a client gets is encoded with it (the edge decodes what they send). */
  uris: UriCodec;
  lister: Lister;
  relay: SubscriptionRelay;
  /** Absent when caching is off. */
  cache?: ReadCache | undefined;
  /** Coherence subscriptions for reads the cache will store (see `createCoherence`). */
  coherence?: Coherence;
}

/** Upstream JSON-RPC codes that mean "no such resource". */
const NOT_FOUND_CODES = new Set<number>([JsonRpc.RESOURCE_NOT_FOUND, JsonRpc.INVALID_PARAMS]);

/**
 * The federation's resource operations. Holds no per-session state: every downstream session
 * calls the same instance, passing itself where the operation is per session (subscriptions).
 */
export class FederatedResources {
  /** The downstream body of each cached result still alive (see {@link downstream}). */
  private readonly bodies = new WeakMap<ReadResultT, ReadResultT>();

  constructor(private readonly deps: ResourcesDeps) {}

  /** `resources/list` or `resources/templates/list`: one merged downstream page. */
  async list(kind: ListKind, cursor: string | undefined, signal?: AbortSignal, audience?: ListAudience, trace?: OperationTrace): Promise<ListResult> {
    const page = await this.deps.lister.page(kind, cursor, signal, audience);
    if (trace) {
      trace.returned = page.items.length;
      trace.filtered = page.filtered;
    }
    const field = kind === 'resources' ? 'resources' : 'resourceTemplates';
    const result: ListResult = { [field]: page.items, ...Lister.meta(page.incomplete) };
    if (page.nextCursor !== undefined) result.nextCursor = page.nextCursor;
    return withHint(result, page.hint);
  }

  /**
   * `resources/read` of `target` (resolved once at the edge: its `uri` is sent upstream as it is):
   * route to the owner (through the cache when the upstream allows it) and rewrite every
   * `contents[].uri` into its namespace. A cached read is shared by concurrent callers, so one
   * caller's cancel only ends its own wait. `relay` carries the call (default: straight upstream);
   * an upstream that asks for input makes the answer an `input_required` result for the caller,
   * which is never cached nor shared, and a retry that resumes one bypasses the cache.
   */
  async read(
    target: NamespacedUri,
    signal?: SignalSource,
    trace?: OperationTrace,
    principal?: string,
    relay: CallRelay = plainRelay,
  ): Promise<ReadResultT | InputRequiredResult> {
    const upstream = await this.route(target, trace);
    const cache = this.deps.cache;
    let result: ReadResultT | InputRequiredResult;
    let hint: CacheHint;
    /** The result is the cache's entry (stored, so shared and immutable). */
    let cached = false;
    const call = (s: SignalSource | undefined) =>
      relay.send(upstream, { method: Methods.read, params: { uri: target.uri }, schema: ReadResult, subject: target.uri, signal: s, principal });
    try {
      if (cache && upstream.config.cache && !relay.resuming) {
        const { server, uri: upstreamUri } = target;
        let mine = false;
        const load = () => {
          mine = true;
          return call(undefined) as Promise<ReadResultT>;
        };
        const c = this.deps.coherence;
        const hold = c && (() => c.hold(upstream, upstreamUri));
        const release = c && (() => c.release(server, upstreamUri));
        const outcome = await cache.read({ server, uri: upstreamUri, ttlMs: upstream.config.cacheTtlMs, load, hold, release }, signal);
        result = outcome.result;
        hint = agedHint(hintOf(result), outcome.ageMs, outcome.remainingMs);
        cached = outcome.remainingMs !== undefined;
        if (trace) {
          trace.cache = outcome.hit ? 'hit' : 'miss';
          if (outcome.shared) trace.coalesced = true;
        }
        // Another caller's read asked for that caller's input: this caller makes its own call.
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- `mine` is set inside the load closure, which the checker does not follow
        if (isPersonal(result) && !mine) {
          cached = false;
          result = await call(signal);
          if (trace) trace.cache = 'bypass';
        }
      } else {
        if (trace) trace.cache = 'bypass';
        result = await call(signal);
        hint = hintOf(result);
      }
    } catch (err) {
      throw asNotFound(err, signal);
    }
    if (isInputRequired(result)) return result;
    if (trace) trace.bytes = sizeOf(result);
    // The upstream's hint, aged and capped by the entry it was served from, travels beside the result
    // (on a copy of the top level: the body may be shared).
    return withHint({ ...this.downstream(result, target.server, cached) }, hint);
  }

  /**
   * The body a client gets for `result`: hop fields dropped and every `contents[].uri` encoded into
   * `server`'s namespace, on a copy (never in place: the object may be cached, or the upstream's own
   * with in-memory transports). For a cached result (`shared`) the body is made once per entry and
   * frozen, so every hit shares it and nothing downstream can change it.
   */
  private downstream(result: ReadResultT, server: string, shared: boolean): ReadResultT {
    if (shared) {
      const made = this.bodies.get(result);
      if (made) return made;
    }
    const contents = result.contents.map((c) => ({ ...c, uri: this.deps.uris.encode(server, c.uri) }));
    const stripped = withoutHopFields(result);
    // A copy withoutHopFields made is ours to finish; the upstream's own object is never changed.
    const body = stripped === result ? { ...result, contents } : Object.assign(stripped, { contents });
    if (shared) {
      for (const c of body.contents) Object.freeze(c);
      shareJson(body.contents); // written once, spliced into every answer (wire/shared-json.ts)
      Object.freeze(body.contents);
      this.bodies.set(result, Object.freeze(body));
    }
    return body;
  }

  /** `resources/subscribe` of `target` (resolved at the edge) for one session (idempotent). */
  async subscribe(session: Session, target: NamespacedUri, trace?: OperationTrace): Promise<void> {
    await this.route(target, trace);
    try {
      await this.deps.relay.subscribe(session, target.server, target.uri);
    } catch (err) {
      throw asNotFound(err);
    }
  }

  /** `resources/unsubscribe` of `target` for one session (pairs it does not hold are a no-op, as the spec allows). */
  async unsubscribe(session: Session, target: NamespacedUri): Promise<void> {
    await this.deps.relay.unsubscribe(session, target.server, target.uri);
  }

  /**
   * `completion/complete` for a `ref/resource`, routed to the owner of `target` (its template as
   * the edge resolved it; undefined: not found).
   */
  async complete(
    params: CompleteParams,
    target: NamespacedUri | undefined,
    signal?: AbortSignal,
    trace?: OperationTrace,
    principal?: string,
  ): Promise<CompleteResultT> {
    if (params.ref.type !== 'ref/resource' || typeof params.ref.uri !== 'string') {
      throw new ProxyError(ErrorCodes.INVALID_PARAMS, `Unknown reference: ${params.ref.name ?? params.ref.type}`);
    }
    if (!target) throw new ProxyError(ErrorCodes.RESOURCE_NOT_FOUND, 'Resource not found');
    const upstream = await this.route(target, trace);
    if (!upstream.supports('completions')) return { completion: { values: [], hasMore: false } };
    const upstreamParams: Record<string, unknown> = { ...params, ref: { ...params.ref, uri: target.uri } };
    try {
      return withoutHopFields(await upstream.request(Methods.complete, upstreamParams, CompleteResult, signal, principal));
    } catch (err) {
      throw asNotFound(err);
    }
  }

  /**
   * The ready upstream that owns `target`; anything else is "not found". A request that arrives
   * while its upstream is still making its first connection waits for that attempt.
   */
  async route(target: NamespacedUri, trace?: OperationTrace): Promise<Upstream> {
    if (trace) {
      trace.server = target.server;
      trace.upstreamUri = target.uri;
    }
    const upstream = this.deps.pool.get(target.server);
    if (upstream && upstream.generation === 0 && upstream.status !== 'unavailable') await upstream.settled();
    if (!upstream || upstream.status !== 'ready') {
      throw new ProxyError(ErrorCodes.RESOURCE_NOT_FOUND, 'Resource not found');
    }
    return upstream;
  }
}

/** An upstream's own "not found" (-32002, or -32602 used by older servers) is our not-found. */
function asNotFound(err: unknown, signal?: SignalSource): unknown {
  if (signal?.aborted && !(err instanceof ProxyError)) return new ProxyError(ErrorCodes.CANCELLED, 'request cancelled');
  if (err instanceof ProxyError && err.code === ErrorCodes.UPSTREAM_ERROR && NOT_FOUND_CODES.has(err.details?.rpcCode as number)) {
    return new ProxyError(ErrorCodes.RESOURCE_NOT_FOUND, 'Resource not found', { cause: err, details: err.details });
  }
  return err;
}
