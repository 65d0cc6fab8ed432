// The one decision point: every resource operation and notification is decided by policy, rate limited and audited here.
import type { SignalSource } from '../cancel.js';
import { sha256Hex } from '../audit/record.js';
import { ErrorCodes, JsonRpcError, ProxyError, rateLimited, unknownItem } from '../errors.js';
import { canonicalize } from '../audit/jcs.js';
import type { FederatedTools } from '../federation/tools.js';
import type { FederatedPrompts } from '../federation/prompts.js';
import type { FoundItem, ItemCatalog, ItemKind } from '../federation/item-catalog.js';
import type { CallContext } from '../federation/calls-in-flight.js';
import type { NameCodec } from '../uri/names.js';
import { META_UPSTREAM_NAME, type CallToolResultT, type GetPromptResultT } from '../protocol.js';
import type { Logger } from '../logger.js';
import type { ListKind } from '../federation/cursor.js';
import { attachedHint, withHint } from '../federation/cache-hint.js';
import type { CompleteParams, FederatedResources, ListResult, OperationTrace } from '../federation/resources.js';
import type { Session } from '../federation/sessions.js';
import type { IssuedUris } from '../federation/issued-uris.js';
import { NAMESPACE_DELIMITER, type NamespacedUri, type UriCodec } from '../federation/uri.js';
import type { CompleteResultT, ReadResultT } from '../protocol.js';
import type { CallRelay, InputRequiredResult } from '../federation/relay.js';
import { noopAuditLog, type AuditEntry, type AuditLog, type AuditOutcome } from '../audit/log.js';
import type { Caller } from '../caller.js';
import { normalizeUri } from '../uri/normalize-uri.js';
import { POLICY_OUTCOMES, type Policy, type PolicyAction, type PolicyDecision, type PolicyItem, type PolicySubject, type UriForm } from './policy.js';
import type { Limiter, TakeResult } from './rate-limiter.js';
import { expandKnown } from './template-expand.js';
import { noopMetrics, requestOutcome, type Metrics, type RequestRecord } from '../observe/metrics.js';
import type { AccessLog } from '../observe/access-log.js';

/** What the gate enforces; swapped as a whole on reload. */
export interface AccessRules {
  policy: Policy;
  /** Read limits (`limits.reads`); polled subscriptions and listens draw on them too. */
  limiter: Limiter;
  /** Completion limits (`limits.completions`). Default: unlimited. */
  completions?: Limiter;
  /** Tool call and prompt get limits (`limits.calls`). Default: unlimited. */
  calls?: Limiter;
}

/** What the gate needs to govern tools and prompts. */
export interface ItemParts {
  tools: FederatedTools;
  prompts: FederatedPrompts;
  catalog: ItemCatalog;
  /** Client names (routing of a listed name back to its server). */
  names: NameCodec;
  /** Whether records keep the raw arguments (`audit.arguments`). Default: false. */
  recordArguments?: boolean;
}

/** A principal's own bound that a request hit (sessions, listens, in-flight, queued bytes, subscriptions). */
export type PrincipalLimitName = 'sessions' | 'listens' | 'in-flight' | 'queued-bytes' | 'subscriptions';

/** Options of {@link AccessGate}. */
export interface AccessGateOptions {
  resources: FederatedResources;
  /** The namespace codec (the one the federation routes by). */
  uris: UriCodec;
  /** URIs upstreams gave out themselves: forwarded exactly as given. Default: none recorded. */
  issued?: IssuedUris;
  rules: AccessRules;
  audit: AuditLog;
  logger: Logger;
  /** Monotonic ms clock for `durationMs`. Default: performance.now. */
  now?: () => number;
  /** Tools and prompts. Default: none (their requests are unknown). */
  items?: ItemParts;
  /** Told about every decided request (and audit write). Default: {@link noopMetrics}. */
  metrics?: Metrics;
  /** One line per request (never its contents). Default: none. */
  accessLog?: AccessLog | undefined;
}

const NOT_FOUND = () => new ProxyError(ErrorCodes.RESOURCE_NOT_FOUND, 'Resource not found');
/** A request that is not about one resource: every list, and what the rate limiter refuses. */
const PER_ITEM: PolicyDecision = { allow: true, rule: 'per-item' };
const RATE_LIMITED: PolicyDecision = { allow: false, rule: 'rate-limit' };
const COMPLETION_LIMITED: PolicyDecision = { allow: false, rule: 'completion-rate-limit' };
const CALL_LIMITED: PolicyDecision = { allow: false, rule: 'call-rate-limit' };
/** Canonical arguments up to this many characters key a call's fair share as they are (longer ones by their hash). */
const MAX_PLAIN_KEY = 256;
const UNKNOWN: PolicyDecision = { allow: false, rule: 'default' };
/** A caller whose credential is gone: nothing is allowed. */
const REVOKED: PolicyDecision = { allow: false, rule: POLICY_OUTCOMES.revoked };

