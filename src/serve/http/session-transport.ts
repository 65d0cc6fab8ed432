// One 2025-11-25 Streamable HTTP session, the edge of its connection, written straight onto Node's responses: JSON answers, one GET stream.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage, type MessageExtraInfo } from '@modelcontextprotocol/server';
import type { ClassifiedHandler } from '../../wire/compose.js';
import { classify } from '../../wire/envelope.js';
import { RequestIds, spelledId } from '../../wire/raw-id.js';
import { errorText, httpErrorBody, JsonRpc } from '../../errors.js';
import { Revisions } from '../../protocol.js';
import { isJsonContentType } from './content-type.js';

type Id = string | number;

/** Options of {@link HttpSessionTransport}. */
export interface HttpSessionOptions {
  /** Unsent bytes on the GET stream past which it is dropped (the client reconnects). */
  maxQueuedBytes: number;
  /** Interval of SSE keep-alive comments on the GET stream. */
  keepAliveMs: number;
  /** Called once when the session ends (DELETE, close(), or the server closing it). */
  onClosed?: () => void;
  /** Called for each notification dropped: no GET stream open, or the stream dropped for not reading. Default: none. */
  onDropped?: (method: string) => void;
}

/** Where one session's transport hands what it hears: given at construction by `composeHttpSession`, which composes the session. */
export interface HttpSessionHandlers {
  /** A well-formed message from the client, with its kind: classified once, here. */
  receive: ClassifiedHandler;
  /** A failure on the session's GET stream. */
  error: (error: Error) => void;
  /** The session ended; called once, after {@link HttpSessionOptions.onClosed}. */
  closed: () => void;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string>) =>
  void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

/**
 * What a POST gets before its body is looked at: 406 (Accept lacks JSON or SSE), 415 (Content-Type
 * is not JSON); undefined when it may go on. The endpoint asks before an initialize takes a session.
 */
export function refusePost(req: IncomingMessage): { status: 406 | 415; message: string } | undefined {
  const accept = req.headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    return { status: 406, message: 'Not Acceptable: Client must accept both application/json and text/event-stream' };
  }
  if (!isJsonContentType(req.headersDistinct['content-type'])) {
    return { status: 415, message: 'Unsupported Media Type: Content-Type must be application/json' };
  }
  return undefined;
}

/**
 * The server side of one stateful Streamable HTTP session (MCP 2025-11-25), lean: a POSTed request
 * is answered with one `application/json` body when its response is sent (the facade sends nothing
 * else related to a request), notifications and responses get 202, server-initiated notifications
 * go to the session's one GET stream (SSE), and DELETE ends the session. It replaces SDK v2's
 * `NodeStreamableHTTPServerTransport`, whose per-request web `Request`/`Response`/`ReadableStream`
 * conversion cost about six times the relay itself, with the same answers to misuse: 406 (Accept),
 * 415 (Content-Type), 400 (unsupported `MCP-Protocol-Version`, a batch), 409 (a second GET stream),
 * 405 (other methods). The session id is checked by the endpoint before a request gets here.
 * It is the edge of the session: each POSTed message is classified here, once, and handed on with
 * its kind (see `composeHttpSession`, which composes what it is handed to).
 */
export class HttpSessionTransport {
  private readonly pending = new Map<Id, ServerResponse>();
  /** Ids of the requests in `pending`, with their spelling as sent. */
  private readonly ids = new RequestIds();
  private stream: ServerResponse | undefined;
  private keepAlive: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly idHeader: Record<string, string>;

  constructor(
    readonly sessionId: string,
    private readonly options: HttpSessionOptions,
    private readonly handlers: HttpSessionHandlers,
  ) {
    this.idHeader = { 'mcp-session-id': sessionId };
  }

