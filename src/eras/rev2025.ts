// MCP 2025-11-25 at the session edge: what SDK 2.x encodes the 2026 way is put back for 2025 clients.
import { JsonRpc, MARK_NOT_FOUND } from '../errors.js';

/** The part of a transport this edge wraps. */
interface Sending {
  send: (message: never, options?: never) => Promise<void>;
}

/**
 * Wraps a 2025-11-25 session's `send` so that not-found answers carry `-32002` again, with
 * `data: { uri }` exactly as the client sent the URI (SDK 2.x's server encodes -32002 as -32602 in
 * every era). One property check per outgoing message.
 *
 * @example restoreLegacyNotFound(transport) // after server.connect(transport)
 */
export function restoreLegacyNotFound(transport: Sending): void {
  const send = transport.send.bind(transport);
  transport.send = (message: { error?: { code: number; data?: Record<string, unknown> } }, options?: never) => {
    const data = message.error?.data;
    if (data?.[MARK_NOT_FOUND] === true) {
      const { [MARK_NOT_FOUND]: _mark, ...rest } = data;
      message = { ...message, error: { ...message.error!, code: JsonRpc.RESOURCE_NOT_FOUND, data: rest } };
    }
    return send(message as never, options);
  };
}