/** What is done to an operation's result when the rules changed while it was in flight. */
interface Redecide<T> {
  /** Filters the result again under the current rules (lists, completions). */
  again?: (result: T) => T;
  /** Undoes the operation when it is now denied (a subscription taken). */
  undo?: () => Promise<void>;
  /** The error a deny (or an unknown target) is answered with. Default: resource not found. */
  missing?: () => unknown;
}
/** A spelling refused by `normalizeUri` that no upstream gave out: answered exactly as an unknown URI. */
const REFUSED: PolicyDecision = { allow: false, rule: POLICY_OUTCOMES.invalidUri };

/**
 * A client's URI as the edge resolved it, once: the server, the one string everything after the
 * edge uses (policy, cache key, audit `upstreamUri`, the upstream request), and how policy takes it.
 */
export interface ResolvedUri extends NamespacedUri {
  /** `issued`: the upstream gave out this very string (forwarded as it is); `canonical`: the canonical form of the client's. */
  form: UriForm;
}

/** Template expressions (`{…}`) stand in as one plain character when a template's spelling is checked. */
const EXPRESSION = /\{[^}]*\}/g;

/**
 * Every path a caller reaches resources by goes through here, so a decision is made in exactly one
 * place: list and template entries are filtered before pagination (`list`), reads, subscriptions,
 * listens and completions are decided before any upstream work (`read`, `subscribe`, `complete`),
 * and each update is decided again at delivery (`read`). A denied resource is answered exactly as a
 * missing one (same error, same data, no upstream round trip); the true reason goes only to the
 * audit log, which gets one record per decision, written before the answer leaves. Reads are rate
 * limited per principal before anything else, whatever their outcome.
 *
 * With a policy in force, every result is `private` towards 2026 clients: what one caller sees is
 * not what another may.
 *
 * The rules carry a generation: an answer decided under one generation that is ready under a later
 * one (a reload, or a change of who a caller is, happened while it was in flight) is decided again
 * with the current rules and the caller as it is now before it leaves; denied now, it is dropped as
 * not-found (and a subscription taken is undone).
 */
export class AccessGate {
  private rules: AccessRules;
  private readonly now: () => number;
  private generation = 0;
  private readonly metrics: Metrics;
  private readonly accessLog: AccessLog | undefined;
  /** True when a finished request is reported anywhere (metrics or the access log). */
  private readonly observed: boolean;

  constructor(private readonly options: AccessGateOptions) {
    this.rules = options.rules;
    this.now = options.now ?? (() => performance.now());
    this.metrics = options.metrics ?? noopMetrics;
    this.accessLog = options.accessLog;
    this.observed = this.metrics.enabled || this.accessLog !== undefined;
  }

  /** Replaces the policy and the rate limits (a reload); standing subscriptions are decided again at their next delivery. */
  reload(rules: AccessRules): void {
    const replaced = this.rules;
    this.rules = rules;
    this.generation++;
    // What the old limiters hold of shared state (leased tokens) goes back; a take in flight on them still gets its answer.
    for (const limiter of [replaced.limiter, replaced.completions, replaced.calls])
      if (limiter !== rules.limiter && limiter !== rules.completions && limiter !== rules.calls) void limiter?.close?.();
  }

  /**
   * Who some callers are has changed (a reload of `auth` re-resolved or revoked their credentials):
   * every answer in flight is decided again before it leaves, as after {@link reload}.
   */
  revise(): void {
    this.generation++;
  }

  /** Whether `caller` may know that upstream `server` exists (see `Policy.visibleServer`). */
  visibleServer(caller: PolicySubject, server: string): boolean {
    return this.rules.policy.visibleServer(caller, server);
  }

  /** Whether `caller` may see `item` (a tool or prompt of `server` as a list shows it) in its list. */
  mayListItem(caller: PolicySubject, kind: ItemKind, server: string, item: Record<string, unknown>): boolean {
    const { policy } = this.rules;
    return !policy.enforced || policy.decideItem(caller, 'list', server, policyItem(kind, item)).allow;
  }

  /** Whether a policy is in force (else everything is allowed, and only audited). */
  get enforced(): boolean {
    return this.rules.policy.enforced;
  }

  /** `resources/list` or `resources/templates/list`: entries the caller may not see never reach a page. */
  async list(caller: Caller, kind: ListKind, cursor: string | undefined, signal?: AbortSignal): Promise<ListResult> {
    const method = kind === 'resources' ? 'resources/list' : 'resources/templates/list';
    const trace: OperationTrace = {};
    const { policy } = this.rules;
    const key = kind === 'resources' ? 'uri' : 'uriTemplate';
    const unprefixed = this.options.uris.unprefixed;
    // Rules about this caller are picked once per server, not once per entry.
    const deciders = new Map<string, (uri: string) => PolicyDecision>();
    const deciderFor = (server: string) => {
      let d = deciders.get(server);
      if (!d) deciders.set(server, (d = policy.decider(caller, 'list', server, 'issued'))); // listed: the upstream's own spelling
      return d;
    };
    const filter = policy.enforced
      ? (server: string, item: Record<string, unknown>) => {
          const uri = server === unprefixed ? (item[key] as string) : (item[key] as string).slice(server.length + NAMESPACE_DELIMITER.length);
          const d = kind === 'resources' ? deciderFor(server)(uri) : policy.decideTemplate(caller, 'list', server, uri);
          return d.allow;
        }
      : undefined;
    const audience = { ...(filter ? { filter, visible: (server: string) => policy.visibleServer(caller, server) } : {}), binding: caller.principal };
    return this.audited(
      caller,
      method,
      undefined,
      trace,
      () => PER_ITEM,
      async () => this.scoped(await this.options.resources.list(kind, cursor, signal, audience, trace)),
      { again: (result) => this.refiltered(caller, kind, result) },
    );
  }

