// One upstream MCP server: its Client session, request queue, timeouts, cancellation, status and events.
import { Client, ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { onAbort, signalOf, type SignalSource } from '../cancel.js';
import { withFields } from '../copy.js';
import type { JSONRPCMessage, ServerCapabilities } from '@modelcontextprotocol/client';
import type { z } from 'zod';
import type { ServerConfig } from '../config/schema.js';
import { composeUpstream, type FastAnswer } from './connection.js';
import { ErrorCodes, JsonRpc, MARK_TOO_DEEP, MARK_TOO_LARGE, ProxyError, rpcCodeOf } from '../errors.js';
import { FairQueue } from './fair-queue.js';
import type { ListenFilter } from '../eras/listen-filter.js';
import { negotiationMode, upstreamListen } from '../eras/upstream.js';
import { modernUpstreamWire, type ModernUpstreamWire, type SdkRequestOptions, type SentRequest } from '../eras/rev2026-upstream.js';
import { EmptyResult, Methods, Revisions } from '../protocol.js';
import type { Logger } from '../logger.js';
import type { TransportFactory, TransportLimits } from './transports.js';
import { noopMetrics, type Metrics, type RequestOutcome } from '../observe/metrics.js';
import { Liveness, type LivenessClock } from './liveness.js';
import { PendingTable } from './pending-table.js';
import { activeContext, traceUpstream } from '../observe/tracing.js';

/** Lifecycle of an upstream session. */
export type UpstreamStatus = 'idle' | 'connecting' | 'ready' | 'unavailable' | 'closed';

/** A notification the upstream sent, as received (method and raw params). */
export interface UpstreamNotification {
  method: string;
  params?: Record<string, unknown> | undefined;
}

/** Why an upstream is unavailable. */
export interface UpstreamFailure {
  /** The error of its last connection attempt, or "connection closed" when a ready session ended. */
  reason: string;
  /** The last lines (up to 20) its child process wrote to stderr before that; empty for remote upstreams. */
  stderr: readonly string[];
}

/** Dependencies of an {@link Upstream}. */
export interface UpstreamOptions {
  transportFactory: TransportFactory;
  /** Bounds shared by every upstream (nesting depth). */
  limits: TransportLimits;
  logger: Logger;
  /** Name and version the proxy announces to upstreams. */
  clientInfo: { name: string; version: string };
  /** Reconnect with backoff after a failed start or a lost connection. Default: never reconnect. */
  reconnect?: { initialDelayMs: number; maxDelayMs: number };
  /** Source of jitter in [0, 1). Default: Math.random. */
  random?: () => number;
  /**
   * Send plain requests (no {@link RequestExtras}) with the proxy's own id correlation (one pending
   * map and one deadline timer per upstream) instead of the SDK Client's per-request machinery; to a
   * 2026-07-28 upstream written and decoded with the Client's own codec (`eras/rev2026-upstream.ts`).
   * Default: true, unless the environment sets `MCP_FEDERATE_SDK_REQUESTS=1` (which runs every
   * request through the Client, e.g. to compare both in the test suites).
   */
  fastPath?: boolean;
  /** Told how long each request took and how it ended. Default: {@link noopMetrics}. */
  metrics?: Metrics;
  /** The clock and timers of liveness pings (`pingIntervalMs`). Default: performance.now and unref'd timers. */
  livenessClock?: LivenessClock;
  /**
   * Answers what upstreams ask during a call (see {@link SERVER_REQUEST_METHODS}); with it the gateway
   * declares elicitation, sampling and roots to upstreams. Default: none (nothing declared, asked: method not found).
   */
  serverRequests?: ServerRequestHandler;
}

/** What the gateway declares to upstreams when it relays their requests for input. */
const RELAYING_CAPABILITIES = { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} };

/** A request an upstream sends to the gateway during one of its calls (2025-11-25: elicitation, sampling, roots). */
export interface ServerRequest {
  method: string;
  params?: Record<string, unknown> | undefined;
}

/**
 * Answers an upstream's {@link ServerRequest}: the result for the upstream, or a throw (a JSON-RPC
 * error to it, e.g. a declined request). `signal` aborts when the upstream cancels it or goes away.
 */
export type ServerRequestHandler = (upstream: Upstream, request: ServerRequest, signal: AbortSignal) => Promise<Record<string, unknown>>;

/** The requests an upstream may make to the gateway, each relayed to the caller whose call caused it. */
export const SERVER_REQUEST_METHODS = ['elicitation/create', 'sampling/createMessage', 'roots/list'] as const;

/** Per-call options of {@link Upstream.request} beyond the signal and principal. */
export interface RequestExtras {
  /** Hand a 2026-07-28 `input_required` result back as it is (else the SDK would answer it itself). */
  allowInputRequired?: boolean;
  /** Added to `timeoutMs` once the request is sent: time the upstream spends waiting for the user is not its own slowness. */
  extraTimeoutMs?: number;
  /** Told when the request leaves the queue, with what is left of `timeoutMs` (its caller's own deadline starts then). */
  onSent?: (remainingMs: number) => void;
}

