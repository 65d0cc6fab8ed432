// How a call that may ask the user for input reaches its upstream: the era-neutral seam the bridge (eras/input-bridge.ts) plugs into. Pure types.
import { withFields } from '../copy.js';
import type { SignalSource } from '../cancel.js';
import type { CallOptions, RequestExtras, ResultSchema, Upstream } from '../upstream/upstream.js';

/**
 * The 2026-07-28 answer "input required" (SEP-2322): requests for the user, keyed by the server's
 * own ids, and an opaque state to echo on the retry. A call through the gateway may end in one,
 * whatever era its upstream speaks; the caller's edge renders it for its client.
 */
export interface InputRequiredResult {
  resultType: 'input_required';
  inputRequests?: Record<string, { method: string; params?: Record<string, unknown> }>;
  requestState?: string;
  [key: string]: unknown;
}

/** True when `value` is an {@link InputRequiredResult} (its `resultType` says so). */
export function isInputRequired(value: unknown): value is InputRequiredResult {
  return typeof value === 'object' && value !== null && (value as { resultType?: unknown }).resultType === 'input_required';
}

/** Results that answer one caller's input (see {@link markPersonal}). */
const personal = new WeakSet();

/**
 * Marks `result` as made with one caller's input (an elicitation answer, a sampled message): it is
 * that caller's alone, so a cache never stores it and a read that joined the call asks for its own.
 */
export function markPersonal<T>(result: T): T {
  if (typeof result === 'object' && result !== null) personal.add(result);
  return result;
}

/** True when `result` was made with one caller's input, or is a question for one caller (`input_required`). */
export function isPersonal(result: unknown): boolean {
  return isInputRequired(result) || (typeof result === 'object' && result !== null && personal.has(result));
}

/** One call to an upstream that may ask the user for input (`resources/read`, `tools/call`, `prompts/get`). */
export interface UpstreamCall<T> {
  method: string;
  /** The params as the upstream gets them (its own URI or name), without `inputResponses`/`requestState`. */
  params: Record<string, unknown>;
  schema: ResultSchema<T>;
  /**
   * What the call is about, in the upstream's terms (its URI, tool or prompt name): a sealed
   * `requestState` is bound to it, so a state given out for one call is refused for another.
   */
  subject: string;
  signal?: SignalSource | undefined;
  /** Who the call is for (fair queueing upstream; held-call bounds). */
  principal?: string | undefined;
  /**
   * A long call (`tools/call`, `prompts/get`): its own timeout reset by progress, its overall bound,
   * the caller's progress listener and its fair-queue key, as {@link Upstream.call} takes them.
   * Default: none (a plain request under the upstream's `timeoutMs`).
   */
  long?: LongCall | undefined;
}

/** How a long call is bounded and who hears its progress ({@link CallOptions} without the signal and principal). */
export type LongCall = Omit<CallOptions, 'signal' | 'principal'>;

/**
 * Sends `call` to `upstream` with `params`, under `signal`: a long call through {@link Upstream.call},
 * any other through {@link Upstream.request}. The one way relays reach an upstream.
 */
export function sendUpstream<T>(
  upstream: Upstream,
  call: UpstreamCall<T>,
  params: Record<string, unknown>,
  signal: SignalSource | undefined,
  extras?: RequestExtras,
): Promise<T> {
  if (call.long) return upstream.call(call.method, params, call.schema, withFields(call.long, { signal, principal: call.principal }), extras);
  return upstream.request(call.method, params, call.schema, signal, call.principal, extras);
}

/**
 * How one downstream request's calls reach their upstream. `send(upstream, call)` returns the
 * upstream's result, or an {@link InputRequiredResult} for a client that answers it by retrying;
 * the bridge (`eras/input-bridge.ts`) relays the upstream's requests for input in the caller's era.
 */
export interface CallRelay {
  send<T>(upstream: Upstream, call: UpstreamCall<T>): Promise<T | InputRequiredResult>;
  /** True when this request continues an earlier one (a retry with state): it is never served from, or shared through, a cache. */
  readonly resuming: boolean;
}

/** The relay without a bridge: the upstream's result as it is (its requests for input are declined upstream of here). */
export const plainRelay: CallRelay = {
  resuming: false,
  send: (upstream, call) => sendUpstream(upstream, call, call.params, call.signal),
};
