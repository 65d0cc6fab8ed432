// The one raw JSON-RPC client: messages written as they are (any line, any id), every answer kept and matched by id, waits that end on an event or fail after a bound; over a pluggable carrier (in memory and HTTP POST here, the spawned CLI's stdio in cli-stdio.ts).
import { InMemoryTransport, type JSONRPCMessage } from '@modelcontextprotocol/client';
import { EVENT_TIMEOUT_MS, within } from './gate.js';
import { postRpc } from './raw-http.js';
import { CLIENT_INFO, V2025 } from './rpc-messages.js';
import { Stream } from './sse-stream.js';

/** Default bound of one wait for an event. */
export const EVENT_MS = EVENT_TIMEOUT_MS;

/** A JSON-RPC id as read off the wire (anything, for hostile input). */
export type AnyId = unknown;

/** One parsed incoming message. */
export interface Answer {
  jsonrpc?: unknown;
  id?: AnyId;
  method?: unknown;
  params?: unknown;
  result?: Record<string, unknown>;
  error?: { code: unknown; message: unknown; data?: unknown };
}

/** A stable key for an id value: 'string:"x"', 'number:1.5', 'object:null'. */
export const idKey = (id: AnyId): string => `${typeof id}:${JSON.stringify(id)}`;

/** `levels` nested arrays as JSON text (built without recursion). */
export const nested = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);

/** What a carrier hands its client. */
export interface CarrierSink {
  /** One incoming message as text (a stdout line, an SSE event's data, a JSON body). */
  line(raw: string): void;
  /** Something else happened (a log line, an exit): the waits check again. */
  wake(): void;
  /** The client's wait: resolves once `done()` holds, re-checked on every event; fails after `ms` or once the carrier has ended. */
  until(done: () => boolean, what: string, ms?: number): Promise<void>;
}

/** How a raw client's messages travel. */
export interface Carrier {
  /** Starts handing what arrives to `sink` (called once, by the client's constructor). */
  attach(sink: CarrierSink): void;
  /** Writes raw text or bytes as they are: onto a pipe, as one POST body, or as one in-memory message. */
  write(data: string | Buffer): Promise<void>;
  /** Why nothing more can arrive (e.g. the process exited), once that is so; a pending wait then fails with it. */
  ended(): string | undefined;
  /** Ends the carrier; idempotent. */
  close(): Promise<void>;
}

/** Options of a raw client. */
export interface RawClientOptions {
  /**
   * Answers a request the other side sends (elicitation, sampling, roots): its result, or undefined
   * for -32601. Default: every such request is answered -32601.
   */
  answerRequest?: (request: { method: string; params?: unknown }) => Record<string, unknown> | undefined;
}

/**
 * The one raw client. Incoming messages without a method are answers, indexed by {@link idKey}, so a
 * test can ask how many answers an id got; answers with a null or missing id are kept in order.
 */
export class RawClient<C extends Carrier = Carrier> implements AsyncDisposable {
  /** Every incoming message, in order (for one that is not a JSON object, parsed is undefined). */
  readonly lines: { raw: string; parsed: Answer | undefined }[] = [];
  /** Answers with id null (or no id at all), in order. */
  readonly nullAnswers: Answer[] = [];
  private readonly answersById = new Map<string, Answer[]>();
  private readonly wakers = new Set<() => void>();
  private nextId = 1;

  constructor(
    readonly carrier: C,
    private readonly options: RawClientOptions = {},
  ) {
    carrier.attach({ line: (raw) => this.onLine(raw), wake: () => this.wake(), until: (done, what, ms) => this.until(done, what, ms) });
  }

  /**
   * A raw client on one in-memory connection (stdio's shape) handed to `connect` (e.g. a harness's
   * `proxy.connect`), once the connection is made.
   */
  static async memory(connect: (transport: InMemoryTransport) => Promise<unknown>, options: RawClientOptions = {}): Promise<RawClient<MemoryCarrier>> {
    const carrier = new MemoryCarrier();
    const client = new RawClient(carrier, options);
    await carrier.open(connect);
    return client;
  }

  /** A raw client whose every message is one POST to `url` (answers read from the JSON or SSE response). */
  static http(url: URL | string, options: HttpCarrierOptions & RawClientOptions = {}): RawClient<HttpCarrier> {
    return new RawClient(new HttpCarrier(url, options), options);
  }

