// JSON-RPC messages as a raw client writes them: the two protocol versions, a 2025 initialize, and a 2026 request with its envelope and headers.

/** The 2025-11-25 protocol version, as a raw client writes it. */
export const V2025 = '2025-11-25';
/** The 2026-07-28 protocol version, as a raw client writes it. */
export const V2026 = '2026-07-28';

/** What a raw client says it is. */
export const CLIENT_INFO = { name: 'raw', version: '1' };

/** A 2025-11-25 `initialize` request. */
export const initializeRequest = (id: unknown = 1, capabilities: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: V2025, capabilities, clientInfo: CLIENT_INFO },
});

/** The per-request `_meta` envelope of a 2026-07-28 request. */
export const modernEnvelope = (capabilities: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': V2026,
  'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
  'io.modelcontextprotocol/clientCapabilities': capabilities,
});

/** The headers a 2026 request carries beside its body: the version, the method, and the URI or name it names. */
export const modernHeaders = (method: string, params: Record<string, unknown>): Record<string, string> => {
  const name = typeof params.uri === 'string' ? params.uri : typeof params.name === 'string' ? params.name : undefined;
  return { 'mcp-protocol-version': V2026, 'mcp-method': method, ...(name === undefined ? {} : { 'mcp-name': name }) };
};

/** A 2026-07-28 request body: `params` with the envelope in `_meta`. */
export const modernRequest = (id: unknown, method: string, params: Record<string, unknown>, capabilities?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method,
  params: { ...params, _meta: modernEnvelope(capabilities) },
});
