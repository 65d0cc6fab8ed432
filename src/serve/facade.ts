// One SDK low-level Server per downstream session: capabilities, handlers, and the error boundary.
import { Server, type AuthInfo, type BaseContext, type ServerContext, type ServerCapabilities, type Transport } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ErrorCodes, invalidParams, ProxyError, toJsonRpcError, type ErrorContext } from '../errors.js';
import type { Logger } from '../logger.js';
import type { CompleteParams } from '../federation/resources.js';
import type { AccessGate } from '../access/gate.js';
import type { Caller } from '../caller.js';
import type { Session } from '../federation/sessions.js';
import { restoreLegacyNotFound } from '../eras/rev2025.js';
import { stripNotFoundMark, withCacheFields } from '../eras/rev2026.js';
import { installDispatch } from '../wire/dispatch.js';
import { callerOf } from './request-caller.js';

import { LEGACY_REVISION, MODERN_REVISION, type Era } from '../eras/claim.js';
import { traceDownstream } from '../observe/tracing.js';

export type { Era };

/** What the facade needs from the composition root. */
export interface FacadeOptions {
  /** The one decision point every operation goes through (policy, rate limits, audit). */
  gate: AccessGate;
  /**
   * Who calls through this Server: every handler acts for this caller, unless its request carries
   * its own (an HTTP request's `authInfo` made by `authInfoFor`: identity is per request there).
   */
  caller: Caller;
  /** This downstream session, for per-session operations (subscriptions). */
  session: Session;
  logger: Logger;
  serverInfo: { name: string; version: string };
  /** The era this instance serves (an SDK entry pins one per connection). Default: `legacy`. */
  era?: Era;
}

/** The request context handlers receive (the signal, and the request's own caller over HTTP). */
type Ctx = { mcpReq: { signal: AbortSignal; id?: string | number }; http?: { authInfo?: AuthInfo } };

const ListParams = z.looseObject({ cursor: z.string().optional() });
const UriParams = z.looseObject({ uri: z.string() });
const CompleteParamsSchema = z.looseObject({
  ref: z.union([z.looseObject({ type: z.literal('ref/resource'), uri: z.string() }), z.looseObject({ type: z.literal('ref/prompt'), name: z.string() })]),
  argument: z.looseObject({ name: z.string(), value: z.string() }),
  context: z.looseObject({ arguments: z.record(z.string(), z.string()).optional() }).optional(),
});

/** Capabilities the facade declares. */
export const FACADE_CAPABILITIES: ServerCapabilities = {
  resources: { subscribe: true, listChanged: true },
  completions: {},
};

/**
 * The SDK Server, minus per-request conveniences the facade never offers. SDK 2.x builds every
 * handler's context by copying the base context and adding `log`, `elicitInput` and
 * `requestSampling` closures (~4 us and three allocations per request, a twentieth of a relayed
 * read). The facade's handlers use only `mcpReq.signal`, and it declares no logging, elicitation
 * or sampling, so the base context is handed over as it is.
 */
class FacadeServer extends Server {
  constructor(
    info: { name: string; version: string },
    private readonly era: Era,
  ) {
    super(info, { capabilities: FACADE_CAPABILITIES });
  }

  protected override buildContext(ctx: BaseContext): ServerContext {
    return ctx as ServerContext;
  }

  /**
   * Connects, then puts the era's encoding of not-found on the way out (`-32002` for 2025, the
   * marker stripped from 2026's `-32602`) and the envelope-checked dispatch on the way in.
   */
  override async connect(transport: Transport): Promise<void> {
    await super.connect(transport);
    if (this.era === 'legacy') restoreLegacyNotFound(transport as never);
    else stripNotFoundMark(transport as never);
    installDispatch(this, transport, 'server');
  }
}

/**
 * Builds the Server for one downstream session. Handlers are thin: they call the shared
 * {@link FederatedResources} and translate errors in exactly one place ({@link toJsonRpcError}).
 */
export function createFacadeServer(options: FacadeOptions): Server {
  const { gate, caller, session, logger } = options;
  const era = options.era ?? 'legacy';
  const server: Server = new FacadeServer(options.serverInfo, era);
  // 2026 answers carry the proxy's cache hint as fields; 2025 ones never do.
  const cacheable = era === 'modern' ? withCacheFields : <T>(result: T): T => result;
  const protocolVersion = era === 'modern' ? MODERN_REVISION : LEGACY_REVISION;

  /** The caller of one request: its own over HTTP, else the Server's. */
  const who = (ctx: Ctx): Caller => callerOf(ctx.http?.authInfo) ?? caller;
  const boundary = async <T>(method: string, ctx: ErrorContext, by: Caller, fn: (caller: Caller) => Promise<T>): Promise<T> => {
    try {
      return await fn(by);
    } catch (err) {
      logFailure(logger, method, err, by);
      throw toJsonRpcError(err, ctx);
    }
  };

  // Params are checked here, by light schemas, not by the SDK (whose failures read `Invalid params
  // for <method>: …`): every params failure is then one -32602 format, and no request pays for the
  // SDK's full spec-schema parse.
  const handle = <P>(method: string, schema: z.ZodType<P>, fn: (params: P, ctx: Ctx) => Promise<Record<string, unknown>>) =>
    server.setRequestHandler(method, { params: z.unknown() }, (raw, ctx) =>
      traceDownstream({ method, params: raw, id: ctx.mcpReq.id, session: () => who(ctx).session, protocolVersion }, () => fn(parseParams(schema, raw), ctx)),
    );
  const list = (kind: 'resources' | 'templates', method: string) =>
    handle(method, ListParams, (params, ctx) =>
      boundary(method, {}, who(ctx), async (caller) => cacheable(await gate.list(caller, kind, params.cursor, ctx.mcpReq.signal))),
    );
  list('resources', 'resources/list');
  list('templates', 'resources/templates/list');
  handle('resources/read', UriParams, (params, ctx) =>
    boundary('resources/read', { uri: params.uri }, who(ctx), async (caller) => cacheable(await gate.read(caller, params.uri, ctx.mcpReq.signal))),
  );
  handle('resources/subscribe', UriParams, (params, ctx) =>
    boundary('resources/subscribe', { uri: params.uri }, who(ctx), async (caller) => {
      await gate.subscribe(caller, session, params.uri);
      return {};
    }),
  );
  handle('resources/unsubscribe', UriParams, (params, ctx) =>
    boundary('resources/unsubscribe', { uri: params.uri }, who(ctx), async (caller) => {
      await gate.unsubscribe(caller, session, params.uri);
      return {};
    }),
  );
  handle('completion/complete', CompleteParamsSchema, (params, ctx) =>
    boundary('completion/complete', { uri: (params.ref as { uri?: string }).uri ?? '' }, who(ctx), (caller) =>
      gate.complete(caller, params as CompleteParams, ctx.mcpReq.signal),
    ),
  );
  answerInvalidParams(server);
  return server;
}