/** Progress an upstream reported for a long request. */
export interface UpstreamProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** How a long request ({@link Upstream.call}) is bounded and who hears its progress. */
export interface CallOptions {
  signal?: SignalSource | undefined;
  principal?: string | undefined;
  /** Fails the request this long after it was made, or after the last progress. */
  timeoutMs: number;
  /** Fails the request this long after it was made, whatever progress it reports. */
  maxTotalMs: number;
  onProgress?: ((progress: UpstreamProgress) => void) | undefined;
  /**
   * What the call shares its fair-queue slots with (at most half the upstream's `concurrency` per
   * key): e.g. the tool and a digest of its arguments, so one hung invocation cannot take every
   * slot. Default: the method and name.
   */
  key?: string | undefined;
}

/** A request sent on the fast path, waiting for its answer. */
interface Pending extends SentRequest {
  id: number;
  schema: ResultSchema<unknown>;
  /** performance.now() past which it has timed out. */
  deadline: number;
  /** Removes the listener on the caller's cancellation (once settled). */
  offAbort: (() => void) | undefined;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  /** A long call's bounds: its deadline moves with each progress, never past `maxDeadline`. */
  long: FastLong | undefined;
  /** The SDK Client's codec of a 2026-07-28 connection; undefined for 2025-11-25. */
  wire: ModernUpstreamWire | undefined;
  /** 2026-07-28: the caller's cancellation (for the input-required seam's options). */
  signal: SignalSource | undefined;
  /** 2026-07-28: what was left of the request's time when it was sent, in ms (a long call's: of its total). */
  budgetMs: number;
  /** 2026-07-28 on a transport with a stream per request: aborted to cancel it, as the Client does. */
  abort: AbortController | undefined;
}

/** The bounds of a long call on the fast path (see {@link CallOptions}). */
interface FastLong {
  timeoutMs: number;
  /** performance.now() past which it has timed out, whatever progress it reports. */
  maxDeadline: number;
  onProgress: ((progress: UpstreamProgress) => void) | undefined;
}

/** The result schema shape `request` validates against: any zod schema. */
export type ResultSchema<T> = z.ZodType<T>;

/**
 * One shared client session to an upstream, used by every downstream session. Requests go through
 * a {@link FairQueue} bounded by `concurrency` with a fair share per URI and per principal; `timeoutMs` bounds each
 * request from the moment it is made, queue wait included; aborting the caller's signal removes a
 * queued request or cancels it upstream (`notifications/cancelled`).
 */
export class Upstream {
  /** Current status; only "ready" upstreams take requests. */
  status: UpstreamStatus = 'idle';
  /** What the upstream declared at initialize (undefined until ready). */
  capabilities: ServerCapabilities | undefined;
  /** Connections made so far: 1 after the first, 2 after the first reconnect, ... */
  generation = 0;
  /** True when the current transport parses every message into fresh objects (safe to rewrite in place). */
  freshMessages = false;
  /** Why it is unavailable (its last failure); undefined until one, and again once ready. */
  failure: UpstreamFailure | undefined;
  private client: Client | undefined;
  /** The client of a connection attempt in progress (closed by `close()` so its child ends too). */
  private connectingClient: Client | undefined;
  /**
   * The transport of the attempt in progress. Closed directly on close: in `auto` mode the SDK's
   * client holds no transport until its probe has answered, so closing the client alone would
   * leave a child that never answers running.
   */
  private connectingTransport: { close(): Promise<void> } | undefined;
  /** Resolves when the first connection attempt has finished, either way (or on close). */
  private readonly firstAttempt: Promise<void>;
  private firstAttemptDone!: () => void;
  private attempts = 0;
  private readyAt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly queue: FairQueue;
  /** The listen filter of the current connection (a new connection starts an empty one). */
  private listens: { client: Client; filter: ListenFilter | undefined } | undefined;
  private readonly queuedTimeout = (): ProxyError =>
    new ProxyError(ErrorCodes.UPSTREAM_TIMEOUT, `upstream ${this.id} timed out (queued)`, { details: { server: this.id } });
  /** Fast-path requests awaiting their answer, by id (negative: the SDK Client's ids count up from 0). */
  private readonly pending = new PendingTable<Pending>();
  private nextId = -1;
  /** The one deadline timer of the pending map, armed for `sweepAt`. */
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweepAt = Infinity;
  private readonly fastPath: boolean;
  /** The Client's codec of the current connection when it is 2026-07-28 (see `eras/rev2026-upstream.ts`). */
  private wire: ModernUpstreamWire | undefined;
  private readonly notificationListeners = new Set<(n: UpstreamNotification) => void>();
  private readonly statusListeners = new Set<(s: UpstreamStatus) => void>();
  private readonly log: Logger;
  /** Pings the current connection when it is idle (undefined with `pingIntervalMs: 0` or while not ready). */
  private liveness: Liveness | undefined;
  /** Why the current connection is being recycled (its pings went unanswered), for the failure its close reports. */
  private recycling: string | undefined;

  constructor(
    readonly id: string,
    readonly config: ServerConfig,
    private readonly options: UpstreamOptions,
  ) {
    this.queue = new FairQueue(config.concurrency);
    this.fastPath = options.fastPath ?? process.env.MCP_FEDERATE_SDK_REQUESTS !== '1';
    this.firstAttempt = new Promise((resolve) => (this.firstAttemptDone = resolve));
    this.log = options.logger.child(config.name === id ? { server: id } : { server: id, name: config.name });
  }

