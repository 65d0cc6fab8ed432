// What SDK v2's 2026-07-28 HTTP entry (`createMcpHandler`) checks and answers for a plain `resources/read`, as the HTTP endpoint's lane reproduces it. Pure.
import type { IncomingHttpHeaders } from 'node:http';
import { JsonRpc } from '../errors.js';
import { Revisions } from '../protocol.js';

/** A URI the SDK compares with `Mcp-Name` as it is: printable ASCII without spaces, and not the base64 sentinel (`=?base64?…?=`). */
const VERBATIM = /^[\x21-\x7e]+$/;

/**
 * Whether the standard headers of a 2026-07-28 `resources/read` of `uri` are exactly what the SDK's
 * HTTP entry accepts with nothing to decode or reconcile: `MCP-Protocol-Version` this revision,
 * `Mcp-Method` the method, and `Mcp-Name` the URI itself, once (a repeated header arrives joined and
 * differs). Anything else (missing, mismatched, encoded) is left to the SDK, which answers it.
 */
export function plainReadHeaders(headers: IncomingHttpHeaders, uri: string): boolean {
  return (
    headers['mcp-protocol-version'] === Revisions.modern &&
    headers['mcp-method'] === 'resources/read' &&
    headers['mcp-name'] === uri &&
    VERBATIM.test(uri) &&
    !uri.startsWith('=?')
  );
}

/**
 * The HTTP status the SDK's per-request transport answers a handler's outcome with: 200, the
 * JSON-RPC answer being the payload, but 400 for a missing client capability (`-32021`).
 */
export function answerStatus(message: { error?: { code?: unknown } }): number {
  return message.error?.code === JsonRpc.MISSING_CLIENT_CAPABILITY ? 400 : 200;
}
