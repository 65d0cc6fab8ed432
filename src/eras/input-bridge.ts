// Requests an upstream makes back to the user (elicitation, sampling, roots), bridged to the client whose call caused them, in that client's era.
import { randomBytes } from 'node:crypto';
import { CLIENT_CAPABILITIES_META_KEY, type BaseContext, type ClientCapabilities, type Server } from '@modelcontextprotocol/server';
import type { BridgeConfig } from '../config/schema.js';
import type { Caller } from '../caller.js';
import { ErrorCodes, inputDeclined, ProxyError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { AuditDecision, AuditOutcome } from '../audit/log.js';
import type { SetTimer } from '../federation/listing.js';
import { isInputRequired, markPersonal, sendUpstream, type CallRelay, type InputRequiredResult, type UpstreamCall } from '../federation/relay.js';
import type { ServerRequest, ServerRequestHandler, Upstream } from '../upstream/upstream.js';
import { MODERN_REVISION } from './claim.js';
import { MODERN, type Era } from './era.js';
import { HeldCall } from './held-call.js';
import { createInputStateCodec, invalidState, type InputBinding, type InputStateCodec } from './input-state.js';

/** The downstream side of one request that may be asked for input, as its session's edge sees it. */
export interface BridgeDownstream {
  era: Era;
  /** Who asked: input is relayed to this caller only, and held state is bound to its principal. */
  caller: Caller;
  /** What the client declared: at `initialize` (2025-11-25), or on this very request (2026-07-28). */
  capabilities: ClientCapabilities | undefined;
  /** Aborts when the client cancels this request: the upstream call is cancelled and its state freed. */
  signal: AbortSignal;
  /** 2025-11-25: sends a request to the client on the stream of the request being served. */
  ask?: (request: ServerRequest, options: { signal: AbortSignal; timeout: number }) => Promise<Record<string, unknown>>;
  /** 2026-07-28 retry: the client's answers, keyed as the gateway asked. */
  inputResponses?: Record<string, unknown> | undefined;
  /** 2026-07-28 retry: the state the gateway gave out with its `input_required` answer. */
  requestState?: string | undefined;
}

/** One relayed (or declined) request for input, for the audit log: who was asked and how it ended, never what. */
export interface RelayedInput {
  caller: Caller;
  /** `elicitation/create`, `sampling/createMessage` or `roots/list`. */
  method: string;
  server: string;
  /** The call it was asked for: its method and subject (URI, tool or prompt name) in the upstream's terms. */
  callMethod: string;
  subject: string;
  decision: AuditDecision;
  /** `bridge`, or `bridge:<reason>` for a request the gateway declined. */
  rule: string;
  outcome: AuditOutcome;
  durationMs: number;
}

/** Options of {@link InputBridge}. */
export interface InputBridgeOptions {
  config: BridgeConfig;
  logger: Logger;
  /** Records every relayed or declined request for input (never its content). Default: none. */
  audit?: (record: RelayedInput) => void | Promise<void>;
  /** Key of the sealed states. Default: 32 random bytes per process. */
  key?: Uint8Array;
  /** Wall clock (ms) for state expiry. Default: Date.now. */
  now?: () => number;
  /** Monotonic clock (ms) for audit durations. Default: performance.now. */
  monotonic?: () => number;
  /** Arms held-call expiry. Default: setTimeout (unref'd). */
  setTimer?: SetTimer;
}

/** Why the gateway declines a request for input, as told to the one that asked. */
const DECLINED: Record<string, string> = {
  capability: 'the calling client did not declare the capability',
  deprecated: 'sampling is deprecated in 2026-07-28 and not relayed to clients of that revision',
  era: 'this client cannot be asked on the call’s stream',
  'no-caller': 'no single call in flight on this connection asked for it',
  unsupported: 'not a request the gateway relays',
};

const RELAYED = new Set(['elicitation/create', 'sampling/createMessage', 'roots/list']);

const realTimer: SetTimer = (ms, fire) => {
  const t = setTimeout(fire, ms);
  t.unref();
  return () => clearTimeout(t);
};

/**
 * The bridge of issue 17 item 6. Every call that may ask for input goes through
 * {@link InputBridge.relayFor}: the relay it returns sends the call upstream and brings back either
 * the upstream's result or an `input_required` answer for a 2026-07-28 client, whatever the eras of
 * the two sides:
 *
 * | upstream \ client | 2025-11-25 | 2026-07-28 |
 * |---|---|---|
 * | 2025-11-25 | its request is forwarded on the call's stream | the call is held; `input_required` now, resumed on the retry |
 * | 2026-07-28 | asked with a request, then the upstream is retried | forwarded; the upstream's state sealed in ours |
 *
 * A 2025-11-25 upstream's requests reach {@link InputBridge.serverRequest} (install it as the pool's
 * `serverRequests`); each is routed to the call in flight on that upstream that caused it.
 */
export class InputBridge {
  private readonly codec: InputStateCodec;
  private readonly monotonic: () => number;
  private readonly setTimer: SetTimer;
  /** Bridged calls in flight on each 2025-11-25 upstream. */
  private readonly inflight = new Map<Upstream, Set<Flight>>();
  /** Calls to 2025-11-25 upstreams whose caller can answer nothing: counted for routing, nothing held. */
  private readonly plain = new WeakMap<Upstream, Set<PlainFlight>>();
  /** Held calls by id, and how many each principal holds. */
  private readonly held = new Map<string, HeldCall>();
  private readonly heldBy = new Map<string, number>();
  private closed = false;

  constructor(private readonly options: InputBridgeOptions) {
    this.codec = createInputStateCodec(options.key ?? randomBytes(32), options.config.heldCallTtlMs, options.now ?? Date.now);
    this.monotonic = options.monotonic ?? (() => performance.now());
    this.setTimer = options.setTimer ?? realTimer;
  }

  /** Calls in flight and calls held, for tests and metrics. */
  stats(): { inFlight: number; held: number } {
    let inFlight = 0;
    for (const set of this.inflight.values()) inFlight += set.size;
    return { inFlight, held: this.held.size };
  }

  /**
   * The relay for one downstream request: `relay.send(upstream, call)` is what a call that may ask
   * for input (`resources/read`, `tools/call`, `prompts/get`) sends instead of `upstream.request`.
   */
  relayFor(downstream: BridgeDownstream): CallRelay {
    return {
      resuming: downstream.era === 'modern' && downstream.requestState !== undefined,
      send: (upstream, call) => this.relayWithBridge(downstream, upstream, call),
    };
  }

  /** Sends `call` to `upstream` for `downstream`, bridging whatever input the upstream asks for. */
  relayWithBridge<T>(downstream: BridgeDownstream, upstream: Upstream, call: UpstreamCall<T>): Promise<T | InputRequiredResult> {
    if (this.closed) return Promise.reject(new ProxyError(ErrorCodes.CLOSED, 'the bridge is closed'));
    if (upstream.protocolVersion === MODERN_REVISION) return this.viaModern(downstream, upstream, call);
    // A caller that could answer nothing and continues nothing needs no held call: the request goes
    // as a plain one (the upstream's fast path), counted so that routing stays exact.
    if (downstream.requestState === undefined && !answersInput(downstream.capabilities)) return this.viaPlain(downstream, upstream, call);
    return this.viaLegacy(downstream, upstream, call);
  }

  /** Sends `call` as it is, counted among the calls in flight on `upstream` (see {@link serverRequest}). */
  private async viaPlain<T>(downstream: BridgeDownstream, upstream: Upstream, call: UpstreamCall<T>): Promise<T> {
    const flight: PlainFlight = { downstream, subject: call };
    let set = this.plain.get(upstream);
    if (!set) this.plain.set(upstream, (set = new Set()));
    set.add(flight);
    try {
      return await sendUpstream(upstream, call, call.params, call.signal);
    } finally {
      set.delete(flight);
    }
  }

  /** Answers a 2025-11-25 upstream's request: routed to the one bridged call in flight on it, else declined and logged. */
  readonly serverRequest: ServerRequestHandler = (upstream, request, signal) => {
    const flights = this.inflight.get(upstream);
    const plain = this.plain.get(upstream);
    const inFlight = (flights?.size ?? 0) + (plain?.size ?? 0);
    if (inFlight !== 1) {
      this.options.logger.warn({ server: upstream.id, method: request.method, inFlight }, 'upstream request declined: no calling session');
      return Promise.reject(declined(request.method, 'no-caller'));
    }
    if (flights?.size === 1) return this.receive(flights.values().next().value!, request, signal);
    // The one call in flight is a plain one: its caller can answer nothing, so this is declined as the bridge would.
    const only = plain!.values().next().value!;
    const reason = vet(only.downstream, request) ?? 'capability';
    this.record(only.downstream, upstream, only.subject, request.method, 'deny', `bridge:${reason}`, 'denied', this.monotonic());
    return Promise.reject(declined(request.method, reason));
  };

  /** Cancels every held call and refuses new calls. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const call of [...this.held.values()]) call.cancel(new ProxyError(ErrorCodes.CLOSED, 'the gateway is closing'));
    for (const set of this.inflight.values()) for (const f of set) f.call.cancel(new ProxyError(ErrorCodes.CLOSED, 'the gateway is closing'));
  }

  // 2026-07-28 upstream: its input_required is forwarded (sealed) to a 2026 client, or asked of a 2025 one and retried.
  private async viaModern<T>(downstream: BridgeDownstream, upstream: Upstream, call: UpstreamCall<T>): Promise<T | InputRequiredResult> {
    const binding = bindingOf(downstream, upstream, call);
    let params = call.params;
    if (downstream.era === 'modern' && downstream.requestState !== undefined) {
      const state = this.codec.open(downstream.requestState, binding);
      if (state.kind !== 'upstream') throw invalidState('kind');
      const answers = this.answers(downstream, upstream, call, state.asked);
      params = { ...params, ...(answers ? { inputResponses: answers } : {}), ...(state.state !== undefined ? { requestState: state.state } : {}) };
    } else if (downstream.inputResponses !== undefined) {
      // Answers given up front, with no state (SEP-2322 lets a client pre-supply them): the client's
      // own data, like its arguments; the upstream takes what it recognizes and asks for the rest.
      params = { ...params, inputResponses: downstream.inputResponses };
    }
    for (let round = 0; round <= this.options.config.maxRounds; round++) {
      const result = await sendUpstream(upstream, call, params, call.signal, { allowInputRequired: true });
      if (!isInputRequired(result)) return round > 0 || params !== call.params ? markPersonal(result) : result;
      if (round === this.options.config.maxRounds) break;
      const requests = result.inputRequests ?? {};
      for (const [, request] of Object.entries(requests)) this.vetOrThrow(downstream, upstream, call, request);
      if (downstream.era === 'modern') {
        const asked = Object.fromEntries(Object.entries(requests).map(([key, r]) => [key, r.method]));
        const state = this.codec.seal({ kind: 'upstream', ...(result.requestState !== undefined ? { state: result.requestState } : {}), asked }, binding);
        return { resultType: 'input_required', ...(Object.keys(requests).length > 0 ? { inputRequests: requests } : {}), requestState: state };
      }
      const entries = await Promise.all(
        Object.entries(requests).map(async ([key, request]) => [key, await this.ask(downstream, upstream, call, request, downstream.signal)] as const),
      );
      params = {
        ...call.params,
        ...(entries.length > 0 ? { inputResponses: Object.fromEntries(entries) } : {}),
        ...(result.requestState !== undefined ? { requestState: result.requestState } : {}),
      };
    }
    throw new ProxyError(ErrorCodes.UPSTREAM_ERROR, `upstream ${upstream.id} still required input after ${this.options.config.maxRounds} rounds`, {
      details: { server: upstream.id, reason: 'rounds' },
    });
  }

  // 2025-11-25 upstream: its requests arrive during the call; a 2025 client is asked at once, for a 2026 client the call is held.
  private async viaLegacy<T>(downstream: BridgeDownstream, upstream: Upstream, call: UpstreamCall<T>): Promise<T | InputRequiredResult> {
    const binding = bindingOf(downstream, upstream, call);
    let flight: Flight;
    if (downstream.era === 'modern' && downstream.requestState !== undefined) {
      const state = this.codec.open(downstream.requestState, binding);
      if (state.kind !== 'held') throw invalidState('kind');
      const held = this.held.get(state.id);
      if (!held || held.principal !== downstream.caller.principal || held.round !== state.round || held.settled) throw invalidState('expired');
      const found = [...(this.inflight.get(upstream) ?? [])].find((f) => f.call === held);
      if (!found) throw invalidState('expired');
      flight = found;
      held.disarm?.();
      held.disarm = undefined;
      flight.downstream = downstream;
      for (const [key, response] of Object.entries(this.answers(downstream, upstream, call, askedOf(held, state.asked)) ?? {})) {
        held.answer(key, response as Record<string, unknown>);
      }
      for (const key of Object.keys(state.asked)) held.answer(key, undefined); // asked and not answered
    } else {
      // Answers given up front, with no state: a 2025-11-25 upstream cannot take them; ignored (SEP-2322: unrecognized information is ignored).
      flight = this.launch(downstream, upstream, call);
    }
    // The client cancelling this leg cancels the upstream call and frees what it held. A call shared
    // through the cache (no signal of its own) is cancelled only once it asked this caller for input.
    const onAbort = () => {
      if (call.signal !== undefined || flight.call.asking) this.drop(flight, new ProxyError(ErrorCodes.CANCELLED, 'request cancelled'));
    };
    if (downstream.signal.aborted) onAbort();
    downstream.signal.addEventListener('abort', onAbort, { once: true });
    try {
      const event = await flight.call.next();
      if (event.kind === 'done') return (flight.call.asking ? markPersonal(event.result) : event.result) as T;
      if (event.kind === 'failed') throw event.error;
      return this.hold(flight, binding);
    } finally {
      downstream.signal.removeEventListener('abort', onAbort);
      if (flight.call.settled) this.untrack(flight);
    }
  }

  /**
   * Starts a bridged call on a 2025-11-25 upstream. Its deadline is the upstream's `timeoutMs` (a
   * long call's own, reset by progress up to its `maxTotalMs`) until it first asks for input; from
   * then on the user's time is bounded by the bridge (`askTimeoutMs`, `heldCallTtlMs`) and the whole
   * call by that deadline plus `heldCallTtlMs`.
   */
  private launch<T>(downstream: BridgeDownstream, upstream: Upstream, call: UpstreamCall<T>): Flight {
    // A call that ends while held (the upstream failed or went away) frees its place at once.
    const flight: Flight = { call: new HeldCall(downstream.caller.principal, () => this.untrack(flight)), downstream, upstream, subject: call };
    this.track(flight);
    const extraTimeoutMs = this.options.config.heldCallTtlMs;
    const timers: (NodeJS.Timeout | undefined)[] = [undefined, undefined];
    const timedOut = () => {
      if (flight.call.asking || flight.call.settled) return;
      this.drop(flight, new ProxyError(ErrorCodes.UPSTREAM_TIMEOUT, `upstream ${upstream.id} timed out`, { details: { server: upstream.id } }));
    };
    const arm = (slot: 0 | 1, ms: number) => {
      clearTimeout(timers[slot]);
      timers[slot] = setTimeout(timedOut, ms);
      timers[slot].unref();
    };
    const long = call.long;
    // Armed when the request leaves the queue (a queued one is failed by the queue's own deadline).
    const onSent = (remainingMs: number) => {
      arm(0, remainingMs);
      if (long) arm(1, Math.max(1, long.maxTotalMs - (long.timeoutMs - remainingMs)));
    };
    const sent: UpstreamCall<T> = long
      ? {
          ...call,
          long: {
            ...long,
            onProgress: (progress) => {
              if (timers[0] !== undefined) arm(0, long.timeoutMs); // progress resets the call's own timeout, not its overall bound
              long.onProgress?.(progress);
            },
          },
        }
      : call;
    flight.call.start((signal) =>
      sendUpstream(upstream, sent, call.params, signal, { extraTimeoutMs, onSent }).finally(() => timers.forEach((t) => clearTimeout(t))),
    );
    return flight;
  }

  /** Holds `flight` for a 2026 client's retry: its waiting requests become an `input_required` answer. */
  private hold(flight: Flight, binding: InputBinding): InputRequiredResult {
    const call = flight.call;
    if (!call.held) {
      const count = this.heldBy.get(call.principal) ?? 0;
      const limit = this.options.config.maxHeldCallsPerPrincipal;
      if (count >= limit) {
        this.drop(flight, new ProxyError(ErrorCodes.LIMIT_EXCEEDED, 'Too many held calls', { details: { limit } }));
        this.options.logger.info({ principal: call.principal, server: flight.upstream.id, limit }, 'held call refused: too many');
        throw new ProxyError(ErrorCodes.LIMIT_EXCEEDED, 'Too many held calls', { details: { limit } });
      }
      call.held = true;
      this.heldBy.set(call.principal, count + 1);
      this.held.set(call.id, call);
    }
    call.round++;
    const requests = call.take();
    const asked = Object.fromEntries(Object.entries(requests).map(([key, r]) => [key, r.method]));
    call.disarm = this.setTimer(this.options.config.heldCallTtlMs, () => {
      this.options.logger.info({ principal: call.principal, server: flight.upstream.id }, 'held call expired: upstream call cancelled');
      this.drop(flight, new ProxyError(ErrorCodes.CANCELLED, 'held call expired'));
    });
    const inputRequests = Object.fromEntries(
      Object.entries(requests).map(([key, r]) => [key, r.params ? { method: r.method, params: r.params } : { method: r.method }]),
    );
    return { resultType: 'input_required', inputRequests, requestState: this.codec.seal({ kind: 'held', id: call.id, round: call.round, asked }, binding) };
  }

  /** A request of a 2025-11-25 upstream for `flight`'s caller: declined, asked at once (2025 client), or queued for the retry (2026). */
  private receive(flight: Flight, request: ServerRequest, signal: AbortSignal): Promise<Record<string, unknown>> {
    const downstream = flight.downstream;
    flight.call.asking = true;
    const reason = vet(downstream, request);
    if (reason) {
      this.record(downstream, flight.upstream, flight.subject, request.method, 'deny', `bridge:${reason}`, 'denied', this.monotonic());
      return Promise.reject(declined(request.method, reason));
    }
    if (downstream.era === 'legacy') return this.ask(downstream, flight.upstream, flight.subject, request, signal);
    return flight.call.enqueue(request, signal);
  }

  /** Asks a 2025-11-25 client `request` on its call's stream, audited. */
  private async ask(
    downstream: BridgeDownstream,
    upstream: Upstream,
    call: Pick<UpstreamCall<unknown>, 'method' | 'subject'>,
    request: ServerRequest,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const started = this.monotonic();
    if (!downstream.ask) throw declined(request.method, 'era');
    const both = AbortSignal.any([signal, downstream.signal]);
    try {
      const result = await downstream.ask(request, { signal: both, timeout: this.options.config.askTimeoutMs });
      this.record(downstream, upstream, call, request.method, 'allow', 'bridge', outcomeOf(request.method, result), started);
      return result;
    } catch (err) {
      this.record(downstream, upstream, call, request.method, 'allow', 'bridge', both.aborted ? 'cancelled' : 'error:ASK_FAILED', started);
      throw err;
    }
  }

  /** Throws the decline of a request a 2026-07-28 upstream embedded, when `downstream` may not be asked it. */
  private vetOrThrow(downstream: BridgeDownstream, upstream: Upstream, call: UpstreamCall<unknown>, request: ServerRequest): void {
    const reason = vet(downstream, request);
    if (!reason) return;
    this.record(downstream, upstream, call, request.method, 'deny', `bridge:${reason}`, 'denied', this.monotonic());
    if (reason === 'capability' && downstream.era === 'modern') {
      // 2026-07-28 names this refusal: -32021 with the capabilities the client would need.
      throw new ProxyError(ErrorCodes.MISSING_CAPABILITY, `${request.method} needs a client capability the request did not declare`, {
        details: { requiredCapabilities: requiredFor(request) },
      });
    }
    throw new ProxyError(ErrorCodes.INPUT_DECLINED, `${request.method} declined: ${DECLINED[reason]}`, { details: { method: request.method, reason } });
  }

  /**
   * The client's answers of a retry, checked against what was asked (`asked`: key → method): an
   * answer to anything else is refused. Each answer is audited.
   */
  private answers(
    downstream: BridgeDownstream,
    upstream: Upstream,
    call: UpstreamCall<unknown>,
    asked: Record<string, string>,
  ): Record<string, unknown> | undefined {
    const given = downstream.inputResponses;
    if (given === undefined) return undefined;
    for (const key of Object.keys(given)) if (!Object.hasOwn(asked, key)) throw invalidState('unasked');
    const now = this.monotonic();
    for (const [key, response] of Object.entries(given)) {
      const method = asked[key]!;
      this.record(downstream, upstream, call, method, 'allow', 'bridge', outcomeOf(method, response), now);
    }
    return given;
  }

  private record(
    downstream: BridgeDownstream,
    upstream: Upstream,
    call: Pick<UpstreamCall<unknown>, 'method' | 'subject'>,
    method: string,
    decision: AuditDecision,
    rule: string,
    outcome: AuditOutcome,
    started: number,
  ): void {
    const audit = this.options.audit;
    if (!audit) return;
    const entry: RelayedInput = {
      caller: downstream.caller,
      method,
      server: upstream.id,
      callMethod: call.method,
      subject: call.subject,
      decision,
      rule,
      outcome,
      durationMs: this.monotonic() - started,
    };
    void Promise.resolve()
      .then(() => audit(entry))
      .catch((err: unknown) => this.options.logger.error({ err: String(err) }, 'relayed input not audited'));
  }

  private track(flight: Flight): void {
    let set = this.inflight.get(flight.upstream);
    if (!set) this.inflight.set(flight.upstream, (set = new Set()));
    set.add(flight);
  }

  private untrack(flight: Flight): void {
    const set = this.inflight.get(flight.upstream);
    set?.delete(flight);
    if (set?.size === 0) this.inflight.delete(flight.upstream);
    const call = flight.call;
    if (call.held && this.held.delete(call.id)) {
      const left = (this.heldBy.get(call.principal) ?? 1) - 1;
      if (left > 0) this.heldBy.set(call.principal, left);
      else this.heldBy.delete(call.principal);
    }
  }

  /** Cancels `flight` upstream and forgets it. */
  private drop(flight: Flight, reason: unknown): void {
    flight.call.cancel(reason);
    this.untrack(flight);
  }
}

/** A bridged call in flight on a 2025-11-25 upstream: the call, and the downstream leg serving it now. */
/** A call sent plain (its caller can answer nothing): who made it, for the audit of a declined request. */
interface PlainFlight {
  downstream: BridgeDownstream;
  subject: Pick<UpstreamCall<unknown>, 'method' | 'subject'>;
}

/** Whether a client with `caps` could answer any request the bridge relays (elicitation, sampling, roots). */
/** Whether a client that declared `caps` can be asked for input (elicitation, sampling or roots). */
export function answersInput(caps: ClientCapabilities | undefined): boolean {
  return caps?.elicitation !== undefined || caps?.sampling !== undefined || caps?.roots !== undefined;
}

interface Flight {
  call: HeldCall;
  downstream: BridgeDownstream;
  upstream: Upstream;
  subject: Pick<UpstreamCall<unknown>, 'method' | 'subject'>;
}

/** What a sealed state is bound to. */
function bindingOf(downstream: BridgeDownstream, upstream: Upstream, call: UpstreamCall<unknown>): InputBinding {
  return { principal: downstream.caller.principal, server: upstream.id, method: call.method, subject: call.subject };
}

/** The asked keys of a held state, still asked on the held call (answered ones are gone). */
function askedOf(held: HeldCall, asked: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(asked).filter(([key]) => held.methodOf(key) !== undefined));
}