  /** A page filtered again under the current rules (they changed while it was being made). */
  private refiltered(caller: Caller, kind: ListKind, result: ListResult): ListResult {
    const { policy } = this.rules;
    if (!policy.enforced) return result;
    const field = kind === 'resources' ? 'resources' : 'resourceTemplates';
    const key = kind === 'resources' ? 'uri' : 'uriTemplate';
    const items = result[field];
    if (!Array.isArray(items)) return result;
    const kept = items.filter((item: Record<string, unknown>) => {
      const target = typeof item[key] === 'string' ? this.options.uris.decode(item[key]) : undefined;
      if (!target) return false;
      try {
        const d =
          kind === 'resources' ? policy.decide(caller, 'list', target.server, target.uri) : policy.decideTemplate(caller, 'list', target.server, target.uri);
        return d.allow;
      } catch {
        return false;
      }
    });
    return kept.length === items.length ? result : { ...result, [field]: kept };
  }

  /**
   * `resources/read`: rate limited, decided, then read (through the cache). `relay` carries the call
   * upstream (the bridge, when the caller may be asked for input): the answer may then be `input_required`.
   */
  read(caller: Caller, uri: string, signal?: SignalSource, relay?: CallRelay): Promise<ReadResultT | InputRequiredResult> {
    const limited = this.rules.limiter.take(caller);
    // A shared limiter answers after one round trip; the local one at once (no extra turn).
    if (limited instanceof Promise) return limited.then((l) => this.readTaken(l, caller, uri, signal, relay));
    return this.readTaken(limited, caller, uri, signal, relay);
  }

  private readTaken(limited: TakeResult, caller: Caller, uri: string, signal?: SignalSource, relay?: CallRelay): Promise<ReadResultT | InputRequiredResult> {
    const trace: OperationTrace = {};
    if (!limited.ok) {
      const error = rateLimited(limited.retryAfterMs);
      return this.recorded(caller, 'resources/read', uri, trace, RATE_LIMITED, 'rate_limited', this.now()).then(() => Promise.reject(error));
    }
    return this.decided(caller, 'resources/read', 'read', uri, trace, async (target) =>
      this.scoped(await this.options.resources.read(target, signal, trace, caller.principal, relay)),
    );
  }

  /** `resources/subscribe` (2025) for `session`. */
  subscribe(caller: Caller, session: Session, uri: string): Promise<void> {
    const trace: OperationTrace = {};
    return this.decided(caller, 'resources/subscribe', 'subscribe', uri, trace, (target) => this.options.resources.subscribe(session, target, trace), {
      undo: (target) => this.options.resources.unsubscribe(session, target),
    });
  }

  /** `resources/unsubscribe`: always allowed (it only gives something up). */
  unsubscribe(caller: Caller, session: Session, uri: string): Promise<void> {
    const trace: OperationTrace = {};
    const target = this.resolve(uri);
    if (target) Object.assign(trace, { server: target.server, upstreamUri: target.uri });
    // The spelling as decoded too: what a session subscribed to while the upstream still listed it.
    const decoded = this.options.uris.decode(uri);
    return this.audited(
      caller,
      'resources/unsubscribe',
      uri,
      trace,
      () => ({ allow: true, rule: 'default' }),
      async () => {
        if (target) await this.options.resources.unsubscribe(session, target);
        if (decoded && decoded.uri !== target?.uri) await this.options.resources.unsubscribe(session, decoded);
      },
    );
  }

  /**
   * One URI of a `subscriptions/listen` filter (2026): the URI as held (its canonical federated
   * form, which updates will carry) when it was accepted (decided as a subscription, then held for
   * `session`), else undefined. A denied URI is refused exactly as an unknown one.
   */
  listen(caller: Caller, session: Session, uri: string): Promise<string | undefined> {
    const trace: OperationTrace = {};
    let held: string | undefined;
    return this.decided(
      caller,
      'subscriptions/listen',
      'subscribe',
      uri,
      trace,
      async (target) => {
        await this.options.resources.subscribe(session, target, trace);
        held = this.options.uris.encode(target.server, target.uri);
      },
      { undo: (target) => this.options.resources.unsubscribe(session, target) },
    ).then(
      () => held,
      () => undefined,
    );
  }

