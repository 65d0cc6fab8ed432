// MCP 2026-07-28 at the session edge: cache hints as result fields, not-found as -32602, listen filters narrowed to what we serve.
import { MARK_NOT_FOUND } from '../errors.js';
import { attachedHint } from '../federation/cache-hint.js';

/** The part of a transport this edge wraps. */
interface Sending {
  send: (message: never, options?: never) => Promise<void>;
}

/**
 * `result` with the proxy's hint as the 2026 fields `ttlMs` / `cacheScope`. Without an attached
 * hint the result is returned as it is and the SDK fills its defaults (`ttlMs: 0`, `private`).
 */
export function withCacheFields<T extends object>(result: T): T {
  const hint = attachedHint(result);
  return hint ? { ...result, ttlMs: hint.ttlMs, cacheScope: hint.scope } : result;
}

/**
 * Wraps a 2026-07-28 session's `send` so that not-found answers lose the proxy's internal marker
 * (SDK 2.x already sends them as `-32602` with `data: { uri }` in this era).
 */
export function stripNotFoundMark(transport: Sending): void {
  const send = transport.send.bind(transport);
  transport.send = (message: { error?: { code: number; data?: Record<string, unknown> } }, options?: never) => {
    const data = message.error?.data;
    if (data?.[MARK_NOT_FOUND] === true) {
      const { [MARK_NOT_FOUND]: _mark, ...rest } = data;
      message = { ...message, error: { ...message.error!, data: rest } };
    }
    return send(message as never, options);
  };
}
