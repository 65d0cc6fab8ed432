// One SDK low-level Server per downstream session: capabilities, handlers, and the error boundary.
import {
  Server,
  type AuthInfo,
  type BaseContext,
  type JSONRPCRequest,
  type Result,
  type ServerContext,
  type ServerCapabilities,
  type Transport,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { invalidParams, type ErrorContext } from '../errors.js';
import type { Logger } from '../logger.js';
import type { CompleteParams } from '../federation/resources.js';
import type { AccessGate } from '../access/gate.js';
import type { Caller } from '../caller.js';
import type { Session } from '../federation/sessions.js';
import { edgeOf } from '../eras/edges.js';
import type { EraEdge, Era } from '../eras/era.js';
import { installDispatch } from '../wire/dispatch.js';
import { downstreamOf, type InputBridge } from '../eras/input-bridge.js';
import { callerLogMeta } from '../eras/log-level.js';
import type { CallRelay } from '../federation/relay.js';
import type { CallContext } from '../federation/calls-in-flight.js';
import { callerOf } from './request-caller.js';
import { failureAnswer } from './request-failure.js';
import { relayedCall } from './relayed-call.js';

import { traceDownstream, tracing } from '../observe/tracing.js';
import { MAX_ITEM_NAME } from '../protocol.js';
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
  /** Which of tools and prompts this session is offered (some upstream may have them). Default: neither. */
  offers?: Offers;
  /** Relays upstreams' requests for user input to this session's caller. Default: none (the upstream is refused). */
  bridge?: InputBridge;
}

/** The kinds besides resources a session is offered (declared as capabilities, handled). */
export interface Offers {
  tools: boolean;
  prompts: boolean;
}

/** The request context handlers receive (the signal, progress token, retry fields, and the request's own caller over HTTP). */
type Ctx = Pick<BaseContext, 'mcpReq'> & { http?: { authInfo?: AuthInfo } };

/** What the SDK is told to check of every request's params (nothing: the light schemas below do), one immutable schema shared by every session's handlers. */
const ANY_PARAMS = { params: z.unknown() };
const ListParams = z.looseObject({ cursor: z.string().optional() });
const UriParams = z.looseObject({ uri: z.string() });
/** A tool or prompt name as a client may send it (names longer than this are unknown anyway). */
const ItemName = z.string().max(MAX_ITEM_NAME);
const CallParams = z.looseObject({ name: ItemName, arguments: z.record(z.string(), z.unknown()).optional() });
const GetParams = z.looseObject({ name: ItemName, arguments: z.record(z.string(), z.string()).optional() });
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
  constructor(info: { name: string; version: string }, edge: EraEdge, offers: Offers) {
    super(info, { capabilities: capabilitiesFor(offers) });
    edge.prepare(this);
  }

  protected override buildContext(ctx: BaseContext): ServerContext {
    return ctx as ServerContext;
  }

  /**
   * `tools/call` as every other method: SDK 2.x alone parses its params and its result with the full
   * spec schemas (about 40 us a call, half the cost of a relayed call). The facade checks params
   * with its light schema, and a result comes from an upstream as it is (the client validates it),
   * so the parse is left out; the input-required seam of 2026-07-28 is kept. Falls back to the
   * SDK's wrapper when the seam is not where it was.
   */
  protected override _wrapHandler(
    method: string,
    handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
    const seam = (this as unknown as { _invokeInputRequiredCapableHandler?: InputRequiredSeam })._invokeInputRequiredCapableHandler;
    if (method !== 'tools/call' || typeof seam !== 'function') return super._wrapHandler(method, handler);
    return (request, ctx) => seam.call(this, method, handler, request, ctx);
  }

  /** Connects, then puts the envelope-checked dispatch on the way in. */
  override async connect(transport: Transport): Promise<void> {
    await super.connect(transport);
    installDispatch(this, transport, 'server');
  }
}

/**
 * Builds the Server for one downstream session. Handlers are thin: they call the shared
 * {@link FederatedResources} and translate errors in exactly one place ({@link toJsonRpcError}).
 */