  /** Gives up what {@link listen} held, given the URI it returned. Never throws. */
  async release(session: Session, held: string): Promise<void> {
    const target = this.options.uris.decode(held);
    if (target) await this.options.resources.unsubscribe(session, target).catch(() => undefined);
  }

  /**
   * `completion/complete`: the template must be allowed (`complete`), and each value is decided as
   * the read of the URI it would produce (`read`); values that would produce a denied URI are dropped.
   */
  complete(caller: Caller, params: CompleteParams, signal?: AbortSignal): Promise<CompleteResultT> {
    if (params.ref.type === 'ref/prompt' && this.options.items) return this.completePrompt(caller, params, signal);
    const limited = this.rules.completions?.take(caller);
    if (limited instanceof Promise) return limited.then((l) => this.completeTaken(l, caller, params, signal));
    return this.completeTaken(limited, caller, params, signal);
  }

  private completeTaken(limited: TakeResult | undefined, caller: Caller, params: CompleteParams, signal?: AbortSignal): Promise<CompleteResultT> {
    const trace: OperationTrace = {};
    const uri = params.ref.uri ?? '';
    if (limited && !limited.ok) {
      const error = rateLimited(limited.retryAfterMs);
      return this.recorded(caller, 'completion/complete', uri, trace, COMPLETION_LIMITED, 'rate_limited', this.now()).then(() => Promise.reject(error));
    }
    const target = params.ref.type === 'ref/resource' ? this.resolveTemplate(uri) : undefined;
    if (target) Object.assign(trace, { server: target.server, upstreamUri: target.uri });
    const decide = (): PolicyDecision => {
      if (params.ref.type !== 'ref/resource') return { allow: true, rule: 'default' }; // refused as invalid params below
      if (target === null) return REFUSED;
      return target ? this.rules.policy.decideTemplate(caller, 'complete', target.server, target.uri) : UNKNOWN;
    };
    const filtered = (result: CompleteResultT): CompleteResultT => {
      const policy = this.rules.policy;
      if (!policy.enforced || !target) return result;
      const vars = { ...(params.context?.arguments ?? {}) };
      const values = result.completion.values.filter((value) => {
        vars[params.argument.name] = value;
        return policy.decideTemplate(caller, 'read', target.server, expandKnown(target.uri, vars)).allow;
      });
      if (values.length === result.completion.values.length) return result;
      const { total: _total, ...completion } = result.completion;
      return { ...result, completion: { ...completion, values } };
    };
    return this.audited(
      caller,
      'completion/complete',
      uri,
      trace,
      decide,
      async () => filtered(await this.options.resources.complete(params, target ?? undefined, signal, trace, caller.principal)),
      {
        again: filtered,
      },
    );
  }

  /** `tools/list` or `prompts/list`: tools and prompts the caller may not see never reach a page. */
  listItems(caller: Caller, kind: ItemKind, cursor: string | undefined, signal?: AbortSignal): Promise<ListResult> {
    const parts = this.itemParts();
    const trace: OperationTrace = {};
    const { policy } = this.rules;
    const filter = policy.enforced
      ? (server: string, item: Record<string, unknown>) => policy.decideItem(caller, 'list', server, policyItem(kind, item)).allow
      : undefined;
    const audience = { ...(filter ? { filter, visible: (server: string) => policy.visibleServer(caller, server) } : {}), binding: caller.principal };
    return this.audited(
      caller,
      `${kind}/list`,
      undefined,
      trace,
      () => PER_ITEM,
      async () => this.scoped(await parts.tools.list(kind, cursor, signal, audience, trace)),
      { again: (result) => this.refilteredItems(caller, kind, result) },
    );
  }

  /** An item page filtered again under the current rules (they changed while it was being made). */
  private refilteredItems(caller: Caller, kind: ItemKind, result: ListResult): ListResult {
    const { policy } = this.rules;
    const items = result[kind];
    if (!policy.enforced || !Array.isArray(items)) return result;
    const names = this.itemParts().names;
    const kept = items.filter((item: Record<string, unknown>) => {
      const server = typeof item.name === 'string' ? names.serverOf(item.name) : undefined;
      return server !== undefined && policy.decideItem(caller, 'list', server, policyItem(kind, item)).allow;
    });
    return kept.length === items.length ? result : { ...result, [kind]: kept };
  }

  /**
   * `tools/call`: rate limited (`limits.calls`), the tool found at its owner, decided (`call`, with
   * its annotations), then called through `relay.relay` (the bridge: the answer may then be
   * `input_required`). A denied tool is answered exactly as an unknown one, with no upstream call.
   */
  callTool(caller: Caller, params: Record<string, unknown> & { name: string }, relay: CallContext): Promise<CallToolResultT | InputRequiredResult> {
    const parts = this.itemParts();
    return this.itemCall(caller, 'tools', params, (found, trace) => parts.tools.call(found, params, relay, trace));
  }

