// Bench-only light MCP client over Streamable HTTP: node:http with a keep-alive agent, one POST per request,
// JSON or SSE answers. It spends a fraction of the SDK client's CPU, so the HTTP rows measure the servers.
import { Agent, request as httpRequest } from 'node:http';

const PROTOCOL = '2025-11-25';

/** The JSON-RPC message answering `id` in an SSE body (its `data:` lines), or undefined. */
const fromSse = (text, id) => {
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(l[5] === ' ' ? 6 : 5))
      .join('\n');
    if (!data) continue;
    const message = JSON.parse(data);
    if (message.id === id) return message;
  }
  return undefined;
};

/**
 * Opens a session at `url` (initialize, then notifications/initialized) with `maxSockets` keep-alive
 * sockets. The handle has the SDK Client methods the bench uses (`readResource`, `listResources`, `close`).
 */
/**
 * A request written on a kept-alive socket the server closed as idle at that moment (its keep-alive
 * timeout): never read by the server, so sent once more on a fresh socket, as Node's documentation
 * advises (`request.reusedSocket`) and undici does. Only once, and only for that error.
 */
const staleSocket = (req, err, retried) => !retried && req.reusedSocket && err.code === 'ECONNRESET';

export const connectLight = async (url, { token, maxSockets = 32 } = {}) => {
  const target = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets });
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  };
  let nextId = 0;
  const send = (method, body, retried = false) =>
    new Promise((resolve, reject) => {
      const req = httpRequest({ agent, method, hostname: target.hostname, port: target.port, path: target.pathname + target.search, headers }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', (err) => (staleSocket(req, err, retried) ? send(method, body, true).then(resolve, reject) : reject(err)));
      req.end(body);
    });
  const call = async (method, params) => {
    const id = nextId++;
    const res = await send('POST', JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    if (res.status !== 200) throw new Error(`${method}: HTTP ${res.status} ${res.text.slice(0, 200)}`);
    const message = (res.headers['content-type'] ?? '').startsWith('text/event-stream') ? fromSse(res.text, id) : JSON.parse(res.text);
    if (!message) throw new Error(`${method}: no answer in the response`);
    if (message.error) throw Object.assign(new Error(`${method}: ${message.error.message}`), { code: message.error.code });
    return { result: message.result, headers: res.headers };
  };
  const init = await call('initialize', { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'mcp-federate-bench-light', version: '1.0.0' } });
  const session = init.headers['mcp-session-id'];
  if (session) headers['mcp-session-id'] = session;
  headers['mcp-protocol-version'] = init.result.protocolVersion;
  const note = await send('POST', JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  if (note.status !== 202 && note.status !== 200) throw new Error(`notifications/initialized: HTTP ${note.status}`);
  const client = {
    readResource: async (params) => (await call('resources/read', params)).result,
    listResources: async (params = {}) => (await call('resources/list', params)).result,
    close: async () => {
      if (session) await send('DELETE').catch(() => undefined);
      agent.destroy();
    },
  };
  return client;
};

const MODERN = '2026-07-28';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'mcp-federate-bench-light', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/**
 * A light 2026-07-28 client at `url`: stateless, every POST carries the per-request envelope in
 * `_meta` and the standard headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`), as SDK v2's
 * client sends them. The handle has `readResource`, `callTool` and `close`.
 */
export const connectLightModern = (url, { token, maxSockets = 32 } = {}) => {
  const target = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets });
  let nextId = 0;
  const call = (method, name, params, retried = false, id = nextId++) =>
    new Promise((resolve, reject) => {
      const headers = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': method,
        'mcp-name': name,
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      };
      const body = JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: ENVELOPE } });
      const req = httpRequest(
        { agent, method: 'POST', hostname: target.hostname, port: target.port, path: target.pathname + target.search, headers },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const message = (res.headers['content-type'] ?? '').startsWith('text/event-stream')
              ? fromSse(text, id)
              : res.statusCode === 200
                ? JSON.parse(text)
                : undefined;
            if (!message || message.error) reject(new Error(`${method}: HTTP ${res.statusCode} ${text.slice(0, 200)}`));
            else resolve(message.result);
          });
          res.on('error', reject);
        },
      );
      req.on('error', (err) => (staleSocket(req, err, retried) ? call(method, name, params, true, id).then(resolve, reject) : reject(err)));
      req.end(body);
    });
  return {
    readResource: (params) => call('resources/read', params.uri, params),
    callTool: (params) => call('tools/call', params.name, params),
    close: async () => agent.destroy(),
  };
};