export function createFacadeServer(options: FacadeOptions): Server {
  const { gate, caller, session, logger } = options;
  // The caller's era: how its answers and its not-found are spelled (built once, in that era).
  const edge = edgeOf(options.era);
  const offers = options.offers ?? { tools: false, prompts: false };
  const server: Server = new FacadeServer(options.serverInfo, edge, offers);
  // eslint-disable-next-line @typescript-eslint/unbound-method -- an era edge is a plain object of functions
  const { answer: cacheable, notFoundCode } = edge;
  const protocolVersion = edge.revision;

  /** The caller of one request: its own over HTTP, else the Server's. */
  const who = (ctx: Ctx): Caller => callerOf(ctx.http?.authInfo) ?? caller;
  const boundary = async <T>(method: string, uri: ErrorContext['uri'], by: Caller, fn: (caller: Caller) => Promise<T>): Promise<T> => {
    try {
      return await fn(by);
    } catch (err) {
      throw failureAnswer(logger, method, err, by, { uri, notFoundCode });
    }
  };

  // Params are checked here, by light schemas, not by the SDK (whose failures read `Invalid params
  // for <method>: …`): every params failure is then one -32602 format, and no request pays for the
  // SDK's full spec-schema parse.
  const handle = <P>(method: string, schema: z.ZodType<P>, fn: (params: P, ctx: Ctx) => Promise<Record<string, unknown>>) =>
    server.setRequestHandler(method, ANY_PARAMS, (raw, ctx) =>
      tracing()
        ? traceDownstream({ method, params: raw, id: ctx.mcpReq.id, session: () => who(ctx).session, protocolVersion }, () => fn(parseParams(schema, raw), ctx))
        : fn(parseParams(schema, raw), ctx),
    );
  const list = (kind: 'resources' | 'templates', method: string) =>
    handle(method, ListParams, (params, ctx) =>
      boundary(method, undefined, who(ctx), async (caller) => cacheable(await gate.list(caller, kind, params.cursor, ctx.mcpReq.signal))),
    );
  list('resources', 'resources/list');
  list('templates', 'resources/templates/list');
  /** The relay of one request that may ask its caller for input (see `eras/input-bridge.ts`). */
  const relayOf = (ctx: Ctx, by: Caller): CallRelay | undefined => options.bridge?.relayFor(downstreamOf(server, edge.era, ctx, by));
  handle('resources/read', UriParams, (params, ctx) =>
    boundary('resources/read', params.uri, who(ctx), async (caller) => cacheable(await gate.read(caller, params.uri, ctx.mcpReq.signal, relayOf(ctx, caller)))),
  );
  handle('resources/subscribe', UriParams, (params, ctx) =>
    boundary('resources/subscribe', params.uri, who(ctx), async (caller) => {
      await gate.subscribe(caller, session, params.uri);
      return {};
    }),
  );
  handle('resources/unsubscribe', UriParams, (params, ctx) =>
    boundary('resources/unsubscribe', params.uri, who(ctx), async (caller) => {
      await gate.unsubscribe(caller, session, params.uri);
      return {};
    }),
  );
  handle('completion/complete', CompleteParamsSchema, (params, ctx) =>
    boundary('completion/complete', (params.ref as { uri?: string }).uri ?? '', who(ctx), (caller) =>
      gate.complete(caller, params as CompleteParams, ctx.mcpReq.signal),
    ),
  );
  if (offers.tools || offers.prompts) handleItems(gate, offers, handle, boundary, who, cacheable, relayOf, (ctx) => callerLogMeta(edge.era, ctx));
  answerInvalidParams(server);
  return server;
}

/** The capabilities of a session offered `offers`: tools and prompts with their list changes, and logging for the messages relayed during a call. */
export function capabilitiesFor(offers: Offers): ServerCapabilities {
  if (!offers.tools && !offers.prompts) return FACADE_CAPABILITIES;
  return {
    ...FACADE_CAPABILITIES,
    ...(offers.tools ? { tools: { listChanged: true } } : {}),
    ...(offers.prompts ? { prompts: { listChanged: true } } : {}),
    logging: {},
  };
}

type Handle = <P>(method: string, schema: z.ZodType<P>, fn: (params: P, ctx: Ctx) => Promise<Record<string, unknown>>) => void;
type Boundary = <T>(method: string, uri: ErrorContext['uri'], by: Caller, fn: (caller: Caller) => Promise<T>) => Promise<T>;

/**
 * The handlers of tools and prompts: lists, `tools/call`, `prompts/get`, each with its caller's
 * progress and messages relayed to it alone, and the upstream's requests for input bridged to it (`bridged`).
 */
function handleItems(
  gate: AccessGate,
  offers: Offers,
  handle: Handle,
  boundary: Boundary,
  who: (ctx: Ctx) => Caller,
  cacheable: <T extends object>(r: T) => T,
  bridged: (ctx: Ctx, caller: Caller) => CallRelay | undefined,
  logMeta: (ctx: Ctx) => Record<string, unknown> | undefined,
): void {
  /** Runs one call with its caller's progress and messages relayed to it alone (`relayedCall`). */
  const relayed = <T>(ctx: Ctx, caller: Caller, call: (relay: CallContext) => Promise<T>): Promise<T> =>
    relayedCall(
      {
        signal: ctx.mcpReq.signal,
        principal: caller.principal,
        progressToken: ctx.mcpReq._meta?.progressToken,
        notify: (notification) => ctx.mcpReq.notify(notification),
        relay: bridged(ctx, caller),
        meta: logMeta(ctx),
      },
      call,
    );
  if (offers.tools) {
    handle('tools/list', ListParams, (params, ctx) =>
      boundary('tools/list', undefined, who(ctx), async (caller) => cacheable(await gate.listItems(caller, 'tools', params.cursor, ctx.mcpReq.signal))),
    );
    handle('tools/call', CallParams, (params, ctx) =>
      boundary('tools/call', undefined, who(ctx), (caller) =>
        relayed(ctx, caller, (relay) => gate.callTool(caller, params as Record<string, unknown> & { name: string }, relay)),
      ),
    );
  }
  if (offers.prompts) {
    handle('prompts/list', ListParams, (params, ctx) =>
      boundary('prompts/list', undefined, who(ctx), async (caller) => cacheable(await gate.listItems(caller, 'prompts', params.cursor, ctx.mcpReq.signal))),
    );
    handle('prompts/get', GetParams, (params, ctx) =>
      boundary('prompts/get', undefined, who(ctx), (caller) =>
        relayed(ctx, caller, (relay) => gate.getPrompt(caller, params as Record<string, unknown> & { name: string }, relay)),
      ),
    );
  }
}

type RequestHandler = (request: unknown, extra: unknown) => Promise<unknown>;
type InputRequiredSeam = (
  method: string,
  handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
  request: JSONRPCRequest,
  ctx: ServerContext,
) => Promise<Result>;

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
    return Array.isArray(issues) &&
      issues.every((i) => typeof i === 'object' && i !== null && Array.isArray((i as Issue).path) && typeof (i as Issue).message === 'string')
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