/** Why `downstream` may not be asked `request`, or undefined when it may. */
function vet(downstream: BridgeDownstream, request: ServerRequest): keyof typeof DECLINED | undefined {
  if (!RELAYED.has(request.method)) return 'unsupported';
  const caps = downstream.capabilities;
  if (request.method === 'sampling/createMessage') {
    if (!caps?.sampling) return 'capability';
    return downstream.era === 'modern' ? 'deprecated' : undefined;
  }
  if (request.method === 'roots/list') return caps?.roots ? undefined : 'capability';
  const elicitation = caps?.elicitation as { form?: unknown; url?: unknown } | undefined;
  if (!elicitation) return 'capability';
  const url = (request.params as { mode?: unknown } | undefined)?.mode === 'url';
  // `elicitation: {}` is form mode (2025-11-25 back-compatibility).
  if (url ? !elicitation.url : elicitation.url && !elicitation.form) return 'capability';
  return undefined;
}

/** The client capability `request` needs, as 2026-07-28's `requiredCapabilities` spells it. */
function requiredFor(request: ServerRequest): Record<string, unknown> {
  if (request.method === 'sampling/createMessage') return { sampling: {} };
  if (request.method === 'roots/list') return { roots: {} };
  return { elicitation: (request.params as { mode?: unknown } | undefined)?.mode === 'url' ? { url: {} } : { form: {} } };
}