  /**
   * Opens the session, trying each transport candidate in order. Rejects when none initializes;
   * with `reconnect` configured, a retry is then scheduled with backoff.
   */
  connect(): Promise<void> {
    if (this.status === 'closed') return Promise.reject(new ProxyError(ErrorCodes.CLOSED, `upstream ${this.id} is closed`));
    if (this.status === 'connecting' || this.status === 'ready') return Promise.resolve();
    const attempt = this.attempt();
    void attempt.then(this.firstAttemptDone, this.firstAttemptDone);
    return attempt;
  }

  /**
   * Resolves once the first connection attempt has finished, either way: a request that arrives
   * while the proxy is still starting waits for its upstream instead of finding it "unavailable".
   */
  settled(): Promise<void> {
    return this.firstAttempt;
  }

  private async attempt(): Promise<void> {
    this.setStatus('connecting');
    let lastStderr: readonly string[] = [];
    let lastError: unknown;
    /** Why each transport failed, in order: the first is the one configured or preferred. */
    const failures: string[] = [];
    for (const candidate of this.options.transportFactory(this.id, this.config, this.options.logger, this.options.limits)) {
      const serverRequests = this.options.serverRequests;
      const capabilities = serverRequests ? RELAYING_CAPABILITIES : {};
      const client = new Client(this.options.clientInfo, { capabilities, versionNegotiation: { mode: negotiationMode(this.config.protocol) } });
      if (serverRequests) {
        for (const method of SERVER_REQUEST_METHODS) {
          client.setRequestHandler(method, ((request: ServerRequest, ctx: { mcpReq: { signal: AbortSignal } }) =>
            serverRequests(this, { method, params: request.params }, ctx.mcpReq.signal)) as never);
        }
      }
      this.connectingClient = client;
      let attempted: unknown;
      try {
        const transport = await candidate.create();
        attempted = transport;
        this.connectingTransport = transport;
        await client.connect(transport, { timeout: this.config.timeoutMs });
        composeUpstream(client, transport, { fastAnswer: (answer) => this.onFastResponse(answer), fastProgress: (params) => this.onFastProgress(params) });
        this.freshMessages = candidate.freshMessages === true;
      } catch (err) {
        lastError = err;
        failures.push(`${failures.length === 0 ? '' : `${candidate.kind} fallback: `}${describeFailure(err)}`);
        if (this.status === 'closed') break;
        this.log.debug({ transport: candidate.kind, err: String(err) }, 'transport attempt failed');
        await client.close().catch(() => undefined);
        await this.connectingTransport?.close().catch(() => undefined); // auto mode: the client may not hold it yet
        this.connectingTransport = undefined;
        lastStderr = stderrTailOf(attempted); // after close: a child stopped on a timeout has had its say
        continue;
      }
      this.connectingClient = undefined;
      this.connectingTransport = undefined;
      if (this.status === 'closed') {
        await client.close().catch(() => undefined);
        throw new ProxyError(ErrorCodes.CLOSED, `upstream ${this.id} is closed`);
      }
      this.attach(client);
      this.log.info({ transport: candidate.kind, protocol: client.getNegotiatedProtocolVersion(), upstream: client.getServerVersion() }, 'upstream ready');
      return;
    }
    this.connectingClient = undefined;
    this.connectingTransport = undefined;
    if (this.status === 'closed') throw new ProxyError(ErrorCodes.CLOSED, `upstream ${this.id} is closed`);
    // The preferred transport's error leads: an unreachable Streamable HTTP server is reported as
    // such, with the SSE fallback's failure after it, not in its place.
    this.failure = {
      reason: failures.length > 1 ? `${failures[0]} (${failures.slice(1).join('; ')})` : (failures[0] ?? String(lastError)),
      stderr: lastStderr,
    };
    this.setStatus('unavailable');
    this.scheduleReconnect();
    throw new ProxyError(ErrorCodes.UPSTREAM_UNAVAILABLE, `upstream ${this.id} failed to start: ${String(lastError)}`, {
      cause: lastError,
    });
  }

  /** Delay before reconnect attempt `n` (0-based): exponential, capped, with jitter in [50%, 100%]. */
  static backoff(n: number, reconnect: { initialDelayMs: number; maxDelayMs: number }, random: () => number): number {
    const ceiling = Math.min(reconnect.maxDelayMs, reconnect.initialDelayMs * 2 ** Math.min(n, 30));
    return Math.round(ceiling / 2 + (random() * ceiling) / 2);
  }

