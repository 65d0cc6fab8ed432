// ProxyError with stable string codes, and the one translation of errors into JSON-RPC errors.

/** Stable error codes. Callers match on `code`, never on messages. */
export const ErrorCodes = {
  /** The configuration file is missing, unreadable or invalid (CLI exit code 2). */
  CONFIG_INVALID: 'CONFIG_INVALID',
  /** The resource is unknown, un-namespaced, on an unavailable upstream, or denied. */
  RESOURCE_NOT_FOUND: 'RESOURCE_NOT_FOUND',
  /** The upstream is not connected (failed to start, or went away). */
  UPSTREAM_UNAVAILABLE: 'UPSTREAM_UNAVAILABLE',
  /** The upstream did not answer within its `timeoutMs`. */
  UPSTREAM_TIMEOUT: 'UPSTREAM_TIMEOUT',
  /** The upstream answered with an error other than not-found. */
  UPSTREAM_ERROR: 'UPSTREAM_ERROR',
  /** The request was cancelled by the caller. */
  CANCELLED: 'CANCELLED',
  /** A list cursor was forged, corrupted or is from another process. */
  INVALID_CURSOR: 'INVALID_CURSOR',
  /** The request's parameters are not acceptable. */
  INVALID_PARAMS: 'INVALID_PARAMS',
  /** The unit was closed (an upstream, the audit log, the proxy itself). */
  CLOSED: 'CLOSED',
  /** A rate limit (`limits[].readsPerMinute`, `completionsPerMinute`) refused the request; `details.retryAfterMs` says when to retry. */
  RATE_LIMITED: 'RATE_LIMITED',
  /** A per-session bound was reached (e.g. `subscriptions.maxPerSession`); `details.limit` says which. */
  LIMIT_EXCEEDED: 'LIMIT_EXCEEDED',
  /** The upstream's answer exceeded its `maxResponseBytes` (or nested deeper than `wire.maxDepth`). */
  RESPONSE_TOO_LARGE: 'RESPONSE_TOO_LARGE',
  /** No tool or prompt by that name (unknown, on an unavailable upstream, or denied); `details.kind` and `details.name` say which. */
  UNKNOWN_ITEM: 'UNKNOWN_ITEM',
  /**
   * An upstream's request for user input (elicitation, sampling, roots) was declined by the gateway:
   * the calling client lacks the capability, the era does not carry it, or no calling session owns
   * it; `details.method` and `details.reason` say which.
   */
  INPUT_DECLINED: 'INPUT_DECLINED',
  /** Redis (the `redis` block) is unreachable or did not answer within `redis.timeoutMs`: the replica falls back to its own state. */
  SHARED_STATE_UNAVAILABLE: 'SHARED_STATE_UNAVAILABLE',
  /** A 2026-07-28 request whose upstream needs a client capability the request did not declare (`details.requiredCapabilities`). */
  MISSING_CAPABILITY: 'MISSING_CAPABILITY',
} as const;

/** `error.data` key marking an upstream answer the proxy refused for its size (set by the proxy, never relayed as such). */
export const MARK_TOO_LARGE = 'mcp-federate/tooLarge';
/** `error.data` key marking an upstream answer the proxy refused for its nesting depth. */
export const MARK_TOO_DEEP = 'mcp-federate/tooDeep';

/** One of {@link ErrorCodes}. */
export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/**
 * Codes of outcomes a client can cause at will (a missing or denied item, a rate limit): their
 * errors carry no stack trace. Capturing one costs about 7 µs on Node 20 at the read path's async
 * depth, far more than the rest of such an answer, and nothing reads it.
 */
const EXPECTED: ReadonlySet<string> = new Set<ErrorCode>([ErrorCodes.RESOURCE_NOT_FOUND, ErrorCodes.UNKNOWN_ITEM, ErrorCodes.RATE_LIMITED]);

/** Turns stack capture off until {@link stackOn} gives back the limit it returns (around one `super()` call). */
function stackOff(): number {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  return limit;
}

function stackOn(limit: number): void {
  Error.stackTraceLimit = limit;
}