  /** `prompts/get`: as {@link callTool}, with the action `get`. */
  getPrompt(caller: Caller, params: Record<string, unknown> & { name: string }, relay: CallContext): Promise<GetPromptResultT | InputRequiredResult> {
    const parts = this.itemParts();
    return this.itemCall(caller, 'prompts', params, (found, trace) => parts.prompts.get(found, params, relay, trace));
  }

  /** `completion/complete` for a `ref/prompt`: the prompt must be allowed (`complete`), else it is unknown. */
  async completePrompt(caller: Caller, params: CompleteParams, signal?: AbortSignal): Promise<CompleteResultT> {
    const parts = this.itemParts();
    const name = params.ref.name ?? '';
    const trace: OperationTrace = { name };
    const limited = await this.rules.completions?.take(caller); // a shared limiter answers after one round trip
    if (limited && !limited.ok) {
      const error = rateLimited(limited.retryAfterMs);
      return this.recorded(caller, 'completion/complete', undefined, trace, COMPLETION_LIMITED, 'rate_limited', this.now()).then(() => Promise.reject(error));
    }
    return this.itemDecided(caller, 'completion/complete', 'complete', 'prompts', name, trace, (found) =>
      parts.prompts.complete(params, found, signal, caller.principal),
    );
  }

  private itemCall<T>(
    caller: Caller,
    kind: ItemKind,
    params: Record<string, unknown> & { name: string },
    run: (found: FoundItem, trace: OperationTrace) => Promise<T>,
  ): Promise<T> {
    const method = kind === 'tools' ? 'tools/call' : 'prompts/get';
    let trace: OperationTrace;
    try {
      const args = params.arguments ?? {};
      const canonical = canonicalArguments(args);
      const audited = this.options.audit !== noopAuditLog;
      // The result's size is weighed only for an audit record (nothing else reads it). The arguments'
      // hash is for the record too, and keys the call's fair share upstream: without a record, short
      // canonical arguments are their own key.
      trace = {
        name: params.name,
        argumentsSha256: audited || canonical.length > MAX_PLAIN_KEY ? sha256Hex(canonical) : undefined,
        argumentsKey: canonical,
        weigh: audited,
      };
      if (this.itemParts().recordArguments) trace.arguments = canonical;
    } catch (err) {
      return Promise.reject(err);
    }
    const decided = (): Promise<T> =>
      this.itemDecided(caller, method, kind === 'tools' ? 'call' : 'get', kind, params.name, trace, (found) => run(found, trace));
    const calls = this.rules.calls;
    if (!calls) return decided(); // no call limit: no turn waited for one
    const taken = (limited: TakeResult): Promise<T> => {
      if (limited.ok) return decided();
      const error = rateLimited(limited.retryAfterMs);
      return this.recorded(caller, method, undefined, trace, CALL_LIMITED, 'rate_limited', this.now()).then(() => Promise.reject(error));
    };
    let limited: TakeResult | Promise<TakeResult>;
    try {
      limited = calls.take(caller);
    } catch (err) {
      return Promise.reject(err);
    }
    // A shared limiter answers after one round trip; the local one at once (no extra turn, no async frame).
    return limited instanceof Promise ? limited.then(taken) : taken(limited);
  }

  /** Finds `name` at its owner, decides `action` on it, and runs `run` when allowed; denied or unknown: the same unknown-item error. */
  private itemDecided<T>(
    caller: Caller,
    method: string,
    action: PolicyAction,
    kind: ItemKind,
    name: string,
    trace: OperationTrace,
    run: (found: FoundItem) => Promise<T>,
  ): Promise<T> {
    let catalog: ItemParts['catalog'];
    let found: FoundItem | null | undefined;
    const started = this.now();
    try {
      catalog = this.itemParts().catalog;
      found = catalog.findNow(kind, name); // known and current: no turn waited, and no async frame
    } catch (err) {
      return Promise.reject(err);
    }
    // The policy decision on the looked-up item (undefined or null when there is none), audited.
    const decided = (item: FoundItem | null | undefined): Promise<T> => {
      if (item) trace.server = item.server;
      const missing = () => unknownItem(kind === 'tools' ? 'tool' : 'prompt', name);
      const decide = (): PolicyDecision =>
        item
          ? this.rules.policy.decideItem(caller, action, item.server, {
              kind: kind === 'tools' ? 'tool' : 'prompt',
              name: item.name,
              clientName: name,
              annotations: annotationsOf(item.item),
            })
          : UNKNOWN;
      return this.audited(caller, method, undefined, trace, decide, () => run(item!), { missing });
    };
    if (found) return decided(found);
    return this.itemLookedUp(caller, method, kind, name, trace, catalog, started).then(decided);
  }

  /** The catalog asked for `name` (not known, or not current: one turn waited); a failed lookup is recorded, then thrown. */
  private async itemLookedUp(
    caller: Caller,
    method: string,
    kind: ItemKind,
    name: string,
    trace: OperationTrace,
    catalog: ItemParts['catalog'],
    started: number,
  ): Promise<FoundItem | null | undefined> {
    try {
      return await catalog.find(kind, name);
    } catch (err) {
      await this.recorded(caller, method, undefined, trace, UNKNOWN, outcomeOf(err), started);
      throw err;
    }
  }

