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
import { ErrorCodes, ProxyError, toJsonRpcError, type ErrorContext } from './errors.js';
import type { Logger } from './logger.js';
import type { CompleteParams, FederatedResources } from './resources.js';
import type { Session } from './sessions.js';

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
  return server;
}

/** Expected outcomes (not found, bad cursor, cancel) log at debug; upstream failures at warn. */
function logFailure(logger: Logger, method: string, err: unknown): void {
  const code = err instanceof ProxyError ? err.code : undefined;
  const quiet =
    code === ErrorCodes.RESOURCE_NOT_FOUND ||
    code === ErrorCodes.INVALID_CURSOR ||
    code === ErrorCodes.INVALID_PARAMS ||
    code === ErrorCodes.CANCELLED;
  const record = { method, code, details: err instanceof ProxyError ? err.details : undefined, err: code ? undefined : String(err) };
  if (quiet) logger.debug(record, 'request failed');
  else logger.warn(record, 'request failed');
}
