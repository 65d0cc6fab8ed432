// A lean Streamable HTTP client transport on node:http(s) with a keep-alive agent: answers parsed from the socket, bounded.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { SdkError, SdkErrorCode, SdkHttpError, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client';
import { applyEnvelopeHeaders, isModernEnveloped } from '../eras/rev2026-http-headers.js';
import { exceedsDepth } from '../wire/json-depth.js';
import { refusedAnswer } from './bounded-fetch.js';
import { MessageSniffer, type RpcId, type Sniffed } from './message-sniffer.js';
import { SseParser, type SseEvent } from './sse-parser.js';
import type { Refusal } from './sse-bounds.js';

/** Options of {@link LeanHttpTransport}. */
export interface LeanHttpOptions {
  /** Headers sent with every request (the server's configured `headers`). */
  headers: Readonly<Record<string, string>>;
  /** Largest JSON body or SSE event data accepted, in bytes. */
  maxResponseBytes: number;
  /** Deepest nesting accepted in a message. */
  maxDepth: number;
  /** Hears every refused answer, with a reason for logs. */
  onDrop?: (reason: string) => void;
  /** Reopening the GET stream after it ended (the SDK transport's defaults). */
  reconnect?: { initialDelayMs: number; maxDelayMs: number; growFactor: number; maxRetries: number };
}

type SendOptions = Parameters<Transport['send']>[1];
interface Message {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: unknown;
  result?: unknown;
  error?: unknown;
}

const DEFAULT_RECONNECT = { initialDelayMs: 1000, maxDelayMs: 30_000, growFactor: 1.5, maxRetries: 2 };
/** Most of an error body kept for the error's message. */
const ERROR_TEXT_BYTES = 64 * 1024;
/** Headers derived from the connection or the body, which per-request headers may not override (as in the SDK). */
const RESERVED = new Set(['authorization', 'dpop', 'content-type', 'mcp-protocol-version', 'mcp-method', 'mcp-name', 'mcp-session-id']);
const ANSWER_TYPES = ['application/json', 'text/event-stream'];

/**
 * The Streamable HTTP client side (2025-11-25 sessions and 2026-07-28 requests alike) as an SDK
 * `Transport`, so the SDK `Client` still does the protocol. Each message is one POST on a keep-alive
 * socket; a JSON answer is read with a byte count (refused early on `content-length`), an SSE answer
 * is parsed event by event as the socket delivers it ({@link SseParser}), with no web streams and no
 * `fetch`. Bounds are those of `createBoundedFetch`: an answer over `maxResponseBytes` or nested
 * deeper than `maxDepth` becomes a `-32603` error for the request it answers (marked too large / too
 * deep), and is never held past the limit. After `notifications/initialized` a GET stream carries
 * the server's own messages, reopened (with `Last-Event-ID`) after it ends, as the SDK does.
 *
 * What it does not do, and the SDK transport (`httpClient: "sdk"`) does: OAuth and other auth
 * providers, following redirects, resuming a POST stream with a resumption token, compressed bodies.
 */