  /** Writes raw text or bytes; resolves once the carrier took them (not when the other side read them). */
  write(data: string | Buffer): Promise<void> {
    const ended = this.carrier.ended();
    if (ended !== undefined) return Promise.reject(new Error(ended));
    return this.carrier.write(data);
  }

  /** Writes one message as one line, exactly as given. */
  send(message: unknown): Promise<void> {
    return this.write(`${JSON.stringify(message)}\n`);
  }

  /** Sends a notification. */
  notify(method: string, params?: unknown): Promise<void> {
    return this.send({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) });
  }

  /** Every incoming message so far, as written. */
  get rawLines(): string[] {
    return this.lines.map((l) => l.raw);
  }

  /** Answers seen so far for `id`. */
  answers(id: AnyId): Answer[] {
    return this.answersById.get(idKey(id)) ?? [];
  }

  /** Resolves as soon as `done()` holds (re-checked on every incoming message and carrier event); fails after `ms`, or once the carrier ended. */
  until(done: () => boolean, what: string, ms = EVENT_MS): Promise<void> {
    let check: (() => void) | undefined;
    const settled = new Promise<void>((resolve, reject) => {
      check = () => {
        if (done()) resolve();
        else {
          const ended = this.carrier.ended();
          if (ended !== undefined) reject(new Error(`while waiting for ${what}: ${ended}`));
        }
      };
      this.wakers.add(check);
      check();
    });
    return within(settled, what, ms).finally(() => {
      if (check) this.wakers.delete(check);
    });
  }

  /** The first answer for `id`, as soon as it arrives. */
  async answer(id: AnyId, ms = EVENT_MS): Promise<Answer> {
    await this.until(() => this.answers(id).length > 0, `an answer with id ${JSON.stringify(id)}`, ms);
    return this.answers(id)[0]!;
  }

  /** Sends a request (a fresh id `w-<n>` unless given) and resolves with its answer. */
  async request(method: string, params?: unknown, id: AnyId = `w-${this.nextId++}`, ms = EVENT_MS): Promise<Answer> {
    await this.send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
    return this.answer(id, ms);
  }

  /** A 2025-11-25 initialize declaring `capabilities`, then notifications/initialized; the initialize answer. */
  async initialize(capabilities: Record<string, unknown> = {}): Promise<Answer> {
    const answer = await this.request('initialize', { protocolVersion: V2025, capabilities, clientInfo: CLIENT_INFO });
    await this.notify('notifications/initialized');
    return answer;
  }

  /** The text of a successful single-content read (throws with the answer otherwise). */
  async readText(uri: string, ms = EVENT_MS): Promise<string> {
    const answer = await this.request('resources/read', { uri }, undefined, ms);
    const text = (answer.result?.contents as { text?: unknown }[] | undefined)?.[0]?.text;
    if (typeof text !== 'string') throw new Error(`read ${uri} failed: ${JSON.stringify(answer).slice(0, 500)}`);
    return text;
  }

  /** A text resource read and parsed as JSON (throws with the answer when the read failed). */
  async readJson(uri: string, ms = EVENT_MS): Promise<Record<string, unknown>> {
    return JSON.parse(await this.readText(uri, ms)) as Record<string, unknown>;
  }

  /** Closes the carrier. */
  close(): Promise<void> {
    return this.carrier.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private onLine(raw: string): void {
    let parsed: Answer | undefined;
    try {
      const value: unknown = JSON.parse(raw);
      parsed = typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
    } catch {
      parsed = undefined;
    }
    this.lines.push({ raw, parsed });
    if (parsed && typeof parsed.method === 'string' && parsed.id !== undefined) this.answerRequest(parsed as Answer & { method: string });
    else if (parsed && parsed.method === undefined) {
      if (parsed.id === null || parsed.id === undefined) this.nullAnswers.push(parsed);
      else {
        const key = idKey(parsed.id);
        const list = this.answersById.get(key);
        if (list) list.push(parsed);
        else this.answersById.set(key, [parsed]);
      }
    }
    this.wake();
  }

  /** A request from the other side gets exactly one answer. */
  private answerRequest(request: Answer & { method: string }): void {
    const result = this.options.answerRequest?.({ method: request.method, params: request.params });
    const answer = result
      ? { jsonrpc: '2.0', id: request.id, result }
      : { jsonrpc: '2.0', id: request.id, error: { code: -32601, message: 'Method not found' } };
    if (this.carrier.ended() === undefined) this.send(answer).catch(() => undefined);
  }

  private wake(): void {
    for (const w of [...this.wakers]) w();
  }
}

