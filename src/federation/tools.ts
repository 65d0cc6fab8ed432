// Federated tools (and the merged tool and prompt lists), shared by all sessions: list = walk every upstream; call = route to the owner, answer intact with resource URIs namespaced.
import { withFields } from '../copy.js';
import type { TimeoutsConfig } from '../config/schema.js';
import { CallToolResult, Methods, withoutHopFields, type CallToolResultT } from '../protocol.js';
import { withHint } from './cache-hint.js';
import type { CallContext, CallsInFlight } from './calls-in-flight.js';
import { namespacedContent } from './content-uris.js';
import { isInputRequired, plainRelay, type InputRequiredResult, type LongCall } from './relay.js';
import type { FoundItem, ItemKind } from './item-catalog.js';
import { Lister, type ListAudience } from './listing.js';
import { LIST_FIELDS } from './page-walker.js';
import type { ListResult, OperationTrace } from './resources.js';
import type { UriCodec } from './uri.js';
import type { ResultSchema } from '../upstream/upstream.js';

/** The shared parts tool calls and item lists use. */
export interface ToolsDeps {
  /** The URIs clients see (resource links in results are encoded with it). */
  uris: UriCodec;
  lister: Lister;
  calls: CallsInFlight;
  timeouts: () => TimeoutsConfig;
}

/**
 * The federation's tools. Holds no per-session state: the caller's progress and messages travel
 * with each call ({@link CallContext}).
 */
export class FederatedTools {
  constructor(private readonly deps: ToolsDeps) {}

  /** `tools/list` or `prompts/list`: one merged downstream page, with client names. */
  async list(kind: ItemKind, cursor: string | undefined, signal?: AbortSignal, audience?: ListAudience, trace?: OperationTrace): Promise<ListResult> {
    const page = await this.deps.lister.page(kind, cursor, signal, audience);
    if (trace) {
      trace.returned = page.items.length;
      trace.filtered = page.filtered;
    }
    const result: ListResult = { [LIST_FIELDS[kind]]: page.items, ...Lister.meta(page.incomplete) };
    if (page.nextCursor !== undefined) result.nextCursor = page.nextCursor;
    return withHint(result, page.hint);
  }

  /**
   * `tools/call` of `found` with the client's `params` (its `name` replaced by the upstream's, its
   * progress token kept at the proxy): the result comes back as the upstream gave it (`content`,
   * `structuredContent`, `isError`, `_meta`), with resource links and embedded resources namespaced.
   */
  call(found: FoundItem, params: Record<string, unknown>, relay: CallContext, trace?: OperationTrace): Promise<CallToolResultT | InputRequiredResult> {
    const { server } = found;
    // One `.then`, not an async frame: this is on every call's path.
    return sendToOwner(this.deps, found, params, relay, trace, Methods.callTool, CallToolResult).then((result) => {
      if (isInputRequired(result)) return inputRequiredTraced(result, trace); // the caller's edge renders it for its era
      const stripped: Record<string, unknown> = withoutHopFields(result);
      const out = stripped === result ? { ...result } : stripped; // a copy withoutHopFields made is already ours
      if (Array.isArray(out.content)) out.content = namespacedContent(out.content, (uri) => this.deps.uris.encode(server, uri));
      if (trace) {
        if (trace.weigh !== false) trace.bytes = jsonLength(out);
        if (out.isError === true) trace.toolError = true;
      }
      return out;
    });
  }
}

/**
 * The client's params as sent upstream: without its `_meta.progressToken` (the upstream gets the
 * proxy's own), without reserved `io.modelcontextprotocol/*` `_meta` keys (the client's own hop:
 * its revision and envelope are not the proxy's towards the upstream), and without the retry fields
 * of a 2026-07-28 client (`inputResponses`, `requestState`: the gateway's, opened by the bridge,
 * never the upstream's).
 */