export class LeanHttpTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  /** One POST per request: a 2026-07-28 Client cancels by aborting it. */
  readonly hasPerRequestStream = true;
  sessionId: string | undefined;
  private protocolVersion: string | undefined;
  private readonly agent: HttpAgent;
  private readonly request: typeof httpRequest;
  private readonly base: Record<string, string>;
  /**
   * `base` as a flat `[name, value, …]` list, the Host header Node would add last, when none of
   * `base`'s names is one a request sets itself (the session's, the version, the length, Host):
   * then a request's headers are this list with its own appended, handed to node:http as an array
   * (no per-header `setHeader`), the same bytes on the wire. Undefined: every request takes the object path.
   */
  private readonly baseList: readonly string[] | undefined;
  private readonly hostHeader: string;
  private readonly target: { hostname: string; port: string; path: string };
  private readonly onDrop: (reason: string) => void;
  private readonly reconnect: NonNullable<LeanHttpOptions['reconnect']>;
  private started = false;
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private serverRetryMs: number | undefined;
  private lastEventId: string | undefined;

  constructor(
    url: URL,
    private readonly options: LeanHttpOptions,
  ) {
    const https = url.protocol === 'https:';
    this.agent = https ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
    this.request = https ? httpsRequest : httpRequest;
    this.onDrop = options.onDrop ?? (() => undefined);
    this.reconnect = options.reconnect ?? DEFAULT_RECONNECT;
    const base: Record<string, string> = {};
    for (const [name, value] of Object.entries(options.headers)) base[name.toLowerCase()] = value;
    const accept = (base.accept ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean);
    base.accept = [...new Set([...accept, ...ANSWER_TYPES])].join(', ');
    base['content-type'] = 'application/json';
    this.base = base;
    const hostname = url.hostname.replace(/^\[|\]$/g, '');
    this.target = { hostname, port: url.port, path: url.pathname + url.search };
    this.hostHeader = hostHeaderOf(hostname, url.port, https ? 443 : 80);
    const own = ['mcp-session-id', 'mcp-protocol-version', 'content-length', 'host'];
    this.baseList = own.some((name) => Object.hasOwn(base, name)) ? undefined : Object.entries(base).flat();
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('LeanHttpTransport already started');
    this.started = true;
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  async send(message: JSONRPCMessage, options?: SendOptions): Promise<void> {
    const signal = options?.requestSignal;
    try {
      if (this.closed) throw new Error('Not connected');
      if (options?.resumptionToken) throw new Error('resuming a stream needs the SDK HTTP client (httpClient: "sdk")');
      const list = (Array.isArray(message) ? message : [message]) as Message[];
      const handshake = list.length === 1 ? list[0]!.method === 'initialize' : list.some((m) => m.method === 'initialize');
      const body = JSON.stringify(message);
      const res = await this.exchange('POST', this.postHeaders(message, handshake, options, body), body, signal);
      const status = res.statusCode ?? 0;
      if (status < 200 || status > 299) return await this.failed(res, message);
      // eslint-disable-next-line @typescript-eslint/prefer-nullish-coalescing -- an empty header is no session id
      if (handshake) this.sessionId = headerOf(res, 'mcp-session-id') || undefined;
      if (status === 202) {
        res.resume();
        if (list.some((m) => m.method === 'notifications/initialized')) void this.openStream(0);
        return;
      }
      const ids: RpcId[] = [];
      for (const m of list) if (typeof m.method === 'string' && (typeof m.id === 'string' || typeof m.id === 'number')) ids.push(m.id);
      if (ids.length === 0) return void res.resume();
      const type = mediaType(headerOf(res, 'content-type'));
      if (type === 'text/event-stream') return this.readEvents(res, ids, options);
      if (type === 'application/json') return await this.readJson(res, ids);
      res.resume();
      const contentType = headerOf(res, 'content-type');
      throw new SdkError(SdkErrorCode.ClientHttpUnexpectedContent, `Unexpected content type: ${contentType}`, { contentType });
    } catch (err) {
      if (signal?.aborted !== true) this.onerror?.(err as Error);
      throw err;
    }
  }

  /**
   * Closes every open request and the GET stream; idempotent. The agent's `destroy` ends every socket,
   * those in use included (each request has its socket from the start: the agent has no socket limit),
   * so no set of open requests is kept: adding and deleting each request in one long-lived `Set` cost
   * the client more young-generation GC than the rest of its objects (docs/http-cost.md).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.agent.destroy();
    this.onclose?.();
  }

  /**
   * The headers of one POST: the configured ones, the session's (not on the handshake), the version,
   * a 2026 envelope's own, the caller's extra ones (not those the transport sets), the length. As a
   * flat list when {@link baseList} allows and nothing but the session's and the version's is added;
   * otherwise as an object, which node:http sets header by header.
   */
  private postHeaders(message: JSONRPCMessage, handshake: boolean, options: SendOptions, body: string): OutgoingHttpHeaders | string[] {
    const length = String(Buffer.byteLength(body));
    if (this.baseList !== undefined && options?.headers === undefined && !Array.isArray(message) && !isModernEnveloped(message)) {
      const list = this.baseList.slice();
      if (!handshake && this.sessionId) list.push('mcp-session-id', this.sessionId);
      if (this.protocolVersion) list.push('mcp-protocol-version', this.protocolVersion);
      list.push('content-length', length, 'Host', this.hostHeader);
      return list;
    }
    const headers = this.headers(!handshake);
    if (!Array.isArray(message)) applyEnvelopeHeaders(headers, message);
    if (options?.headers)
      for (const [name, value] of Object.entries(options.headers)) if (!RESERVED.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
    headers['content-length'] = length;
    return headers;
  }

  /** The headers of one request: the configured ones, the session's (unless `session` is false), the version. */
  private headers(session: boolean): Record<string, string> {
    const headers = { ...this.base };
    if (session && this.sessionId) headers['mcp-session-id'] = this.sessionId;
    if (this.protocolVersion) headers['mcp-protocol-version'] = this.protocolVersion;
    return headers;
  }

  /** One request; resolves with its response once its headers arrived. Socket failures reject as `fetch` does. */
  private exchange(method: string, headers: OutgoingHttpHeaders | string[], body: string | undefined, signal?: AbortSignal): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(abortError(signal));
      const { hostname, port, path } = this.target;
      const req = this.request({ agent: this.agent, method, hostname, port, path, headers }, (res) => {
        res.on('error', noop); // a reset mid-body is reported by whoever reads it
        resolve(res);
      });
      req.on('error', (err) => {
        // The shape `fetch` gives a refused or reset connection, which `Upstream` reads as "connection lost".
        reject(signal?.aborted ? abortError(signal) : new TypeError('fetch failed', { cause: err }));
      });
      if (signal) {
        const onAbort = () => req.destroy();
        signal.addEventListener('abort', onAbort, { once: true });
        req.once('close', () => signal.removeEventListener('abort', onAbort));
      }
      req.end(body);
    });
  }

  /** A non-2xx answer to a POST: a 2026 request's JSON-RPC error in a 400 body is its answer; anything else throws. */
  private async failed(res: IncomingMessage, message: Message): Promise<void> {
    const text = (await readBounded(res, ERROR_TEXT_BYTES, true)).toString('utf8');
    const status = res.statusCode ?? 0;
    if (status === 400 && !Array.isArray(message) && isModernEnveloped(message)) {
      const parsed = parseOrUndefined(text) as Message | undefined;
      if (parsed && parsed.error !== undefined && parsed.id === message.id) return this.onmessage?.(parsed as JSONRPCMessage);
    }
    // The SDK's own error: its version probe reads the status from it, and `Upstream` a 404 (session gone).
    throw new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, `Error POSTing to endpoint: ${text}`, { status, statusText: res.statusMessage ?? '', text });
  }

  private async readJson(res: IncomingMessage, ids: RpcId[]): Promise<void> {
    const encoding = headerOf(res, 'content-encoding');
    if (encoding && encoding !== 'identity') {
      res.resume();
      throw new Error(`Unsupported content-encoding: ${encoding}`);
    }
    const { maxResponseBytes: bytes, maxDepth: depth } = this.options;
    const body = Number(headerOf(res, 'content-length') ?? Number.NaN) > bytes ? undefined : await readBounded(res, bytes, false);
    if (body === undefined) {
      res.destroy();
      return this.refuseAll(ids, 'large', 'JSON response');
    }
    const text = body.toString('utf8');
    // Only text longer than 2 * maxDepth can be too deep.
    if (text.length > 2 * depth && exceedsDepth(text, depth)) return this.refuseAll(ids, 'deep', 'JSON response');
    const parsed = JSON.parse(text) as unknown;
    for (const m of Array.isArray(parsed) ? parsed : [parsed]) this.onmessage?.(m as JSONRPCMessage);
  }

  private refuseAll(ids: RpcId[], why: Refusal, what: string): void {
    this.onDrop(this.reason(why, what));
    for (const id of ids) this.onmessage?.(refusedAnswer(id, why, this.options.maxResponseBytes, this.options.maxDepth) as JSONRPCMessage);
  }

  /** An SSE answer to a POST, event by event as the socket delivers it; `onRequestStreamEnd` when it ends. */
  private readEvents(res: IncomingMessage, ids: RpcId[], options: SendOptions): void {
    const pending = [...ids];
    const parser = this.parser(pending);
    res.on('data', (chunk: Buffer) => parser.feed(chunk));
    res.once('close', () => {
      if (!res.complete && !this.closed && options?.requestSignal?.aborted !== true) this.onerror?.(new Error('SSE stream disconnected'));
      if (!this.closed && options?.requestSignal?.aborted !== true) options?.onRequestStreamEnd?.();
    });
  }

  /** A parser whose events go to `onmessage`; refused ones answer `pending`'s requests. */
  private parser(pending: RpcId[]): SseParser {
    return new SseParser({
      maxEventBytes: this.options.maxResponseBytes,
      onRetry: (ms) => (this.serverRetryMs = ms),
      onEvent: (event) => this.event(event, pending),
    });
  }

  private event(event: SseEvent, pending: RpcId[]): void {
    if (event.id !== undefined) this.lastEventId = event.id;
    if (event.type !== '' && event.type !== 'message') return;
    if (event.overflow) return this.refuse(event.overflow, 'large', pending);
    if (event.data === undefined) return;
    const text = event.data.toString('utf8');
    const depth = this.options.maxDepth;
    if (text.length > 2 * depth && exceedsDepth(text, depth)) {
      const sniffer = new MessageSniffer();
      sniffer.feed(event.data);
      return this.refuse(sniffer.result(), 'deep', pending);
    }
    let message: Message;
    try {
      message = JSON.parse(text) as Message;
    } catch (err) {
      return this.onerror?.(err as Error);
    }
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- parsed from the wire: the type is what a peer should send, not what it sent
    if (message !== null && typeof message === 'object' && message.method === undefined) answered(pending, message.id);
    this.onmessage?.(message as JSONRPCMessage);
  }

  /** A refused event: an error for the request it answers (its own id, else the POST's first unanswered one); nothing for notifications. */
  private refuse(seen: Sniffed, why: Refusal, pending: RpcId[]): void {
    this.onDrop(this.reason(why, 'SSE event'));
    const id = seen.kind === 'response' ? seen.id : seen.kind === 'unknown' ? pending[0] : undefined;
    if (id === undefined) return;
    answered(pending, id);
    this.onmessage?.(refusedAnswer(id, why, this.options.maxResponseBytes, this.options.maxDepth) as JSONRPCMessage);
  }

  /**
   * The GET stream of a 2025-11-25 session (the server's own requests and notifications). `attempt`
   * counts failed reopenings: the first open's failure is only reported; once a stream has run, its
   * end schedules a reopening with `Last-Event-ID`, up to `maxRetries` failures in a row.
   */
  private async openStream(attempt: number): Promise<void> {
    if (this.closed) return;
    const headers = this.headers(true);
    headers.accept = 'text/event-stream';
    delete headers['content-type'];
    if (this.lastEventId !== undefined) headers['last-event-id'] = this.lastEventId;
    let res: IncomingMessage;
    try {
      res = await this.exchange('GET', headers, undefined);
      const status = res.statusCode ?? 0;
      if (status === 405) return void res.resume(); // the server offers no GET stream
      if (status < 200 || status > 299) {
        res.resume();
        throw new SdkHttpError(SdkErrorCode.ClientHttpFailedToOpenStream, `Failed to open SSE stream: ${res.statusMessage ?? ''}`, {
          status,
          statusText: res.statusMessage ?? '',
        });
      }
    } catch (err) {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- close() may have run while the request was awaited
      if (this.closed) return;
      if (attempt === 0) return this.onerror?.(err as Error);
      this.onerror?.(new Error(`Failed to reconnect SSE stream: ${(err as Error).message}`));
      return this.scheduleStream(attempt);
    }
    const parser = this.parser([]);
    res.on('data', (chunk: Buffer) => parser.feed(chunk));
    res.once('close', () => {
      if (this.closed) return;
      if (!res.complete) this.onerror?.(new Error('SSE stream disconnected'));
      this.scheduleStream(0);
    });
  }

  private scheduleStream(failures: number): void {
    if (this.closed) return;
    const { maxRetries, initialDelayMs, growFactor, maxDelayMs } = this.reconnect;
    if (failures >= maxRetries) return this.onerror?.(new Error(`Maximum reconnection attempts (${maxRetries}) exceeded.`));
    const delay = this.serverRetryMs ?? Math.min(initialDelayMs * growFactor ** failures, maxDelayMs);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.openStream(failures + 1);
    }, delay);
    this.retryTimer.unref();
  }

  private reason(why: Refusal, what: string): string {
    return why === 'large'
      ? `${what} over maxResponseBytes (${this.options.maxResponseBytes})`
      : `${what} nested deeper than maxDepth (${this.options.maxDepth})`;
  }
}

