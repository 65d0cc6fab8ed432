// The response of one 2026-07-28 request the HTTP lane answers: one JSON body, or, once a notification tied to it comes first, the SSE stream the SDK's per-request transport would switch to.
import type { ServerResponse } from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import type { LazyAbort } from '../../cancel.js';
import { answerStatus, KEEP_ALIVE_FRAME, messageFrame, STREAM_HEADERS, STREAM_KEEP_ALIVE_MS } from '../../eras/rev2026-http-lane.js';

const JSON_TYPE = { 'content-type': 'application/json' };
const SENT = Promise.resolve();

/** Bytes per write of a large answer: the output budget is checked after each, and stops one that takes its principal past the bound. */
const SLICE = 256 * 1024;

/**
 * Where a lane request's answer goes, as SDK v2's `PerRequestHTTPServerTransport` (behind its Node
 * adapter) would send it: the answer alone as `application/json` with {@link answerStatus}; but a
 * notification tied to the request before it (an upstream's message relayed during a call) turns
 * the response into `text/event-stream` (status 200, the SDK's headers, a keep-alive comment every
 * 15 s), the notification and then the answer each one `message` frame, and the stream ends after
 * the answer. The client going away (`close` before the answer) aborts `controller`.
 */
export class LaneResponse {
  private streaming = false;
  private keepAlive: NodeJS.Timeout | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly controller: LazyAbort,
  ) {
    res.once('close', this.gone);
  }

  /** The request was settled: the client going away no longer cancels it. */
  readonly ended = (): void => {
    this.res.off('close', this.gone);
  };

  /** Sends the answer (the only message, or the stream's last). */
  readonly send = (answer: JSONRPCMessage): Promise<void> => {
    const res = this.res;
    this.stopKeepAlive();
    if (res.writableEnded || res.destroyed) return SENT;
    if (this.streaming) writeSliced(res, messageFrame(answer));
    else writeAnswer(res, answerStatus(answer as { error?: { code?: unknown } }), JSON.stringify(answer));
    return SENT;
  };

  /** Sends a notification tied to the request (the first one opens the stream). */
  readonly notify = (notification: { method: string; params: Record<string, unknown> }): Promise<void> => {
    const res = this.res;
    if (res.writableEnded || res.destroyed) return SENT;
    if (!this.streaming) {
      this.streaming = true;
      res.writeHead(200, STREAM_HEADERS);
      this.keepAlive = setInterval(this.tick, STREAM_KEEP_ALIVE_MS);
      this.keepAlive.unref();
    }
    res.write(messageFrame({ jsonrpc: '2.0', method: notification.method, params: notification.params }));
    return SENT;
  };

  private readonly gone = (): void => {
    this.stopKeepAlive();
    this.controller.abort('client disconnected');
  };

  private readonly tick = (): void => {
    if (this.res.writableEnded || this.res.destroyed) this.stopKeepAlive();
    else this.res.write(KEEP_ALIVE_FRAME);
  };

  private stopKeepAlive(): void {
    if (this.keepAlive === undefined) return;
    clearInterval(this.keepAlive);
    this.keepAlive = undefined;
  }
}

/**
 * Sends one JSON answer with its `Content-Length`. A large one goes out as bytes, a slice per write:
 * the principal's output budget (which checks after every write) closes the response as soon as it
 * goes past the bound, before the rest is queued, and the text is not held beside the bytes.
 */
function writeAnswer(res: ServerResponse, status: number, body: string): void {
  if (body.length <= SLICE) {
    res.writeHead(status, JSON_TYPE).end(body);
    return;
  }
  const bytes = Buffer.from(body);
  res.writeHead(status, { ...JSON_TYPE, 'content-length': String(bytes.length) });
  writeSlices(res, bytes);
}

/** Writes the last of a stream (headers already sent), a slice at a time when large, and ends it. */
function writeSliced(res: ServerResponse, text: string): void {
  if (text.length <= SLICE) res.end(text);
  else writeSlices(res, Buffer.from(text));
}

function writeSlices(res: ServerResponse, bytes: Buffer): void {
  for (let at = 0; at < bytes.length && !res.destroyed; at += SLICE) res.write(bytes.subarray(at, at + SLICE));
  if (!res.destroyed) res.end();
}