  private itemParts(): ItemParts {
    const parts = this.options.items;
    if (!parts) throw new ProxyError(ErrorCodes.UNKNOWN_ITEM, 'Unknown tool', { details: { kind: 'tool', name: '' } });
    return parts;
  }

  /**
   * An upstream read made for the principals holding a polled subscription or listen: each pays one
   * read from its bucket. False when none could (every holder's bucket is empty): the poll waits.
   * A promise when the limiter is shared (the takes go out together).
   */
  chargeBackground(holders: readonly Pick<Caller, 'principal' | 'roles'>[]): boolean | Promise<boolean> {
    const taken = holders.map((holder) => this.rules.limiter.take(holder));
    if (taken.some((t) => t instanceof Promise)) return Promise.all(taken.map((t) => Promise.resolve(t))).then((all) => all.some((t) => t.ok));
    return (taken as TakeResult[]).some((t) => t.ok);
  }

  /**
   * Records a request refused because its principal is at one of its own bounds (`limit`), before
   * the refusal is sent: outcome `rate_limited`, rule `limit:<name>`. Rejects when the log cannot be written.
   */
  limited(caller: Caller, method: string, limit: PrincipalLimitName, uri?: string): Promise<void> {
    return this.recorded(caller, method, uri, {}, { allow: false, rule: `limit:${limit}` }, 'rate_limited', this.now());
  }

  /**
   * Whether an update of the federated `uri` may be delivered to `caller` now (decided again at
   * every delivery: a reload can revoke a standing subscription). Audited either way.
   */
  deliver(caller: Caller, uri: string): boolean {
    const started = this.now();
    const target = this.options.uris.decode(uri);
    const trace: OperationTrace = target ? { server: target.server, upstreamUri: target.uri } : {};
    // An update names the URI as its upstream spelled it.
    const decision = caller.revoked ? REVOKED : target ? this.safeDecide(caller, 'read', target.server, target.uri, 'issued') : UNKNOWN;
    this.record(caller, 'notifications/resources/updated', uri, trace, decision, decision.allow ? 'ok' : 'denied', started);
    return decision.allow;
  }

  /**
   * The edge: a client's federated URI decoded and canonicalised, once. A URI its upstream gave out
   * (see `IssuedUris`) is kept exactly as given; any other becomes its canonical form
   * (`normalizeUri`); `null` when that refuses it, undefined when no server owns it. Both are
   * answered as a missing resource, before policy, cache or upstream.
   */
  resolve(uri: string): ResolvedUri | null | undefined {
    const target = this.options.uris.decode(uri);
    if (!target) return undefined;
    if (this.options.issued?.has(target.server, target.uri)) return { server: target.server, uri: target.uri, form: 'issued' };
    const canonical = normalizeUri(target.uri);
    return canonical.ok ? { server: target.server, uri: canonical.uri, form: 'canonical' } : null;
  }

  /**
   * A completion ref's template: kept as sent (an upstream matches templates by their text) when
   * its upstream gave it out or when, with each expression standing in as one plain character, it
   * would be canonical; `null` when not (refused), undefined when no server owns it.
   */
  private resolveTemplate(uri: string): ResolvedUri | null | undefined {
    const target = this.options.uris.decode(uri);
    if (!target) return undefined;
    if (this.options.issued?.has(target.server, target.uri)) return { server: target.server, uri: target.uri, form: 'issued' };
    const literal = target.uri.replace(EXPRESSION, 'x');
    const canonical = normalizeUri(literal);
    return canonical.ok && canonical.uri === literal ? { server: target.server, uri: target.uri, form: 'canonical' } : null;
  }

  /**
   * Resolves `uri` at the edge and decides `action` on it; a deny, unknown or refused URI is thrown
   * as not-found before `run` is called. `undo` takes back what `run` did when a reload in the
   * meantime makes the answer a deny.
   */
  private decided<T>(
    caller: Caller,
    method: string,
    action: PolicyAction,
    uri: string,
    trace: OperationTrace,
    run: (target: NamespacedUri) => Promise<T>,
    redecide: { undo?: (target: NamespacedUri) => Promise<void> } = {},
  ): Promise<T> {
    const target = this.resolve(uri);
    if (target) {
      trace.server = target.server;
      trace.upstreamUri = target.uri;
    }
    const decide = () => (target ? this.safeDecide(caller, action, target.server, target.uri, target.form) : target === null ? REFUSED : UNKNOWN);
    // `run` is only called once `decide` allowed, so `target` is resolved there; it is forwarded as it is.
    const { undo } = redecide;
    return this.audited(caller, method, uri, trace, decide, () => run(target!), undo ? { undo: () => undo(target!) } : {});
  }