  /**
   * Serves one HTTP request of this session (`body` already read and parsed for POST, `text` its
   * JSON text: a numeric id is echoed as the client spelled it); `extra` (e.g. the request's own
   * `authInfo`) goes with the message to the Server.
   */
  handle(req: IncomingMessage, res: ServerResponse, body: unknown, text = '', extra?: MessageExtraInfo): void {
    if (this.closed) return json(res, 404, httpErrorBody(JsonRpc.SESSION_NOT_FOUND, 'Session not found'), {});
    const version = req.headers['mcp-protocol-version'];
    if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      return json(res, 400, httpErrorBody(JsonRpc.SERVER_ERROR, `Bad Request: Unsupported protocol version: ${version}`), this.idHeader);
    }
    switch (req.method) {
      case 'POST':
        return this.post(req, res, body, text, extra);
      case 'GET':
        return this.get(req, res);
      case 'DELETE':
        res.writeHead(200, this.idHeader).end();
        void this.close();
        return;
      default:
        res.writeHead(405, { allow: 'GET, POST, DELETE', ...this.idHeader }).end();
    }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return;
    const m = message as { id?: Id; method?: string };
    if (m.method === undefined && m.id !== undefined) {
      const res = this.pending.get(m.id);
      if (!res) return; // the client went away meanwhile
      this.pending.delete(m.id);
      // With its Content-Length, the answer leaves in one write (headers and body as one string);
      // without it, Node frames the body as chunked: five pieces in a writev.
      const text = this.ids.serialise(m);
      res.writeHead(200, ['content-type', 'application/json', 'mcp-session-id', this.sessionId, 'content-length', String(Buffer.byteLength(text))]).end(text);
      return;
    }
    const stream = this.stream;
    if (!stream) {
      // No GET stream open: a notification has nowhere to go (the spec allows dropping it); a request
      // (a relayed elicitation) fails at once instead of waiting for an answer that cannot come.
      if (m.method !== undefined && m.id !== undefined) throw new Error('no stream open to send a request on (the client has no GET stream)');
      this.options.onDropped?.(m.method ?? '');
      return;
    }
    stream.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    if (stream.writableLength > this.options.maxQueuedBytes) {
      this.options.onDropped?.(m.method ?? '');
      this.handlers.error(new Error(`GET stream dropped: the client is not reading (${stream.writableLength} bytes unsent)`));
      stream.destroy();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepAlive);
    this.stream?.end();
    this.stream = undefined;
    for (const res of this.pending.values()) json(res, 404, httpErrorBody(JsonRpc.SESSION_NOT_FOUND, 'Session closed'), this.idHeader);
    this.pending.clear();
    this.options.onClosed?.();
    this.handlers.closed();
  }

  private post(req: IncomingMessage, res: ServerResponse, body: unknown, text: string, extra?: MessageExtraInfo): void {
    const refused = refusePost(req);
    if (refused) return json(res, refused.status, httpErrorBody(JsonRpc.SERVER_ERROR, refused.message), this.idHeader);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return json(
        res,
        400,
        httpErrorBody(JsonRpc.INVALID_REQUEST, `Invalid Request: one JSON-RPC message per POST (${Revisions.legacy} has no batches)`),
        this.idHeader,
      );
    }
    const m = body as { id?: unknown; method?: unknown };
    const envelope = classify(body);
    // A malformed message with a readable id is answered here, on its own POST, as stdio answers it
    // (no id readable: id null); a malformed response gets 400 with no body to answer.
    if (envelope.kind === 'invalid') {
      if (!envelope.answer) return void res.writeHead(400, this.idHeader).end();
      const answer = errorText(spelledId(envelope.id, text), JsonRpc.INVALID_REQUEST, `Invalid Request: ${envelope.reason}`);
      return void res.writeHead(400, { 'content-type': 'application/json', ...this.idHeader }).end(answer);
    }
    if (envelope.kind !== 'request') {
      res.writeHead(202, this.idHeader).end();
      this.handlers.receive(body as JSONRPCMessage, envelope.kind, extra);
      return;
    }
    const id = m.id as Id;
    // A second request with the id of one in flight could not be told apart from it: refused, and
    // the first is still answered.
    if (!this.ids.admit(id, text)) {
      return void res
        .writeHead(400, { 'content-type': 'application/json', ...this.idHeader })
        .end(errorText(spelledId(id, text), JsonRpc.INVALID_REQUEST, 'Invalid Request: a request with this id is already in flight'));
    }
    this.pending.set(id, res);
    // A client that gives up on its request cancels it, as if it had said so.
    res.once('close', () => {
      if (this.pending.get(id) !== res) return;
      this.pending.delete(id);
      this.ids.release(id);
      this.handlers.receive({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'client disconnected' } }, 'notification');
    });
    this.handlers.receive(body as JSONRPCMessage, 'request', extra);
  }

  private get(req: IncomingMessage, res: ServerResponse): void {
    if (!(req.headers.accept ?? '').includes('text/event-stream')) {
      return json(res, 406, httpErrorBody(JsonRpc.SERVER_ERROR, 'Not Acceptable: Client must accept text/event-stream'), this.idHeader);
    }
    if (this.stream) return json(res, 409, httpErrorBody(JsonRpc.SERVER_ERROR, 'Conflict: Only one SSE stream is allowed per session'), this.idHeader);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', ...this.idHeader });
    res.flushHeaders();
    this.stream = res;
    clearInterval(this.keepAlive);
    this.keepAlive = setInterval(() => this.stream?.write(': keepalive\n\n'), this.options.keepAliveMs);
    this.keepAlive.unref();
    res.once('close', () => {
      if (this.stream !== res) return;
      this.stream = undefined;
      clearInterval(this.keepAlive);
    });
  }
}
