// A failed downstream request: logged once (quietly when it is an expected outcome), then translated to the JSON-RPC error its caller gets.
import { ErrorCodes, ProxyError, toJsonRpcError, type ErrorContext, type JsonRpcError } from '../errors.js';
import type { Caller } from '../caller.js';
import type { Logger } from '../logger.js';

/**
 * Logs `err` of `method` for `caller` and returns the error to answer with (`toJsonRpcError`, the
 * one translation): what the facade's handlers throw and the edge fast lane sends.
 */
export function failureAnswer(logger: Logger, method: string, err: unknown, caller: Caller, ctx: ErrorContext): JsonRpcError {
  logFailure(logger, method, err, caller);
  return toJsonRpcError(err, ctx);
}

/** Expected outcomes (not found, bad cursor, cancel) log at debug; upstream failures at warn. */
function logFailure(logger: Logger, method: string, err: unknown, caller: Caller): void {
  const code = err instanceof ProxyError ? err.code : undefined;
  const quiet =
    code === ErrorCodes.RESOURCE_NOT_FOUND ||
    code === ErrorCodes.INVALID_CURSOR ||
    code === ErrorCodes.INVALID_PARAMS ||
    code === ErrorCodes.LIMIT_EXCEEDED ||
    code === ErrorCodes.UNKNOWN_ITEM ||
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