/** The JSON-RPC error a declined request is answered with. */
function declined(method: string, reason: keyof typeof DECLINED) {
  return inputDeclined(`${method} declined: ${DECLINED[reason]}`, { method, reason });
}

/** An elicitation ends as the user's action; any other answer is `ok`. */
function outcomeOf(method: string, result: unknown): AuditOutcome {
  if (method !== 'elicitation/create') return 'ok';
  const action = (result as { action?: unknown } | undefined)?.action;
  return action === 'accept' || action === 'decline' || action === 'cancel' ? action : 'error:INVALID_ANSWER';
}

/**
 * The downstream side of one request for the bridge: a 2025 client is asked on the request's own
 * stream (`ctx.mcpReq.send`), a 2026 client's capabilities and retry fields come with the request.
 */
export function downstreamOf(server: Server, era: Era, ctx: Pick<BaseContext, 'mcpReq'>, caller: Caller): BridgeDownstream {
  const req = ctx.mcpReq;
  if (era === MODERN) {
    const state = req.requestState();
    return {
      era,
      caller,
      capabilities: (req.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined,
      signal: req.signal,
      inputResponses: req.inputResponses,
      requestState: typeof state === 'string' ? state : undefined,
    };
  }
  return {
    era,
    caller,
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- a 2025-11-25 connection: the capabilities it declared at initialize are the ones that hold
    capabilities: server.getClientCapabilities(),
    signal: req.signal,
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- without it the overload taking a result schema is picked
    ask: (request, options) => req.send(request as never, options) as Promise<Record<string, unknown>>,
  };
}
