// OpenTelemetry spans through @opentelemetry/api only: one per downstream request, a child per upstream request, W3C context from `_meta` and headers.
import {
  context,
  isSpanContextValid,
  propagation,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { withFields } from '../copy.js';
import { VERSION } from '../version.js';

/** The global tracer provider last seen, and the gateway's tracer from it. */
let current: { provider: TracerProvider; tracer: Tracer } | undefined;

/**
 * The gateway's tracer, from the provider registered now (one replaced or registered late, as after
 * `trace.disable()`, is seen). Without an SDK it is the API's no-op: every span is non-recording.
 */
function tracerNow(): Tracer {
  const provider = trace.getTracerProvider();
  if (current?.provider !== provider) current = { provider, tracer: provider.getTracer('mcp-federate', VERSION) };
  return current.tracer;
}

/** The API's no-op provider: what the global proxy provider delegates to while no SDK is registered. */
// eslint-disable-next-line @typescript-eslint/no-deprecated -- API 1.x (pinned ~1.9) has no other way to tell whether an SDK is registered
const NO_SDK = new ProxyTracerProvider().getDelegate();

/**
 * Whether an OpenTelemetry SDK is registered (asked per request, so one registered late is seen).
 * Without one, requests skip tracing entirely: no span object, no context lookup, no closure.
 *
 * @example tracing() ? traceDownstream(request, run) : run()
 */
export function tracing(): boolean {
  const provider = trace.getTracerProvider();
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- see NO_SDK
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NO_SDK;
}

/** W3C trace context keys, in `params._meta` as in HTTP headers (MCP's `_meta` trace keys). */
const TRACE_KEYS = ['traceparent', 'tracestate', 'baggage'] as const;

/** What a downstream request is, for its span. */
export interface DownstreamRequest {
  /** `resources/read`, `tools/call`, … */
  method: string;
  /** The request's params as received (`_meta`, `uri`, `name` are read). */
  params: unknown;
  /** The JSON-RPC id. */
  id: string | number | undefined;
  /** The MCP session (2025 session id, or the caller's per-request id); asked only when the span records. */
  session: () => string | undefined;
  /** The revision the client speaks. */
  protocolVersion: string;
}

/** The error's stable code, for `error.type` (a `ProxyError` or JSON-RPC error code). */
function errorType(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' || typeof code === 'number' ? String(code) : 'error';
}

/** `params._meta` when it carries trace context. */
function traceMeta(params: unknown): Record<string, unknown> | undefined {
  const meta = (params as { _meta?: unknown } | null | undefined)?._meta;
  if (typeof meta !== 'object' || meta === null) return undefined;
  return TRACE_KEYS.some((k) => typeof (meta as Record<string, unknown>)[k] === 'string') ? (meta as Record<string, unknown>) : undefined;
}

/**
 * The context a request continues: W3C trace context from HTTP headers, when a tracer is in force
 * (see {@link traceDownstream}, which then prefers the request's own `_meta`).
 *
 * @example context.with(fromHeaders(req.headers), () => serve(req, res))
 */
export function fromHeaders(headers: Record<string, string | string[] | undefined>): Context {
  return propagation.extract(context.active(), headers);
}

/** Runs `fn` in `ctx` (see {@link fromHeaders}). */
export function within<T>(ctx: Context, fn: () => T): T {
  return context.with(ctx, fn);
}

/**
 * Runs one downstream request in a SERVER span named for its method (`tools/call <tool>` for tools),
 * continuing the client's trace from `params._meta` (or the HTTP headers' context, already active).
 * `mcp.resource.uri` is set only once the request succeeded: a denied URI fails as not found, so it
 * never reaches a span.
 */
export function traceDownstream<T>(request: DownstreamRequest, run: () => Promise<T>): Promise<T> {
  const meta = traceMeta(request.params);
  const parent = meta ? propagation.extract(context.active(), meta) : context.active();
  const tool = request.method === 'tools/call' ? (request.params as { name?: unknown } | null)?.name : undefined;
  const span = tracerNow().startSpan(typeof tool === 'string' ? `${request.method} ${tool}` : request.method, { kind: SpanKind.SERVER }, parent);
  // Not sampled: nothing to record, but the span still goes in the context, so that its upstream
  // requests follow the same decision and pass the trace on as unsampled (never start traces of their own).
  if (!span.isRecording()) return context.with(trace.setSpan(parent, span), run);
  span.setAttribute('mcp.method.name', request.method);
  span.setAttribute('mcp.protocol.version', request.protocolVersion);
  const session = request.session();
  if (session !== undefined) span.setAttribute('mcp.session.id', session);
  if (request.id !== undefined) span.setAttribute('jsonrpc.request.id', String(request.id));
  if (typeof tool === 'string') span.setAttribute('gen_ai.tool.name', tool);
  return ended(
    span,
    settle(() => context.with(trace.setSpan(parent, span), run)),
    () => {
      const uri = (request.params as { uri?: unknown } | null)?.uri;
      if (typeof uri === 'string') span.setAttribute('mcp.resource.uri', uri);
    },
  );
}

/** The context in force now: taken when an upstream request is made, so a queued one keeps its parent. */
export function activeContext(): Context {
  return tracing() ? context.active() : ROOT_CONTEXT;
}

/**
 * Runs one upstream request in a CLIENT span, child of the span active in `parent` (the downstream
 * request's), sending the params with the span's context in `_meta` (traceparent, tracestate,
 * baggage). A span the sampler left out records nothing, but its trace still goes in `_meta`,
 * marked unsampled, so the upstream follows the same decision.
 */
export function traceUpstream<T>(
  parent: Context,
  server: string,
  method: string,
  params: Record<string, unknown> | undefined,
  send: (params: Record<string, unknown> | undefined) => Promise<T>,
): Promise<T> {
  if (parent === ROOT_CONTEXT && !tracing()) return send(params);
  const span = tracerNow().startSpan(method, { kind: SpanKind.CLIENT }, parent);
  if (!span.isRecording()) {
    // Not sampled: no span to record, but the trace and its decision still reach the upstream (W3C flags 00).
    return isSpanContextValid(span.spanContext()) ? send(carrying(params, trace.setSpan(parent, span))) : send(params);
  }
  span.setAttribute('mcp.method.name', method);
  span.setAttribute('mcp_federate.server', server);
  if (typeof params?.uri === 'string') span.setAttribute('mcp.resource.uri', params.uri); // sent only once allowed
  if (method === 'tools/call' && typeof params?.name === 'string') span.setAttribute('gen_ai.tool.name', params.name);
  const active = trace.setSpan(parent, span);
  const sent = carrying(params, active);
  return ended(
    span,
    settle(() => context.with(active, () => send(sent))),
  );
}

/** A copy of `params` whose `_meta` (a copy too) carries the trace context of `ctx` (traceparent, tracestate, baggage); see `withFields`. */
function carrying(params: Record<string, unknown> | undefined, ctx: Context): Record<string, unknown> {
  const own = params?._meta as Record<string, unknown> | undefined;
  const meta: Record<string, unknown> = withFields(own, {});
  propagation.inject(ctx, meta);
  return withFields(params, { _meta: meta });
}

/** `run()`, with a synchronous throw turned into a rejection. */
function settle<T>(run: () => Promise<T>): Promise<T> {
  try {
    return run();
  } catch (err) {
    return Promise.reject(err);
  }
}

/** Ends `span` when `work` settles: OK (after `onOk`), or ERROR with `error.type`. */
function ended<T>(span: Span, work: Promise<T>, onOk?: () => void): Promise<T> {
  return work.then(
    (result) => {
      onOk?.();
      span.end();
      return result;
    },
    (err: unknown) => {
      span.setAttribute('error.type', errorType(err));
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      throw err;
    },
  );
}