  /**
   * Decides, runs, records. Not an async function: with no audit log a read's record is written
   * synchronously (metrics, access log) and nothing is awaited, so the read pays no async frame and
   * no extra turns of the microtask queue; with one, the answer waits for its record as before.
   */
  private audited<T>(
    caller: Caller,
    method: string,
    uri: string | undefined,
    trace: OperationTrace,
    decide: () => PolicyDecision,
    run: () => Promise<T>,
    redecide: Redecide<T> = {},
  ): Promise<T> {
    const started = this.now();
    const generation = this.generation;
    const decision = decidedFor(caller, decide);
    if (!decision.allow) {
      const unknown = decision === UNKNOWN; // a refused spelling is recorded as denied, with rule invalid-uri
      return this.recorded(caller, method, uri, trace, decision, unknown ? 'not_found' : 'denied', started).then(() =>
        Promise.reject(redecide.missing ? redecide.missing() : NOT_FOUND()),
      );
    }
    let pending: Promise<T>;
    try {
      pending = run();
    } catch (err) {
      return this.recorded(caller, method, uri, trace, decision, outcomeOf(err), started).then(() => Promise.reject(err));
    }
    return pending.then(
      (result) => {
        // Decided before a reload (or a change of who the caller is), ready after it: decided again.
        if (this.generation !== generation) return this.redecided(caller, method, uri, trace, decide, result, redecide, started);
        const written = this.recordedIfAudited(caller, method, uri, trace, decision, trace.toolError ? 'tool_error' : 'ok', started);
        return written === undefined ? result : written.then(() => result);
      },
      (err: unknown) => this.recorded(caller, method, uri, trace, decision, outcomeOf(err), started).then(() => Promise.reject(err)),
    );
  }

  /** The end of {@link audited} when a reload came between the decision and the answer: decided again, then recorded. */
  private async redecided<T>(
    caller: Caller,
    method: string,
    uri: string | undefined,
    trace: OperationTrace,
    decide: () => PolicyDecision,
    result: T,
    redecide: Redecide<T>,
    started: number,
  ): Promise<T> {
    const decision = decidedFor(caller, decide);
    if (!decision.allow) {
      await redecide.undo?.().catch(() => undefined);
      await this.recorded(caller, method, uri, trace, decision, 'denied', started);
      throw redecide.missing ? redecide.missing() : NOT_FOUND();
    }
    const answer = redecide.again ? redecide.again(result) : result;
    await this.recorded(caller, method, uri, trace, decision, trace.toolError ? 'tool_error' : 'ok', started);
    return answer;
  }

  private safeDecide(caller: Caller, action: PolicyAction, server: string, uri: string, form: UriForm = 'request'): PolicyDecision {
    try {
      return this.rules.policy.decide(caller, action, server, uri, form);
    } catch {
      return { allow: false, rule: 'error' }; // an evaluation error is a deny
    }
  }

  /**
   * Records one request for user input (`elicitation/create`, `sampling/createMessage`, `roots/list`)
   * that an upstream made during a call of `caller`'s, as relayed to it or declined: who was asked
   * and how it ended (`accept`, `decline`, `cancel`, `ok`, `denied`), never what was asked or answered.
   * `subject` is what the call was about in the upstream's terms (recorded as `upstreamUri` for reads;
   * for `tools/call` and `prompts/get`, the tool's or prompt's client name is recorded as `name`).
   */
  relayedInput(
    caller: Caller,
    input: { method: string; server: string; callMethod: string; subject: string; allow: boolean; rule: string; outcome: AuditOutcome; durationMs: number },
  ): Promise<void> {
    if (this.options.audit === noopAuditLog) return Promise.resolve();
    return this.options.audit.recordBatched({
      caller,
      method: input.method,
      server: input.server,
      ...(input.callMethod === 'resources/read' ? { uri: this.options.uris.encode(input.server, input.subject), upstreamUri: input.subject } : {}),
      ...(input.callMethod !== 'resources/read' && this.options.items ? { name: this.options.items.names.encode(input.server, input.subject) } : {}),
      decision: input.allow ? 'allow' : 'deny',
      rule: input.rule,
      outcome: input.outcome,
      durationMs: Math.max(0, Math.round(input.durationMs * 1000) / 1000),
    });
  }

  /** With a policy in force, what one caller got is not for another: the hint becomes private. */
  private scoped<T extends object>(result: T): T {
    if (!this.rules.policy.enforced) return result;
    const hint = attachedHint(result);
    return hint && hint.scope !== 'private' ? withHint(result, { ttlMs: hint.ttlMs, scope: 'private' }) : result;
  }

  /** Records synchronously (a notification about to be sent in the same turn). */
  private record(...args: RecordArgs): void {
    if (this.metrics.enabled) this.metrics.notification('updated', args[4].allow ? 'sent' : 'denied');
    if (this.options.audit === noopAuditLog) return; // no audit configured: build nothing
    this.options.audit.record(this.entryOf(...args)); // throws when the log cannot be written
  }