/** One in-memory connection (the SDK's InMemoryTransport), as a carrier. */
export class MemoryCarrier implements Carrier {
  private readonly clientSide: InMemoryTransport;
  private readonly serverSide: InMemoryTransport;
  private closed = false;

  constructor() {
    [this.clientSide, this.serverSide] = InMemoryTransport.createLinkedPair();
  }

  attach(sink: CarrierSink): void {
    this.clientSide.onmessage = (m) => sink.line(JSON.stringify(m));
    this.clientSide.onclose = () => {
      this.closed = true;
      sink.wake();
    };
  }

  /** Starts this side and hands the other to `connect`. */
  async open(connect: (transport: InMemoryTransport) => Promise<unknown>): Promise<void> {
    await this.clientSide.start();
    await connect(this.serverSide);
  }

  /** Sends `data` as one message (it must be JSON: an in-memory connection carries messages, not bytes). */
  write(data: string | Buffer): Promise<void> {
    return this.clientSide.send(JSON.parse(String(data)) as JSONRPCMessage);
  }

  ended(): string | undefined {
    return this.closed ? 'the in-memory connection closed' : undefined;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.clientSide.close();
  }
}

/** Options of an HTTP carrier. */
export interface HttpCarrierOptions {
  /** Sent as `authorization: Bearer <token>` on every POST. */
  token?: string;
  /** More headers on every POST. */
  headers?: Record<string, string>;
}

/**
 * Each message one POST to an MCP endpoint; what the response carries (a JSON body, or each event of
 * an SSE stream as it arrives) is handed on. The 2025 session id the endpoint sets on initialize is
 * sent on every later POST, with `mcp-protocol-version: 2025-11-25`.
 */
export class HttpCarrier implements Carrier {
  /** The 2025 session id, once the endpoint gave one. */
  sid: string | undefined;
  /** The HTTP status of each POST that carried a request, by the request's {@link idKey}. */
  readonly statuses = new Map<string, number>();
  private sink!: CarrierSink;
  private readonly streams = new Set<Stream>();
  private readonly bodies = new Set<Promise<void>>();

  constructor(
    readonly url: URL | string,
    private readonly options: HttpCarrierOptions = {},
  ) {}

  attach(sink: CarrierSink): void {
    this.sink = sink;
  }

  /** The HTTP status of the POST that carried request `id`. */
  statusOf(id: AnyId): number | undefined {
    return this.statuses.get(idKey(id));
  }

  /** POSTs `data` as the body; resolves once the response's headers arrived (its body is read on). */
  async write(data: string | Buffer): Promise<void> {
    const body = String(data);
    const res = await postRpc(this.url, body, {
      ...(this.options.token === undefined ? {} : { token: this.options.token }),
      ...(this.sid === undefined ? {} : { sid: this.sid }),
      ...(this.options.headers ? { headers: this.options.headers } : {}),
    });
    this.sid ??= res.headers.get('mcp-session-id') ?? undefined;
    const id = requestId(body);
    if (id !== undefined) this.statuses.set(idKey(id), res.status);
    const read = this.readBody(res).finally(() => this.bodies.delete(read));
    this.bodies.add(read);
  }

  ended(): string | undefined {
    return undefined;
  }

  /** Stops reading every open response stream. */
  async close(): Promise<void> {
    for (const s of this.streams) s.close();
    await Promise.allSettled([...this.bodies]);
  }

  private async readBody(res: Response): Promise<void> {
    if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) {
      const stream = new Stream(res, (data) => this.sink.line(data));
      this.streams.add(stream);
      await stream.ended;
      this.streams.delete(stream);
      return;
    }
    const text = await res.text().catch(() => '');
    if (text.trim() !== '') this.sink.line(text);
    else this.sink.wake();
  }
}

/** The id of the request a POST body holds, if it is one. */
function requestId(body: string): AnyId {
  try {
    const m = JSON.parse(body) as { id?: unknown; method?: unknown };
    return typeof m.method === 'string' ? m.id : undefined;
  } catch {
    return undefined;
  }
}