/** The one error type the proxy throws. `code` is stable; `message` is for humans. An expected outcome's error has no stack trace. */
export class ProxyError extends Error {
  override readonly name = 'ProxyError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown; details?: Record<string, unknown> },
  ) {
    const limit = EXPECTED.has(code) ? stackOff() : undefined;
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    if (limit !== undefined) stackOn(limit);
    this.details = options?.details;
  }
  /** Extra machine-readable facts for logs (never sent downstream). */
  readonly details: Record<string, unknown> | undefined;
}

/** A request refused by a rate limit; the client may retry after `retryAfterMs`. */
export function rateLimited(retryAfterMs: number): ProxyError {
  return new ProxyError(ErrorCodes.RATE_LIMITED, 'Rate limit exceeded', { details: { retryAfterMs } });
}

/**
 * The one "unknown tool" / "unknown prompt" error: the same for a name no upstream has and for one
 * policy denies. Answered `-32602 Unknown tool: <name>` (the spec's error for an unknown tool).
 */
export function unknownItem(kind: 'tool' | 'prompt', name: string): ProxyError {
  return new ProxyError(ErrorCodes.UNKNOWN_ITEM, `Unknown ${kind}`, { details: { kind, name } });
}

/** JSON-RPC error codes: the only place in `src/` (with `protocol.ts`) that spells one as a number. */
export const JsonRpc = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  RESOURCE_NOT_FOUND: -32002,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  REQUEST_TIMEOUT: -32001,
  /** What the SDK's HTTP transports answer for an unknown or closed session (the number of {@link JsonRpc.REQUEST_TIMEOUT}). */
  SESSION_NOT_FOUND: -32001,
  /** A missing or refused bearer token at the HTTP edge (401; the number of {@link JsonRpc.REQUEST_TIMEOUT}). */
  UNAUTHORIZED: -32001,
  /**
   * Implementation-defined server error: `Rate limit exceeded` (with `data.retryAfterMs`), HTTP
   * refusals (method, media type, session bounds), and an upstream's connection closed.
   */
  SERVER_ERROR: -32000,
  /** 2026-07-28: the request needs a client capability it did not declare (`data.requiredCapabilities`). */
  MISSING_CLIENT_CAPABILITY: -32021,
} as const;

/** The error body the HTTP edge answers outside any request (id `null`), in the SDK transports' key order. */
export function httpErrorBody(code: number, message: string): { jsonrpc: '2.0'; error: { code: number; message: string }; id: null } {
  return { jsonrpc: '2.0', error: { code, message }, id: null };
}

/** A JSON-RPC error answer to `id`, with `data` only when given. */
export function errorAnswer<Id>(
  id: Id,
  code: number,
  message: string,
  data?: unknown,
): { jsonrpc: '2.0'; id: Id; error: { code: number; message: string; data?: unknown } } {
  return { jsonrpc: '2.0', id, error: { code, message, ...(data === undefined ? {} : { data }) } };
}

/** {@link errorAnswer} as JSON text whose id is the raw text `idText` (`null`, a JSON string, or a number as sent). */
export function errorText(idText: string, code: number, message: string, data?: unknown): string {
  return `{"jsonrpc":"2.0","id":${idText},"error":${JSON.stringify({ code, message, ...(data === undefined ? {} : { data }) })}}`;
}

/**
 * An error the SDK serialises as-is: numeric `code`, our own `message`, optional `data`.
 * Deliberately not an `McpError`, whose constructor prefixes "MCP error <code>: " to the message.
 * It is an answer, never logged with a stack: it captures none.
 */
export class JsonRpcError extends Error {
  override readonly name = 'JsonRpcError';
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    const limit = stackOff();
    super(message);
    stackOn(limit);
  }
}

/** Context the facade knows about the failed request, used to build the client-facing error. */
export interface ErrorContext {
  /** The URI exactly as the client sent it (for not-found errors). */
  uri?: string;
  /** The code of not-found in the caller's era (`eras/`): `-32002` (the default) or `-32602`. */
  notFoundCode?: number;
}

