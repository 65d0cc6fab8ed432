// MCP 2026-07-28 over Streamable HTTP, client side: the per-request headers a request's own envelope implies (pure).
import { PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/client';

/**
 * Which params field names a request in `Mcp-Name`, per method (the SDK's table, SEP-2243). A test
 * pins it against the SDK's own transport by comparing the headers both send.
 */
const NAME_SOURCE: Readonly<Record<string, string>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

const BASE64_PREFIX = '=?base64?';
const BASE64_SUFFIX = '?=';

/**
 * Sets `mcp-protocol-version`, `mcp-method` and `mcp-name` on `headers` when `message` is a request
 * whose `_meta` claims a protocol version (a 2026-07-28 request, or the version probe); a message
 * without that claim is left alone, so no 2026 header ever appears on a 2025-11-25 exchange.
 */
export function applyEnvelopeHeaders(headers: Record<string, string>, message: { method?: unknown; id?: unknown; params?: unknown }): void {
  if (typeof message.method !== 'string' || message.id === undefined) return;
  const params = message.params as { _meta?: Record<string, unknown> } | undefined;
  const version = params?._meta?.[PROTOCOL_VERSION_META_KEY];
  if (typeof version !== 'string') return;
  headers['mcp-protocol-version'] = version;
  headers['mcp-method'] = message.method;
  const field = Object.hasOwn(NAME_SOURCE, message.method) ? NAME_SOURCE[message.method] : undefined;
  const value = field === undefined ? undefined : (params as Record<string, unknown>)[field];
  if (typeof value === 'string') headers['mcp-name'] = encodeHeaderValue(value);
}

/** True when `message` is a request with a 2026-07-28 (or later) envelope claim. */
export function isModernEnveloped(message: { method?: unknown; id?: unknown; params?: unknown }): boolean {
  if (typeof message.method !== 'string' || message.id === undefined) return false;
  const version = (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta?.[PROTOCOL_VERSION_META_KEY];
  return typeof version === 'string' && version >= '2026-07-28';
}

/** A header value as the spec encodes it: safe plain ASCII as is, anything else as `=?base64?{utf-8 base64}?=`. */
export function encodeHeaderValue(value: string): string {
  return needsBase64(value) ? `${BASE64_PREFIX}${Buffer.from(value, 'utf8').toString('base64')}${BASE64_SUFFIX}` : value;
}

function needsBase64(s: string): boolean {
  if (s.length === 0) return true;
  if (s.startsWith(BASE64_PREFIX) && s.endsWith(BASE64_SUFFIX)) return true;
  if (s !== s.trim()) return true;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 9 || (c >= 32 && c <= 126)) continue;
    return true;
  }
  return false;
}
