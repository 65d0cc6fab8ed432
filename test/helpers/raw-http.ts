// Raw HTTP requests to one MCP endpoint, one POST at a time: bodies and headers written by hand, the status and answer of each response, 2025 sessions, GET streams and 2026 listens. For a conversation matched by id, see RawClient (raw-client.ts).
import { expect } from 'vitest';
import { within } from './gate.js';
import { Stream } from './sse-stream.js';
import { V2025, V2026, initializeRequest, modernEnvelope, modernHeaders, modernRequest } from './rpc-messages.js';

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
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) return JSON.parse(await res.text()) as Record<string, unknown>;
  const stream = new Stream(res);
  await stream.ended;
  return stream.messages.find((m) => m.method === undefined && 'id' in m && (id === undefined || m.id === id)) ?? {};
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