  private scheduleReconnect(): void {
    const reconnect = this.options.reconnect;
    if (!reconnect || this.retryTimer || this.status === 'closed') return;
    const delay = Upstream.backoff(this.attempts++, reconnect, this.options.random ?? Math.random);
    this.log.info({ delayMs: delay, attempt: this.attempts }, 'reconnect scheduled');
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.connect().catch(() => undefined); // failure logged and rescheduled by connect()
    }, delay);
    this.retryTimer.unref();
  }

  /**
   * Whether a plain request made now (`request`, no extras) takes the fast path, whose listener on
   * the request's signal is removed once the request settles (the SDK Client's never is).
   */
  get releasesSignals(): boolean {
    const client = this.client;
    return this.fastPath && client !== undefined && (this.wire !== undefined || client.getNegotiatedProtocolVersion() !== MODERN);
  }

  /** The MCP revision negotiated with the upstream (undefined until connected). */
  get protocolVersion(): string | undefined {
    return this.client?.getNegotiatedProtocolVersion();
  }

  /** Whether the upstream reads a caller's log level from a call's `_meta` (2026-07-28; a 2025-11-25 one ignores the key, so it is not sent). */
  get readsCallerLogLevel(): boolean {
    return this.client?.getNegotiatedProtocolVersion() === MODERN;
  }

  /**
   * True when the upstream can notify changes of a URI: it declared `resources.subscribe`
   * (asked in its revision's way, see {@link subscribe}).
   * Otherwise the relay polls.
   */
  get canSubscribe(): boolean {
    return this.capabilities?.resources?.subscribe === true;
  }

  /**
   * Asks the upstream to notify changes of `uri`, in its revision's way: `resources/subscribe`, or
   * an entry of this connection's listen filter (the stream is reopened with the new set).
   */
  subscribe(uri: string): Promise<void> {
    const listen = this.listenFilter();
    if (listen) return listen.add(uri);
    return this.request(Methods.subscribe, { uri }, EmptyResult).then(() => undefined);
  }

  /** The reverse of {@link subscribe}. */
  unsubscribe(uri: string): Promise<void> {
    const listen = this.listenFilter();
    if (listen) return listen.remove(uri);
    return this.request(Methods.unsubscribe, { uri }, EmptyResult).then(() => undefined);
  }

  /** This connection's listen filter, when its revision asks for changes that way (see `eras/upstream.ts`). */
  private listenFilter(): ListenFilter | undefined {
    const client = this.client;
    if (!client) return undefined;
    if (this.listens?.client !== client) {
      void this.listens?.filter?.close(); // the old connection's stream must not be reopened on it
      const filter = upstreamListen(client, {
        timeoutMs: this.config.timeoutMs,
        listChanged: this.capabilities?.resources?.listChanged === true,
        toolsChanged: this.capabilities?.tools?.listChanged === true,
        promptsChanged: this.capabilities?.prompts?.listChanged === true,
        notify: (n) => {
          for (const l of this.notificationListeners) l(n);
        },
      });
      this.listens = { client, filter };
    }
    return this.listens.filter;
  }

  /** True when the upstream declared `capability` (e.g. "resources", "completions"). */
  supports(capability: keyof ServerCapabilities): boolean {
    return this.capabilities?.[capability] !== undefined;
  }

  /**
   * Sends one request. Throws ProxyError: UPSTREAM_UNAVAILABLE (not connected / connection lost),
   * UPSTREAM_TIMEOUT (no answer within `timeoutMs` of this call, queue wait included), CANCELLED
   * (the caller's signal), RESPONSE_TOO_LARGE, or UPSTREAM_ERROR with `details.rpcCode`.
   * `principal` is who the request is for: slots are shared fairly across principals (see {@link FairQueue}).
   */
  request<T>(
    method: string,
    params: Record<string, unknown> | undefined,
    schema: ResultSchema<T>,
    signal?: SignalSource,
    principal?: string,
    extras?: RequestExtras,
  ): Promise<T> {
    return this.exchange(method, params, schema, signal, principal, undefined, extras);
  }

  /**
   * Sends one long request (`tools/call`, `prompts/get`): as {@link request}, but bounded by
   * `options.timeoutMs` since the last progress, up to `options.maxTotalMs` in all (queue wait
   * included), with the upstream's progress handed to `options.onProgress`. The upstream gets a
   * progress token of the proxy's own; the caller's never leaves the proxy.
   */
  call<T>(method: string, params: Record<string, unknown>, schema: ResultSchema<T>, options: CallOptions, extras?: RequestExtras): Promise<T> {
    return this.exchange(method, params, schema, options.signal, options.principal, options, extras);
  }

  private async exchange<T>(
    method: string,
    params: Record<string, unknown> | undefined,
    schema: ResultSchema<T>,
    signal: SignalSource | undefined,
    principal: string | undefined,
    long: CallOptions | undefined,
    extras: RequestExtras | undefined,
  ): Promise<T> {
    const client = this.client;
    if (this.status !== 'ready' || client === undefined) {
      throw new ProxyError(ErrorCodes.UPSTREAM_UNAVAILABLE, `upstream ${this.id} is not connected`);
    }
    const timeoutMs = long ? long.timeoutMs : this.config.timeoutMs;
    const key = long?.key ?? (typeof params?.uri === 'string' ? params.uri : typeof params?.name === 'string' ? `${method}:${params.name}` : method);
    const extraMs = extras?.extraTimeoutMs ?? 0;
    // The deadline counts from now, queue wait included: a request that waited is given what is
    // left of it when it starts, and one still waiting at its deadline fails without being sent.
    const deadline = performance.now() + timeoutMs;
    const parent = activeContext(); // the downstream request's span, even when a queued send starts from another's turn
    // A plain request goes on the fast path, long calls (progress) included; bridged ones (input)
    // through the Client, as does one to a 2026-07-28 upstream whose codec is not at hand or whose era lacks the method.
    // To a 2026-07-28 upstream a request that only asks for `input_required` answers as they are (the bridge's) is plain too.
    const wire = this.wire;
    const fast =
      this.fastPath &&
      (client.getNegotiatedProtocolVersion() === MODERN
        ? (extras === undefined || (extras.extraTimeoutMs === undefined && extras.onSent === undefined)) && wire !== undefined && wire.sends(method)
        : extras === undefined);
    const send = () => {
      signal?.throwIfAborted(); // cancelled while it waited: never sent
      if (fast) {
        // A long call's first deadline counts from its send, as the Client's `timeout` does; its total from when it was made.
        const bounds = long && { timeoutMs, maxDeadline: deadline - timeoutMs + long.maxTotalMs, onProgress: long.onProgress };
        const sentBy = bounds ? Math.min(performance.now() + timeoutMs, bounds.maxDeadline) : deadline;
        return traceUpstream(parent, this.id, method, params, (sent) =>
          this.sendFast(client, method, sent, schema as ResultSchema<unknown>, sentBy, signal, bounds, wire, extras?.allowInputRequired === true),
        ) as Promise<T>;
      }
      const remaining = Math.max(1, Math.round(deadline - performance.now()));
      extras?.onSent?.(remaining);
      const options: Record<string, unknown> = { timeout: remaining + extraMs }; // the queue wait is never extended
      if (signal) options.signal = signalOf(signal);
      if (extras?.allowInputRequired === true) options.allowInputRequired = true;
      if (long) {
        options.timeout = timeoutMs + extraMs;
        options.maxTotalTimeout = Math.max(1, Math.round(long.maxTotalMs - (timeoutMs - remaining))) + extraMs;
        options.resetTimeoutOnProgress = true;
        options.onprogress = long.onProgress ?? (() => undefined); // resets the timeout even when nobody listens
      }
      return traceUpstream(parent, this.id, method, params, (sent) => client.request({ method, params: sent } as never, schema, options as never));
    };
    const metrics = this.options.metrics ?? noopMetrics;
    const started = metrics.enabled ? deadline - timeoutMs : 0;
    try {
      const result = await this.queue.run(key, send, deadline, this.queuedTimeout, principal);
      this.liveness?.heard();
      if (metrics.enabled) metrics.upstreamRequest(this.id, method, 'ok', performance.now() - started);
      return result;
    } catch (err) {
      if (!signal?.aborted && isConnectionLost(err) && this.client === client) {
        // A restarted HTTP server answers 404 for our old session; a stopped one fails the fetch.
        // Neither closes the transport, so close it: onclose marks us unavailable and reconnects.
        this.log.warn({ err: String(err) }, 'upstream connection lost');
        void client.close().catch(() => undefined);
      }
      const failure = this.translate(err, signal);
      if (failure.code === ErrorCodes.UPSTREAM_ERROR) this.liveness?.heard(); // it answered, with an error
      if (metrics.enabled) metrics.upstreamRequest(this.id, method, outcomeOfCode(failure.code), performance.now() - started);
      throw failure;
    }
  }

  /**
   * One request written straight to the transport with an id of our own, answered through the
   * pending map: no per-request timer (one deadline timer per upstream), no SDK context objects or
   * schema machinery beyond `schema` itself. Errors take the shapes the SDK Client gives them, so
   * `translate` reads them alike: a JSON-RPC error is a ProtocolError, a timeout an SdkError
   * (REQUEST_TIMEOUT, after `notifications/cancelled`), a lost connection CONNECTION_CLOSED.
   * With `wire` (a 2026-07-28 connection) the request and its cancellation are written, and its
   * answer and progress read, by the Client's own codec (see `eras/rev2026-upstream.ts`); over a
   * transport with a stream per request (HTTP) it is cancelled by aborting that stream, as the Client does.
   */
  private sendFast(
    client: Client,
    method: string,
    params: Record<string, unknown> | undefined,
    schema: ResultSchema<unknown>,
    deadline: number,
    signal: SignalSource | undefined,
    long: FastLong | undefined,
    wire: ModernUpstreamWire | undefined,
    allowInputRequired: boolean,
  ): Promise<unknown> {
    const transport = client.transport;
    if (!transport) return Promise.reject(new SdkError(SdkErrorCode.NotConnected, 'Not connected'));
    return new Promise((resolve, reject) => {
      const id = this.nextId--;
      const entry: Pending = {
        id,
        method,
        params: undefined,
        sentAt: 0,
        allowInputRequired,
        schema,
        deadline,
        offAbort: undefined,
        resolve,
        reject,
        long,
        wire,
        signal: undefined,
        budgetMs: 0,
        abort: undefined,
      };
      let message: JSONRPCMessage;
      if (wire) {
        // As the Client writes it: the envelope in `_meta`, a long call's progress token (its id) after it.
        entry.params = params;
        entry.sentAt = Date.now();
        entry.signal = signal;
        entry.budgetMs = Math.max(1, Math.round((long ? long.maxDeadline : deadline) - performance.now()));
        if (wire.perRequestStream) entry.abort = new AbortController();
        message = wire.request(id, method, params, long !== undefined);
      } else {
        // A long call carries a progress token of ours (its id, as the Client does), whoever listens: progress moves its deadline.
        if (long) params = withProgressToken(params, id);
        message = params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
      }
      this.pending.set(entry);
      if (signal) entry.offAbort = onAbort(signal, () => this.cancelPending(entry, signal.reason));
      if (deadline < this.sweepAt) this.armSweep(deadline);
      const sent = entry.abort ? transport.send(message, { requestSignal: entry.abort.signal }) : transport.send(message);
      sent.catch((err: unknown) => this.settle(entry, err));
    });
  }

  /** The options the Client's funnel would have held for a 2026-07-28 fast-path request (its input-required seam reads them). */
  private readonly sdkOptionsOf = (entry: Pending): SdkRequestOptions => {
    const options: SdkRequestOptions = { timeout: entry.budgetMs };
    if (entry.signal) options.signal = signalOf(entry.signal);
    const long = entry.long;
    if (long) {
      options.timeout = long.timeoutMs;
      options.maxTotalTimeout = entry.budgetMs;
      options.resetTimeoutOnProgress = true;
      options.onprogress = (long.onProgress ?? (() => undefined)) as unknown as SdkRequestOptions['onprogress'];
    }
    return options;
  };

  /** An answer (or an error standing in for one) to a fast-path request. */
  private onFastResponse(message: FastAnswer): void {
    const entry = this.pending.get(message.id);
    if (!entry) return this.log.debug({ id: message.id }, 'answer to no pending request');
    if (message.error !== undefined) {
      const { code, message: text, data } = message.error;
      return this.settle(entry, ProtocolError.fromError(code, text, data));
    }
    if (entry.wire) {
      // As the Client's 2026-07-28 funnel: decoded by its codec, checked, an `input_required` answer through its own seam.
      let value: unknown;
      try {
        value = entry.wire.decode(entry, message.result, entry.schema, this.sdkOptionsOf);
      } catch (err) {
        return this.settle(entry, err);
      }
      return this.settle(entry, undefined, value);
    }
    let result = message.result;
    // As the SDK's 2025-11-25 codec: a stray `resultType` is not part of the result.
    if (result !== null && typeof result === 'object' && !Array.isArray(result) && 'resultType' in result) {
      result = { ...(result as Record<string, unknown>) };
      delete (result as Record<string, unknown>).resultType;
    }
    const parsed = entry.schema.safeParse(result);
    if (parsed.success) this.settle(entry, undefined, parsed.data);
    else this.settle(entry, new SdkError(SdkErrorCode.InvalidResult, `Invalid result for ${entry.method}: ${parsed.error.message}`));
  }

  /** Progress of a long fast-path call: its deadline moves on (never past its total), and the caller hears it. */
  private onFastProgress(params: { progressToken: number } & Record<string, unknown>): void {
    const entry = this.pending.get(params.progressToken);
    if (!entry?.long) return this.log.debug({ token: params.progressToken }, 'progress of no pending call');
    // 2026-07-28: as the Client reads it (envelope keys lifted, checked by its codec), or dropped as it drops it.
    const progress = entry.wire ? entry.wire.progress(params) : withoutToken(params);
    if (progress === undefined) return this.log.debug({ token: params.progressToken }, 'invalid progress dropped');
    entry.deadline = Math.min(performance.now() + entry.long.timeoutMs, entry.long.maxDeadline);
    entry.long.onProgress?.(progress as unknown as UpstreamProgress);
  }

  private settle(entry: Pending, err: unknown, result?: unknown): void {
    if (!this.pending.delete(entry.id)) return;
    entry.offAbort?.();
    if (err === undefined) entry.resolve(result);
    else entry.reject(err);
  }

  /** A timed out or aborted fast-path request: the upstream is told (`notifications/cancelled`), the caller rejected. */
  private cancelPending(entry: Pending, reason: unknown): void {
    if (!this.pending.has(entry.id)) return;
    // 2026-07-28 over HTTP, as the Client: the request's own stream is aborted, no notice sent.
    if (entry.abort) entry.abort.abort();
    else {
      const notice = entry.wire
        ? entry.wire.cancelled(entry.id, String(reason))
        : { jsonrpc: '2.0', method: CANCELLED, params: { requestId: entry.id, reason: String(reason) } };
      this.client?.transport?.send(notice as JSONRPCMessage).catch((err: unknown) => this.log.debug({ err: String(err) }, 'failed to send cancellation'));
    }
    this.settle(entry, reason instanceof SdkError ? reason : new SdkError(SdkErrorCode.RequestTimeout, String(reason)));
  }

  private armSweep(at: number): void {
    clearTimeout(this.sweepTimer);
    this.sweepAt = at;
    this.sweepTimer = setTimeout(() => this.sweep(), Math.max(0, at - performance.now()));
    this.sweepTimer.unref();
  }

  /** Times out every pending request past its deadline, and re-arms for the earliest one left (at most `concurrency` to look at). */
  private sweep(): void {
    this.sweepTimer = undefined;
    this.sweepAt = Infinity;
    const now = performance.now();
    let next = Infinity;
    for (const entry of this.pending.values()) {
      if (entry.deadline <= now) {
        this.cancelPending(entry, new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out', { timeout: entry.long?.timeoutMs ?? this.config.timeoutMs }));
      } else if (entry.deadline < next) next = entry.deadline;
    }
    if (next < Infinity) this.armSweep(next);
  }

  /** Fails every fast-path request still waiting (the connection it was sent on is gone). */
  private failPending(err: unknown): void {
    clearTimeout(this.sweepTimer);
    this.sweepTimer = undefined;
    this.sweepAt = Infinity;
    for (const entry of this.pending.values()) this.settle(entry, err);
  }

  /** Subscribes to every notification this upstream sends. Returns the unsubscribe function. */
  onNotification(listener: (n: UpstreamNotification) => void): () => void {
    this.notificationListeners.add(listener);
    return () => this.notificationListeners.delete(listener);
  }

  /** Subscribes to status changes. Returns the unsubscribe function. */
  onStatus(listener: (s: UpstreamStatus) => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  /** Closes the session (stdio: stdin end, SIGTERM, SIGKILL by the SDK). Idempotent. */
  async close(): Promise<void> {
    if (this.status === 'closed') return;
    this.setStatus('closed');
    this.firstAttemptDone();
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.liveness?.close();
    this.liveness = undefined;
    void this.listens?.filter?.close();
    this.listens = undefined;
    const closing = [this.client, this.connectingClient, this.connectingTransport];
    this.client = undefined;
    this.wire = undefined;
    this.connectingClient = undefined;
    this.connectingTransport = undefined;
    this.queue.clear(new ProxyError(ErrorCodes.CLOSED, `upstream ${this.id} is closed`));
    this.failPending(new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed'));

    // eslint-disable-next-line @typescript-eslint/await-thenable -- each is a close promise or undefined, which Promise.all passes through
    await Promise.all(closing.map((c) => c?.close().catch((err: unknown) => this.log.debug({ err: String(err) }, 'close failed'))));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private attach(client: Client): void {
    this.client = client;
    this.wire = modernUpstreamWire(client);
    this.failure = undefined;
    this.capabilities = client.getServerCapabilities();
    const transport = client.transport;
    // One handler per client for every notification: the SDK keeps only one per method, so the
    // pool fans out to all interested parties instead of registering per downstream session.
    client.fallbackNotificationHandler = async (n) => {
      this.liveness?.heard();
      for (const l of this.notificationListeners) l({ method: n.method, params: n.params });
    };
    client.onerror = (err) => this.log.debug({ err: String(err) }, 'upstream transport error');
    client.onclose = () => {
      if (this.client !== client) return;
      this.client = undefined;
      this.wire = undefined;
      this.liveness?.close();
      this.liveness = undefined;
      this.failPending(new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed'));
      void this.listens?.filter?.close(); // the relay re-subscribes on the next connection
      this.listens = undefined;
      if (this.status === 'closed') return;
      this.failure = { reason: this.recycling ?? 'connection closed', stderr: stderrTailOf(transport) };
      this.recycling = undefined;
      this.log.warn(this.failure.stderr.length > 0 ? { stderr: this.failure.stderr } : {}, 'upstream connection closed');
      // A connection that stayed up for the longest backoff was healthy: start the backoff afresh.
      // One that died sooner keeps climbing, so a crash loop never respawns faster than the backoff.
      if (this.options.reconnect && Date.now() - this.readyAt >= this.options.reconnect.maxDelayMs) this.attempts = 0;
      this.setStatus('unavailable');
      this.scheduleReconnect();
    };
    this.generation++;
    this.readyAt = Date.now();
    this.setStatus('ready');
    this.watch(client);
    // A 2026-07-28 upstream tells of list changes only on a listen stream: hold one from the start.
    this.listenFilter()?.start();
  }

  /** Pings `client` while it is idle; a connection whose pings go unanswered is recycled like one that closed. */
  private watch(client: Client): void {
    const { pingIntervalMs, pingFailures, timeoutMs } = this.config;
    if (!(pingIntervalMs > 0)) return;
    this.liveness = new Liveness({
      intervalMs: pingIntervalMs,
      failures: pingFailures,
      timeoutMs,
      // Any answer, an error one too, is a sign of life; only silence counts against it.
      ping: (ms) =>
        client.ping({ timeout: ms }).then(
          () => undefined,
          (err: unknown) => {
            if (isSilence(err)) throw err;
          },
        ),
      onDead: (misses) => this.recycle(client, misses),
      ...(this.options.livenessClock ? { clock: this.options.livenessClock } : {}),
    });
    this.liveness.start();
  }

  /**
   * Takes a connection that stopped answering for dead: its child is killed at once (a stopped one
   * would sit out every grace period) or its HTTP session dropped; the close fails its requests in
   * flight, marks it unavailable and reconnects, as after a crash.
   */
  private recycle(client: Client, misses: number): void {
    if (this.client !== client) return;
    this.recycling = `ping: no answer to ${misses} consecutive pings`;
    this.log.warn({ misses }, 'upstream not answering pings: recycling it');
    (client.transport as { kill?: () => void } | undefined)?.kill?.();
    void client.close().catch(() => undefined);
  }

  private setStatus(status: UpstreamStatus): void {
    if (this.status === status) return;
    this.status = status;
    for (const l of this.statusListeners) l(status);
  }

  private translate(err: unknown, signal: SignalSource | undefined): ProxyError {
    if (err instanceof ProxyError) return err;
    if (signal?.aborted) return new ProxyError(ErrorCodes.CANCELLED, 'request cancelled', { cause: err });
    const rpcCode = rpcCodeOf(err);
    const data = (err as { data?: Record<string, unknown> } | null)?.data;
    if (rpcCode === JsonRpc.INTERNAL_ERROR && (data?.[MARK_TOO_LARGE] === true || data?.[MARK_TOO_DEEP] === true)) {
      const what = data[MARK_TOO_LARGE] === true ? 'Resource too large' : 'Resource nests too deeply';
      this.log.warn({ limit: data.limit }, `upstream answer refused: ${what.toLowerCase()}`);
      return new ProxyError(ErrorCodes.RESPONSE_TOO_LARGE, what, { details: { server: this.id, limit: data.limit } });
    }
    const details = { server: this.id, rpcCode, upstreamMessage: (err as Error | undefined)?.message };
    // SDK 2.x reports its own failures with string codes (SdkError), JSON-RPC errors with numbers.
    const sdkCode = (err as { code?: unknown } | null)?.code;
    if (sdkCode === 'REQUEST_TIMEOUT' || rpcCode === JsonRpc.REQUEST_TIMEOUT)
      return new ProxyError(ErrorCodes.UPSTREAM_TIMEOUT, `upstream ${this.id} timed out`, { details });
    if (
      sdkCode === 'CONNECTION_CLOSED' ||
      sdkCode === 'NOT_CONNECTED' ||
      rpcCode === JsonRpc.SERVER_ERROR ||
      this.status !== 'ready' ||
      isConnectionLost(err)
    ) {
      return new ProxyError(ErrorCodes.UPSTREAM_UNAVAILABLE, `upstream ${this.id} connection lost`, { details });
    }
    return new ProxyError(ErrorCodes.UPSTREAM_ERROR, `upstream ${this.id} failed`, { cause: err, details });
  }
}

/** The last stderr lines of a transport with a child process (see `ChildTransport.stderrTail`); else none. */
function stderrTailOf(transport: unknown): readonly string[] {
  const tail = (transport as { stderrTail?: unknown } | undefined)?.stderrTail;
  return Array.isArray(tail) ? (tail as string[]) : [];
}

/**
 * Transport failures of remote upstreams that mean the session is gone: the SDK's HTTP transports
 * throw them from send() without closing (Streamable HTTP 404 = session unknown to a restarted
 * server; SSE errors; fetch that cannot connect). Recognised by shape, so the HTTP client modules
 * stay lazily loaded.
 */
function isConnectionLost(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err instanceof TypeError && err.message === 'fetch failed') return true;
  if ((err.cause as { message?: unknown } | undefined)?.message === 'fetch failed') return true;
  // SDK 2.x: an HTTP failure carries the response status (404: our session is unknown to a restarted server).
  if ((err as { status?: unknown }).status === 404) return true;
  return err.message.startsWith('SSE error:');
}

const MODERN = Revisions.modern;
const CANCELLED = 'notifications/cancelled';

/** True when a ping got no answer at all (timed out, or the connection is gone), as opposed to an error answer. */
function isSilence(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'REQUEST_TIMEOUT' || code === 'CONNECTION_CLOSED' || code === 'NOT_CONNECTED' || rpcCodeOf(err) === JsonRpc.REQUEST_TIMEOUT;
}

/** A failed upstream request's outcome, for metrics. */
function outcomeOfCode(code: string): RequestOutcome {
  if (code === ErrorCodes.UPSTREAM_TIMEOUT) return 'timeout';
  if (code === ErrorCodes.CANCELLED) return 'cancelled';
  return 'error';
}

/**
 * An attempt's error as one line: its message, plus the HTTP status when the SDK kept it only in the
 * error's data (`Error POSTing to endpoint: ` with an empty body says nothing by itself).
 */
function describeFailure(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const status = (err as { status?: unknown }).status;
  if (typeof status !== 'number' || err.message.includes(String(status))) return err.message;
  const statusText = (err as { statusText?: unknown }).statusText;
  return `${err.message.replace(/:\s*$/, '')} (HTTP ${status}${typeof statusText === 'string' && statusText ? ` ${statusText}` : ''})`;
}

/** Progress params without their token, as the Client hands them to `onprogress`. */
function withoutToken(params: { progressToken: number } & Record<string, unknown>): Record<string, unknown> {
  const { progressToken: _token, ...progress } = params;
  return progress;
}

/** A copy of `params` whose `_meta` (a copy too) carries `progressToken` (see `withFields`). */
function withProgressToken(params: Record<string, unknown> | undefined, progressToken: number): Record<string, unknown> {
  return withFields(params, { _meta: withFields(params?._meta as Record<string, unknown> | undefined, { progressToken }) });
}