type RequestHandler = (request: unknown, extra: unknown) => Promise<unknown>;

/**
 * Makes a params failure of the handlers the SDK registers itself (`initialize`) the same one-line
 * `-32602 Invalid params: <field>: <problem>` as ours (see `parseParams`): SDK 2.x answers them with
 * `-32603` and the zod issue dump as the message. Wraps every registered handler; call after the
 * last `setRequestHandler`. Throws when the SDK's handler map is not where it was (a test pins it).
 */
export function answerInvalidParams(server: Server): void {
  const handlers = (server as unknown as { _requestHandlers?: unknown })._requestHandlers;
  if (!(handlers instanceof Map)) throw new Error('the SDK Server has no _requestHandlers map');
  const translate = (err: unknown): unknown => {
    const issues = specSchemaIssues(err);
    return issues ? invalidParams(invalidParamsMessage(issues)) : err;
  };
  const rethrow = (err: unknown): never => {
    throw translate(err);
  };
  for (const [method, handler] of handlers as Map<string, RequestHandler>) {
    // Not an async wrapper: one `.catch` is the only cost on the hot path. Params are parsed (and
    // may throw) synchronously inside the SDK's own wrapper.
    handlers.set(method, (request: unknown, extra: unknown) => {
      try {
        return handler(request, extra).catch(rethrow);
      } catch (err) {
        return Promise.reject(translate(err));
      }
    });
  }
}

interface Issue {
  path: PropertyKey[];
  message: string;
}

/** `raw` checked by `schema`; a failure is `-32602` with one line naming the field. */
function parseParams<P>(schema: z.ZodType<P>, raw: unknown): P {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw invalidParams(invalidParamsMessage(parsed.error.issues));
  return parsed.data;
}

/**
 * A spec-schema failure of a handler the SDK registered itself (`initialize`): SDK 2.x throws a plain
 * `Error` whose message is the zod issue list as JSON. Returns the issues, or undefined.
 */
function specSchemaIssues(err: unknown): Issue[] | undefined {
  if (!(err instanceof Error) || err.constructor !== Error || !err.message.startsWith('[')) return undefined;
  try {
    const issues = JSON.parse(err.message) as unknown;
    return Array.isArray(issues) && issues.every((i) => Array.isArray((i as Issue)?.path) && typeof (i as Issue)?.message === 'string')
      ? (issues as Issue[])
      : undefined;
  } catch {
    return undefined;
  }
}

/** `Invalid params: uri: expected string, received number`: the first issue, one line, bounded. */
export function invalidParamsMessage(issues: readonly Issue[]): string {
  const issue = issues[0];
  if (!issue) return 'Invalid params';
  const path = issue.path[0] === 'params' && issue.path.length > 1 ? issue.path.slice(1) : issue.path;
  const field = path
    .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
    .join('.')
    .replace(/\.\[/g, '[');
  const what = issue.message.replace(/^Invalid input: /, '');
  return oneLine(`Invalid params: ${field ? `${field}: ` : ''}${what}`);
}

/** Control characters folded to spaces, at most 160 characters. */
function oneLine(text: string): string {
  const line = text.replace(/[\u0000-\u001f\u2028\u2029]+/g, ' ');
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
}

/** Expected outcomes (not found, bad cursor, cancel) log at debug; upstream failures at warn. */
function logFailure(logger: Logger, method: string, err: unknown, caller: Caller): void {
  const code = err instanceof ProxyError ? err.code : undefined;
  const quiet =
    code === ErrorCodes.RESOURCE_NOT_FOUND ||
    code === ErrorCodes.INVALID_CURSOR ||
    code === ErrorCodes.INVALID_PARAMS ||
    code === ErrorCodes.LIMIT_EXCEEDED ||
    code === ErrorCodes.CANCELLED;
  const record = {
    method,
    principal: caller.principal,
    session: caller.session,
    code,
    details: err instanceof ProxyError ? err.details : undefined,
    err: code ? undefined : String(err),
  };
  if (quiet) logger.debug(record, 'request failed');
  else logger.warn(record, 'request failed');
}