/**
 * Translates any error thrown below the facade into the JSON-RPC error the client sees.
 * Not-found, unavailable and denied all produce the same not-found, so they are indistinguishable.
 */
export function toJsonRpcError(err: unknown, ctx: ErrorContext = {}): JsonRpcError {
  if (err instanceof JsonRpcError) return err;
  const code = err instanceof ProxyError ? err.code : undefined;
  switch (code) {
    case ErrorCodes.RESOURCE_NOT_FOUND:
    case ErrorCodes.UPSTREAM_UNAVAILABLE:
      if (ctx.uri !== undefined) return notFound(ctx.uri, ctx.notFoundCode);
      return new JsonRpcError(JsonRpc.INTERNAL_ERROR, 'Upstream unavailable');
    case ErrorCodes.INVALID_CURSOR:
      return new JsonRpcError(JsonRpc.INVALID_PARAMS, 'Invalid cursor');
    case ErrorCodes.INVALID_PARAMS:
      return invalidParams((err as ProxyError).message);
    case ErrorCodes.UPSTREAM_TIMEOUT:
      return new JsonRpcError(JsonRpc.REQUEST_TIMEOUT, 'Upstream request timed out');
    case ErrorCodes.CANCELLED:
      return new JsonRpcError(JsonRpc.REQUEST_TIMEOUT, 'Request cancelled');
    case ErrorCodes.LIMIT_EXCEEDED: {
      const details = (err as ProxyError).details;
      const retry = typeof details?.retryAfterMs === 'number' ? { retryAfterMs: details.retryAfterMs } : {};
      return new JsonRpcError(JsonRpc.INTERNAL_ERROR, (err as ProxyError).message, { limit: details?.limit, ...retry });
    }
    case ErrorCodes.RATE_LIMITED:
      return new JsonRpcError(JsonRpc.SERVER_ERROR, 'Rate limit exceeded', { retryAfterMs: (err as ProxyError).details?.retryAfterMs });
    case ErrorCodes.UNKNOWN_ITEM: {
      const details = (err as ProxyError).details;
      return invalidParams(`Unknown ${details?.kind === 'prompt' ? 'prompt' : 'tool'}: ${typeof details?.name === 'string' ? details.name : ''}`);
    }
    case ErrorCodes.RESPONSE_TOO_LARGE:
      return new JsonRpcError(JsonRpc.INTERNAL_ERROR, (err as ProxyError).message, { limit: (err as ProxyError).details?.limit });
    case ErrorCodes.INPUT_DECLINED:
      return inputDeclined((err as ProxyError).message, (err as ProxyError).details);
    case ErrorCodes.MISSING_CAPABILITY:
      return new JsonRpcError(JsonRpc.MISSING_CLIENT_CAPABILITY, (err as ProxyError).message, {
        requiredCapabilities: (err as ProxyError).details?.requiredCapabilities,
      });
    default:
      return new JsonRpcError(JsonRpc.INTERNAL_ERROR, 'Internal error');
  }
}

/**
 * The answer to a declined request for user input, to a client or to the upstream that asked:
 * `-32600` with a one-line reason, `data: { method, reason }`.
 */
export function inputDeclined(message: string, details?: Record<string, unknown>): JsonRpcError {
  return new JsonRpcError(JsonRpc.INVALID_REQUEST, message, { method: details?.method, reason: details?.reason });
}

/** `-32602` with `message` as is (one line naming the field, e.g. `Invalid params: uri: …`). */
export function invalidParams(message: string): JsonRpcError {
  return new JsonRpcError(JsonRpc.INVALID_PARAMS, message);
}

/**
 * The single shape of "Resource not found": the client's URI in `data`, with `code` the caller's
 * era spells it with (`-32002` by default; see `eras/`). Built once, sent as built.
 */
export function notFound(uri: string, code: number = JsonRpc.RESOURCE_NOT_FOUND): JsonRpcError {
  return new JsonRpcError(code, 'Resource not found', { uri });
}

/** Reads the numeric JSON-RPC code of an error from an upstream (an `McpError` or similar). */
export function rpcCodeOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}