  /** {@link recorded}, or undefined (nothing to wait for) when there is no audit log: the record was observed synchronously. */
  private recordedIfAudited(...args: RecordArgs): Promise<void> | undefined {
    if (this.options.audit !== noopAuditLog) return this.recorded(...args);
    if (this.observed) this.observe(...args);
    return undefined;
  }

  /** Records in the turn's batch; resolves once it is written, so the answer that follows is never missing from the log. */
  private recorded(...args: RecordArgs): Promise<void> {
    if (this.observed) this.observe(...args);
    if (this.options.audit === noopAuditLog) return Promise.resolve();
    const written = this.options.audit.recordBatched(this.entryOf(...args)); // rejects when the log cannot be written: the request fails
    if (!this.metrics.enabled) return written;
    const started = this.now();
    return written.then(
      () => this.metrics.auditWrite(this.now() - started, true),
      (err: unknown) => {
        this.metrics.auditWrite(this.now() - started, false);
        throw err;
      },
    );
  }

  /** Reports one finished request to the metrics and the access log. */
  private observe(
    caller: Caller,
    method: string,
    _uri: string | undefined,
    trace: OperationTrace,
    decision: PolicyDecision,
    outcome: AuditOutcome,
    started: number,
  ): void {
    const durationMs = this.now() - started;
    const cache = trace.coalesced ? 'coalesced' : trace.cache;
    const record: RequestRecord = {
      method,
      server: trace.server,
      outcome: requestOutcome(outcome),
      effect: decision.allow ? 'allow' : 'deny',
      rule: decision.rule,
      cache,
      durationMs,
      principal: caller.principal,
    };
    this.metrics.request(record);
    this.accessLog?.(record, caller.session);
  }

  private entryOf(
    caller: Caller,
    method: string,
    uri: string | undefined,
    trace: OperationTrace,
    decision: PolicyDecision,
    outcome: AuditOutcome,
    started: number,
  ): AuditEntry {
    // One literal with every key (a record leaves out those that are undefined): conditional
    // spreads cost about 1 µs each on Node 20, and a read's record had five.
    return {
      caller,
      method,
      uri,
      server: trace.server,
      upstreamUri: trace.upstreamUri,
      decision: decision.allow ? 'allow' : 'deny',
      rule: decision.rule,
      outcome,
      cache: trace.cache,
      bytes: trace.bytes,
      returned: trace.returned,
      filtered: trace.filtered,
      name: trace.name,
      argumentsSha256: trace.argumentsSha256,
      arguments: trace.arguments,
      durationMs: Math.max(0, Math.round((this.now() - started) * 1000) / 1000),
    };
  }
}

type RecordArgs = [Caller, string, string | undefined, OperationTrace, PolicyDecision, AuditOutcome, number];

/** The audit outcome of a failed operation. */
function outcomeOf(err: unknown): AuditOutcome {
  if (err instanceof ProxyError) {
    switch (err.code) {
      case ErrorCodes.RESOURCE_NOT_FOUND:
      case ErrorCodes.UPSTREAM_UNAVAILABLE:
      case ErrorCodes.UNKNOWN_ITEM:
        return 'not_found';
      case ErrorCodes.UPSTREAM_TIMEOUT:
        return 'timeout';
      case ErrorCodes.CANCELLED:
        return 'cancelled';
      case ErrorCodes.LIMIT_EXCEEDED:
      case ErrorCodes.RATE_LIMITED:
        return 'rate_limited';
      default:
        return `error:${err.code}`;
    }
  }
  if (err instanceof JsonRpcError) return `error:${err.code}`;
  return 'error:INTERNAL';
}

/** A listed tool or prompt (client name in `name`, the upstream's in `_meta`) as policy sees it. */
function policyItem(kind: ItemKind, item: Record<string, unknown>): PolicyItem {
  const clientName = typeof item.name === 'string' ? item.name : '';
  const meta = item._meta as Record<string, unknown> | undefined;
  const name = typeof meta?.[META_UPSTREAM_NAME] === 'string' ? meta[META_UPSTREAM_NAME] : clientName;
  return { kind: kind === 'tools' ? 'tool' : 'prompt', name, clientName, annotations: annotationsOf(item) };
}

function annotationsOf(item: Record<string, unknown>): Record<string, unknown> | undefined {
  const a = item.annotations;
  return typeof a === 'object' && a !== null ? (a as Record<string, unknown>) : undefined;
}

/** `decide()` for `caller`: revoked callers are refused, and an evaluation error is a deny. */
function decidedFor(caller: Caller, decide: () => PolicyDecision): PolicyDecision {
  if (caller.revoked) return REVOKED;
  try {
    return decide();
  } catch {
    return { allow: false, rule: 'error' };
  }
}

/** The canonical JSON (RFC 8785) of a request's arguments; what cannot be canonicalised is hashed as its JSON. */
function canonicalArguments(args: unknown): string {
  try {
    return canonicalize(args);
  } catch {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- JSON.stringify returns undefined for undefined and functions; its type says string
    return JSON.stringify(args) ?? 'null';
  }
}