export function upstreamParamsOf(params: Record<string, unknown>): Record<string, unknown> {
  const stripped = withoutProgressToken(params);
  if (!('inputResponses' in stripped) && !('requestState' in stripped)) return stripped;
  const { inputResponses: _answers, requestState: _state, ...others } = stripped;
  return others;
}

/**
 * Sends a call of `found` (`tools/call`, `prompts/get`) to its owner, counted among the calls in
 * flight on its server: the client's params with the upstream's name and, to an upstream that reads
 * it, the caller's log level; the caller's progress token kept at the proxy; through the caller's
 * relay (the era bridge) when it has one.
 */
export function sendToOwner<T>(
  deps: { calls: CallsInFlight; timeouts: () => TimeoutsConfig },
  found: FoundItem,
  params: Record<string, unknown>,
  relay: CallContext,
  trace: OperationTrace | undefined,
  method: string,
  schema: ResultSchema<T>,
): Promise<T | InputRequiredResult> {
  return deps.calls.during(found.server, relay, () =>
    (relay.relay ?? plainRelay).send(found.upstream, {
      method,
      params: withMeta(upstreamParamsOf(params), found.upstream.readsCallerLogLevel ? relay.meta : undefined, found.name),
      schema,
      subject: found.name,
      signal: relay.signal,
      principal: relay.principal,
      long: longCallOf(deps.timeouts(), found, relay, trace),
    }),
  );
}

/**
 * `params` with `meta` added to its `_meta` (the caller's reserved keys, set by the gateway) and, with
 * `name`, the upstream's name in place of the client's: one copy (`params` itself when there is
 * nothing to change).
 */
export function withMeta(params: Record<string, unknown>, meta: Record<string, unknown> | undefined, name?: string): Record<string, unknown> {
  if (!meta) return name === undefined ? params : withFields(params, { name });
  const own = params._meta;
  const merged = withFields(typeof own === 'object' && own !== null ? own : undefined, meta);
  return withFields(params, name === undefined ? { _meta: merged } : { _meta: merged, name });
}

/** `params` without the client's progress token and reserved `_meta` keys (see {@link upstreamParamsOf}). */
export function withoutProgressToken(params: Record<string, unknown>): Record<string, unknown> {
  const meta = params._meta as Record<string, unknown> | undefined;
  if (!meta || typeof meta !== 'object') return params;
  const keys = Object.keys(meta);
  const kept = keys.filter((k) => k !== 'progressToken' && !k.startsWith(RESERVED_META_PREFIX));
  if (kept.length === keys.length) return params;
  const { _meta: _drop, ...others } = params;
  return kept.length > 0 ? { ...others, _meta: Object.fromEntries(kept.map((k) => [k, meta[k]])) } : others;
}

/** The bounds of a tool call or prompt get (`timeouts.callMs` since the last progress, `callMaxMs` in all) and its fair-queue key. */
export function longCallOf(timeouts: TimeoutsConfig, found: FoundItem, relay: CallContext, trace: OperationTrace | undefined): LongCall {
  return {
    timeoutMs: timeouts.callMs,
    maxTotalMs: timeouts.callMaxMs,
    onProgress: relay.onProgress,
    key: `${found.kind}\u0000${found.name}\u0000${trace?.argumentsSha256 ?? trace?.argumentsKey ?? ''}`,
  };
}

/** An `input_required` answer, weighed for the audit record, handed back as it is. */
export function inputRequiredTraced(result: InputRequiredResult, trace: OperationTrace | undefined): InputRequiredResult {
  if (trace && trace.weigh !== false) trace.bytes = jsonLength(result);
  return result;
}

const RESERVED_META_PREFIX = 'io.modelcontextprotocol/';

/** Characters of `value` as JSON (what a result weighs in the audit record). */
export function jsonLength(value: unknown): number {
  try {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- JSON.stringify returns undefined for undefined and functions; its type says string
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return 0;
  }
}
