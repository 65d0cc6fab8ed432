// The one raw JSON-RPC client, over HTTP and over an in-memory (stdio-shaped) connection: bodies and headers written by hand, 2025 sessions opened raw, 2026 requests with their envelope, answers read from JSON or SSE.
import { expect } from 'vitest';
import { within } from './gate.js';
import { Stream } from './sse-stream.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The 2025-11-25 protocol version, as a raw client writes it. */
export const V2025 = '2025-11-25';
/** The 2026-07-28 protocol version, as a raw client writes it. */
export const V2026 = '2026-07-28';

/** What a raw client says it is. */
const CLIENT_INFO = { name: 'raw', version: '1' };

/** A 2025-11-25 `initialize` request. */
export const initializeRequest = (id: unknown = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: V2025, capabilities: {}, clientInfo: CLIENT_INFO },
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

/** Options of one raw POST. */
export interface PostOptions {
  /** Sent as `authorization: Bearer <token>`. */
  token?: string;
  /** A 2025 session: sent as `mcp-session-id`, with `mcp-protocol-version: 2025-11-25`. */
  sid?: string;
  /** More headers (they win over the ones above). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** One POST of `body` (a string is sent as it is) with the JSON-RPC content type and the Accept both transports need. */
export function postRpc(url: URL | string, body: unknown, options: PostOptions = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
      ...(options.sid === undefined ? {} : { 'mcp-session-id': options.sid, 'mcp-protocol-version': V2025 }),
      ...options.headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

/** The JSON-RPC answer of a POST, sent as JSON or as an SSE event: the response with `id` (any response when none is given). */
export async function answerOf(res: Response, id?: unknown): Promise<Record<string, unknown>> {
  const text = await res.text();
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) return JSON.parse(text) as Record<string, unknown>;
  const answer = text
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => JSON.parse(l.slice(5)) as Record<string, unknown>)
    .find((m) => m.method === undefined && 'id' in m && (id === undefined || m.id === id));
  return answer ?? {};
}

/** A JSON-RPC answer as a test reads it. */
export type RawAnswer = Record<string, unknown> & { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };

/** A response read whole: the HTTP status, the parsed answer (`{}` when the body is not JSON) and the text. */
export async function readAnswer(res: Response): Promise<{ status: number; body: RawAnswer; text: string }> {
  const text = await res.text();
  let body: RawAnswer = {};
  try {
    body = JSON.parse(text) as RawAnswer;
  } catch {
    // not JSON: the text tells
  }
  return { status: res.status, body, text };
}

/** A raw HTTP client of one MCP endpoint; the streams it opens are closed by `close()`. */
export class RawHttpClient {
  private ids = 100;
  private readonly streams: Stream[] = [];

  constructor(readonly url: URL | string) {}

  post(body: unknown, options: PostOptions = {}): Promise<Response> {
    return postRpc(this.url, body, options);
  }

  /** A 2025 session opened with `token` (initialize answered 200, initialized 202); its id. */
  async session(token?: string): Promise<string> {
    const init = await this.post(initializeRequest(), token === undefined ? {} : { token });
    expect(init.status).toBe(200);
    await init.text();
    const sid = init.headers.get('mcp-session-id')!;
    const initialized = await this.post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { ...(token === undefined ? {} : { token }), sid });
    await initialized.text();
    expect(initialized.status).toBe(202);
    return sid;
  }

  /** One request on a 2025 session: the HTTP status, the parsed answer (`{}` when the body is not JSON) and the text. */
  async call(token: string, sid: string, method: string, params: Record<string, unknown>): Promise<{ status: number; body: RawAnswer; text: string }> {
    return readAnswer(await this.post({ jsonrpc: '2.0', id: ++this.ids, method, params }, { token, sid }));
  }

  /** A 2026 request (stateless, with the envelope and its headers). */
  modern(token: string | undefined, method: string, params: Record<string, unknown>, options: { id?: unknown; signal?: AbortSignal } = {}): Promise<Response> {
    return this.post(modernRequest(options.id ?? ++this.ids, method, params), {
      ...(token === undefined ? {} : { token }),
      headers: modernHeaders(method, params),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  /** A 2025 session's GET stream (answered 200). */
  async getStream(token: string, sid: string): Promise<Stream> {
    const res = await fetch(this.url, {
      headers: { accept: 'text/event-stream', authorization: `Bearer ${token}`, 'mcp-session-id': sid, 'mcp-protocol-version': V2025 },
    });
    expect(res.status).toBe(200);
    return this.keep(new Stream(res));
  }

  /** A 2026 listen for `uris`, once it is acknowledged with exactly those URIs. */
  async listen(token: string, uris: string[]): Promise<Stream> {
    const res = await this.post(
      { jsonrpc: '2.0', id: ++this.ids, method: 'subscriptions/listen', params: { notifications: { resourceSubscriptions: uris }, _meta: modernEnvelope() } },
      { token, headers: { 'mcp-protocol-version': V2026 } },
    );
    expect(res.status).toBe(200);
    const s = this.keep(new Stream(res));
    const acknowledged = (m: Record<string, unknown>) => m.method === 'notifications/subscriptions/acknowledged';
    await within(s.until(acknowledged), 'the listen to be acknowledged');
    const ack = s.messages.find(acknowledged)!;
    expect((ack.params as { notifications: { resourceSubscriptions?: string[] } }).notifications.resourceSubscriptions).toEqual(uris);
    return s;
  }

  /** Closes every stream this client opened. */
  close(): void {
    for (const s of this.streams.splice(0)) s.close();
  }

  private keep(s: Stream): Stream {
    this.streams.push(s);
    return s;
  }
}

/**
 * A raw 2025-11-25 client on one in-memory connection (stdio's shape) handed to `connect` (e.g. a
 * harness's `proxy.connect`): initialized with `capabilities`, it sends messages as written and keeps
 * every answer by id; requests the gateway sends it are answered by `answerRequest` (else -32601).
 */
export async function rawSession(
  connect: (transport: InMemoryTransport) => Promise<unknown>,
  capabilities: Record<string, unknown> = {},
  answerRequest?: (request: { method: string; params?: unknown }) => Record<string, unknown> | undefined,
) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const answers = new Map<unknown, JSONRPCMessage[]>();
  const waiters = new Map<unknown, () => void>();
  clientSide.onmessage = (m) => {
    const id = (m as { id?: unknown }).id;
    const method = (m as { method?: unknown }).method;
    if (id !== undefined && typeof method === 'string') {
      const result = answerRequest?.(m as { method: string });
      void clientSide.send(
        (result ? { jsonrpc: '2.0', id, result } : { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } }) as JSONRPCMessage,
      );
      return;
    }
    if (id === undefined || method !== undefined) return;
    answers.set(id, [...(answers.get(id) ?? []), m]);
    waiters.get(id)?.();
  };
  await clientSide.start();
  await connect(serverSide);
  const answer = (id: string | number) =>
    new Promise<JSONRPCMessage>((resolve) => {
      const done = () => resolve(answers.get(id)![0]!);
      if (answers.has(id)) done();
      else waiters.set(id, done);
    });
  const send = (m: Record<string, unknown>) => clientSide.send({ jsonrpc: '2.0', ...m } as JSONRPCMessage);
  await send({ id: 'init', method: 'initialize', params: { protocolVersion: V2025, capabilities, clientInfo: { name: 'raw', version: '1' } } });
  await answer('init');
  await send({ method: 'notifications/initialized' });
  return { send, answer, answers, close: () => clientSide.close() };
}
