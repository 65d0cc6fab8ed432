// One SDK low-level Server per downstream session: capabilities, handlers, and the error boundary.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CompleteRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import { ErrorCodes, JsonRpc, JsonRpcError, ProxyError, toJsonRpcError, type ErrorContext } from '../errors.js';
import type { Logger } from '../logger.js';
import type { CompleteParams, FederatedResources } from '../federation/resources.js';
import type { Session } from '../federation/sessions.js';

/** What the facade needs from the composition root. */
export interface FacadeOptions {
  resources: FederatedResources;
  /** This downstream session, for per-session operations (subscriptions). */
  session: Session;
  logger: Logger;
  serverInfo: { name: string; version: string };
}

/** Capabilities the facade declares. */
export const FACADE_CAPABILITIES: ServerCapabilities = {
  resources: { subscribe: true, listChanged: true },
  completions: {},
};

/**
 * Builds the Server for one downstream session. Handlers are thin: they call the shared
 * {@link FederatedResources} and translate errors in exactly one place ({@link toJsonRpcError}).
 */
export function createFacadeServer(options: FacadeOptions): Server {
  const { resources, session, logger } = options;
  const server = new Server(options.serverInfo, { capabilities: FACADE_CAPABILITIES });

  const boundary = async <T>(method: string, ctx: ErrorContext, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      logFailure(logger, method, err);
      throw toJsonRpcError(err, ctx);
    }
  };

  server.setRequestHandler(ListResourcesRequestSchema, (req, extra) =>
    boundary(req.method, {}, () => resources.list('resources', req.params?.cursor, extra.signal)),
  );
  server.setRequestHandler(ListResourceTemplatesRequestSchema, (req, extra) =>
    boundary(req.method, {}, () => resources.list('templates', req.params?.cursor, extra.signal)),
  );
  server.setRequestHandler(ReadResourceRequestSchema, (req, extra) =>
    boundary(req.method, { uri: req.params.uri }, () => resources.read(req.params.uri, extra.signal)),
  );
  server.setRequestHandler(SubscribeRequestSchema, (req) =>
    boundary(req.method, { uri: req.params.uri }, async () => {
      await resources.subscribe(session, req.params.uri);
      return {};
    }),
  );
  server.setRequestHandler(UnsubscribeRequestSchema, (req) =>
    boundary(req.method, { uri: req.params.uri }, async () => {
      await resources.unsubscribe(session, req.params.uri);
      return {};
    }),
  );
  server.setRequestHandler(CompleteRequestSchema, (req, extra) =>
    boundary(req.method, { uri: (req.params.ref as { uri?: string }).uri ?? '' }, () =>
      resources.complete(req.params as CompleteParams, extra.signal),
    ),
  );
  answerInvalidParams(server);
  return server;
}

type RequestHandler = (request: unknown, extra: unknown) => Promise<unknown>;

/**
 * SDK 1.x validates each request's params with the method's zod schema inside the handler, and a
 * failure reaches the client as `-32603` with the whole zod issue dump as its message. This wraps
 * every registered handler (the Server's own `initialize` and `ping` included) so that a schema
 * failure is `-32602 Invalid params` with one line naming the field. Call after the last
 * `setRequestHandler`; throws when the SDK's handler map is not where it was (a test pins it).
 */
export function answerInvalidParams(server: Server): void {
  const handlers = (server as unknown as { _requestHandlers?: unknown })._requestHandlers;
  if (!(handlers instanceof Map)) throw new Error('the SDK Server has no _requestHandlers map');
  const translate = (err: unknown): unknown =>
    isZodError(err) ? new JsonRpcError(JsonRpc.INVALID_PARAMS, invalidParamsMessage(err.issues)) : err;
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

/** A zod validation failure: classic `ZodError`, or the core `$ZodError` (not an `Error`) SDK 1.x's compat layer throws. */
function isZodError(err: unknown): err is { issues: Issue[] } {
  const e = err as { name?: unknown; issues?: unknown } | null;
  return typeof e === 'object' && e !== null && (e.name === 'ZodError' || e.name === '$ZodError') && Array.isArray(e.issues);
}

/** `Invalid params: uri: expected string, received number`: the first issue, one line, bounded. */
export function invalidParamsMessage(issues: readonly Issue[]): string {
  const issue = issues[0];
  if (!issue) return 'Invalid params';
  const path = issue.path[0] === 'params' && issue.path.length > 1 ? issue.path.slice(1) : issue.path;
  const field = path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p))).join('.').replace(/\.\[/g, '[');
  const what = issue.message.replace(/^Invalid input: /, '');
  const line = `Invalid params: ${field ? `${field}: ` : ''}${what}`.replace(/[\u0000-\u001f\u2028\u2029]+/g, ' ');
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
}

/** Expected outcomes (not found, bad cursor, cancel) log at debug; upstream failures at warn. */
function logFailure(logger: Logger, method: string, err: unknown): void {
  const code = err instanceof ProxyError ? err.code : undefined;
  const quiet =
    code === ErrorCodes.RESOURCE_NOT_FOUND ||
    code === ErrorCodes.INVALID_CURSOR ||
    code === ErrorCodes.INVALID_PARAMS ||
    code === ErrorCodes.LIMIT_EXCEEDED ||
    code === ErrorCodes.CANCELLED;
  const record = { method, code, details: err instanceof ProxyError ? err.details : undefined, err: code ? undefined : String(err) };
  if (quiet) logger.debug(record, 'request failed');
  else logger.warn(record, 'request failed');
}