function noop(): void {}

/** The Host header node:http makes for `hostname` and `port` (an IPv6 literal in brackets, a port other than the default after it). */
function hostHeaderOf(hostname: string, port: string, defaultPort: number): string {
  const colon = hostname.indexOf(':');
  let host = colon !== -1 && hostname.includes(':', colon + 1) && !hostname.startsWith('[') ? `[${hostname}]` : hostname;
  const p = Number(port || defaultPort);
  if (p !== defaultPort) host += `:${p}`;
  return host;
}

function headerOf(res: IncomingMessage, name: string): string | undefined {
  const value = res.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The `type/subtype` of a Content-Type header, lowercased; undefined when absent or ambiguous. */
function mediaType(header: string | undefined): string | undefined {
  if (!header || header.includes(',')) return undefined;
  return header.split(';', 1)[0]?.trim().toLowerCase();
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function answered(pending: RpcId[], id: unknown): void {
  const at = pending.indexOf(id as RpcId);
  if (at !== -1) pending.splice(at, 1);
}

/**
 * A body read up to `limit` bytes: undefined past it (the response is then destroyed), or, with
 * `truncate`, the first `limit` bytes. Rejects when the response breaks off before its end.
 */
function readBounded(res: IncomingMessage, limit: number, truncate: true): Promise<Buffer>;
function readBounded(res: IncomingMessage, limit: number, truncate: false): Promise<Buffer | undefined>;
function readBounded(res: IncomingMessage, limit: number, truncate: boolean): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let done = false;
    const finish = (value: Buffer | undefined) => {
      done = true;
      resolve(value);
    };
    res.on('data', (chunk: Buffer) => {
      if (done) return;
      if (total + chunk.length > limit) {
        if (truncate) chunks.push(chunk.subarray(0, limit - total));
        res.destroy();
        return finish(truncate ? Buffer.concat(chunks) : undefined);
      }
      total += chunk.length;
      chunks.push(chunk);
    });
    res.once('end', () => finish(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total)));
    res.once('close', () => {
      if (!done) reject(new Error('Upstream response closed before its end'));
    });
  });
}
