// What SDK v2's 2026-07-28 HTTP entry (`createMcpHandler`) checks and answers for a plain `resources/read` or `tools/call`, as the HTTP endpoint's lane reproduces it. Pure.
import type { IncomingHttpHeaders } from 'node:http';
import { JsonRpc } from '../errors.js';
import { Revisions } from '../protocol.js';

/** A URI the SDK compares with `Mcp-Name` as it is: printable ASCII without spaces, and not the base64 sentinel (`=?base64?…?=`). */
const VERBATIM = /^[\x21-\x7e]+$/;

/**
 * Whether the standard headers of a 2026-07-28 `resources/read` of `uri`, or `tools/call` of tool
 * `name`, are exactly what the SDK's HTTP entry accepts with nothing to decode or reconcile:
 * `MCP-Protocol-Version` this revision, `Mcp-Method` the method, and `Mcp-Name` the URI or name
 * itself, once (a repeated header arrives joined and differs). Anything else (missing, mismatched,
 * encoded) is left to the SDK, which answers it. (The entry's other `tools/call` rungs, the
 * `x-mcp-header` parameter headers and the scope challenge, apply only to an `McpServer`; the
 * facade is a plain `Server`.)
 */
export function plainHeaders(headers: IncomingHttpHeaders, method: 'resources/read' | 'tools/call', name: string): boolean {
  return (
    headers['mcp-protocol-version'] === Revisions.modern &&
    headers['mcp-method'] === method &&
    headers['mcp-name'] === name &&
    VERBATIM.test(name) &&
    !name.startsWith('=?')
  );
}

/**
 * The HTTP status the SDK's per-request transport answers a handler's outcome with: 200, the
 * JSON-RPC answer being the payload, but 400 for a missing client capability (`-32021`).
 */
export function answerStatus(message: { error?: { code?: unknown } }): number {
  return message.error?.code === JsonRpc.MISSING_CLIENT_CAPABILITY ? 400 : 200;
}

/**
 * The headers of the SSE response the SDK's per-request transport switches to when a message tied
 * to the request (a relayed notification) is sent before its answer, as its Node adapter writes
 * them (the web `Headers`' order: names lower-cased and sorted).
 */
export const STREAM_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'content-type': 'text/event-stream',
  'x-accel-buffering': 'no',
};

/** How often that stream carries a keep-alive comment: the SDK's default (`createMcpHandler` is given none), in ms. */
export const STREAM_KEEP_ALIVE_MS = 15_000;

/** The keep-alive comment frame of that stream. */
export const KEEP_ALIVE_FRAME = ': keepalive\n\n';

/** One message as a frame of that stream. */
export function messageFrame(message: unknown): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}
