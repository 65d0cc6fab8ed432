// Newline-delimited JSON-RPC over a readable/writable pair: bounded input, bounded output, one write per event-loop turn.
import type { Readable, Writable } from 'node:stream';
import type { Transport, JSONRPCMessage } from '@modelcontextprotocol/server';
import { errorAnswer, JsonRpc } from '../errors.js';
import { readableId, type ReadableId } from './envelope.js';
import { DEFAULT_MAX_DEPTH, exceedsDepth } from './json-depth.js';
import { numericIdLexeme, RequestIds, spelledId } from './raw-id.js';

/** Why a line was not passed on as a message (`duplicate-id`: a request whose id is already in flight). */
export type RefusalReason = 'parse-error' | 'too-large' | 'too-deep' | 'duplicate-id';

/** A line the transport refused, with the id it carried when one could be read. */
export interface Refusal {
  reason: RefusalReason;
  /** The message's id (top level; for an oversized line, read from its start or its end), else null. */
  id: ReadableId;
  /** The bound that was exceeded (bytes or levels). */
  limit?: number;
  /** The id as the peer spelled it (JSON text), when it was a number written otherwise than `JSON.stringify` would. */
  idText?: string;
}

/** What was lost when the output had to be abandoned. */
export interface OutputLoss {
  /** `overflow`: the peer fell `maxQueuedBytes` behind; `write-error`: the stream failed. */
  reason: 'overflow' | 'write-error';
  /** The stream's error, for `write-error`. */
  error?: string;
  /** Messages queued or being written that will not reach the peer. */
  messages: number;
  /** Bytes of output not yet taken by the peer (ours plus the stream's buffer). */
  queuedBytes: number;
}

/** Options of {@link LineTransport}. */
export interface LineTransportOptions {
  /** Longest line accepted, in bytes; a longer one is discarded up to its newline and refused. Default: 16 MiB. */
  maxMessageBytes?: number;
  /** Deepest nesting accepted; a deeper message is refused. Default: 1000. */
  maxDepth?: number;
  /** Bound on output the peer has not taken yet, in bytes; past it the transport closes. Default: 64 MiB. */
  maxQueuedBytes?: number;
  /**
   * Messages with the same key replace each other while unsent: the newest is kept, at the end of
   * the queue (e.g. one `resources/updated` per URI). Default: none coalesce.
   */
  coalesceKey?: (message: JSONRPCMessage) => string | undefined;
}

/** An unexpected failure inside the transport (a bug, not a peer's bad input): the connection was closed. */
export class TransportFailure extends Error {
  override readonly name = 'TransportFailure';
}

const NEWLINE = 0x0a;
const HEAD_BYTES = 512;
const TAIL_BYTES = 256;
const RESOLVED = Promise.resolve();
const TOMBSTONE = '';

/** An oversized line being skipped: its first and last bytes are kept to find its id. */
interface Discard {
  head: Buffer;
  tail: Buffer;
}

/** A {@link LineTransport}'s handlers, given at construction. */
export type LineHandlers = Partial<Pick<LineTransport, 'onclose' | 'onerror' | 'onmessage' | 'onrefused' | 'onloss'>>;

/**
 * Reads and writes one JSON-RPC message per line. Input is bounded before anything else looks at
 * it: a line over `maxMessageBytes` is skipped to its newline without being buffered (framing is
 * kept) and refused with whatever id its first or last bytes hold; a line that is not JSON, or nests
 * deeper than `maxDepth`, is refused too. Refusals go to {@link onrefused}; the owner decides how to
 * answer (a server replies with an error, a client fails the pending request).
 *
 * Output is coalesced into one write per event-loop turn and bounded: while the stream needs a
 * `drain`, messages wait in this transport's queue (one drain listener, not one per message), where
 * keyed messages replace older ones with the same key. If the peer still falls `maxQueuedBytes`
 * behind, the transport gives up on it: {@link onloss}, then close (a failed write likewise). Nothing a peer sends can
 * throw out of the stream callbacks: an unexpected failure closes this transport only.
 */
export class LineTransport implements Transport {
  private started = false;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** A line that was not passed on (not JSON, too large, too deep). Default: reported to `onerror`. */
  onrefused?: (refusal: Refusal) => void;
  /** Output was abandoned (the peer fell `maxQueuedBytes` behind, or a write failed); the transport closes right after. */
  onloss?: (loss: OutputLoss) => void;

  private readonly maxMessageBytes: number;
  private readonly maxDepth: number;
  private readonly maxQueuedBytes: number;
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private discard: Discard | undefined;
  private queue: string[] = [];
  private queuedBytes = 0;
  private live = 0;
  private readonly keyed = new Map<string, number>();
  private inFlight = 0;
  /** Ids of requests the peer has in flight, to refuse a second one with the same id and to echo ids as sent. */
  private readonly requestIds = new RequestIds();
  private flushScheduled = false;
  private waitingForDrain = false;
  private closed = false;

  /** `handlers` are set at construction, by the owner that composes the connection (a transport wrapping this one). */
  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly options: LineTransportOptions = {},
    handlers: LineHandlers = {},
  ) {
    Object.assign(this, handlers);
    this.maxMessageBytes = options.maxMessageBytes ?? 16 * 1024 * 1024;
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    this.maxQueuedBytes = options.maxQueuedBytes ?? 64 * 1024 * 1024;
  }

  /** Starts reading. Idempotent (a connection may be handed on after it started). */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.input.on('data', this.onData);
    this.input.on('error', this.onInputError);
    this.output.on('error', this.onOutputError);
  }

  /** Stops reading input (backpressure towards the peer); lines already read are still handled. */
  pauseInput(): void {
    this.input.pause();
  }

  /** Reads input again after {@link pauseInput}. */
  resumeInput(): void {
    if (!this.closed) this.input.resume();
  }

  /** Bytes of output the peer has not taken yet (this queue plus the stream's own buffer). */
  get pendingBytes(): number {
    return this.queuedBytes + this.output.writableLength;
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error('Not connected'));
    const text = this.serialise(message);
    if (text === undefined) return RESOLVED;
    return this.sendText(text, message);
  }

  /** Sends JSON text written by the caller (an answer whose id must keep the peer's spelling). */
  sendText(text: string, message?: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error('Not connected'));
    const key = message && this.options.coalesceKey?.(message);
    if (key !== undefined) {
      const older = this.keyed.get(key);
      if (older !== undefined) this.drop(older);
      this.keyed.set(key, this.queue.length);
    }
    this.queue.push(text);
    this.queuedBytes += text.length + 1;
    this.live++;
    if (this.pendingBytes > this.maxQueuedBytes) {
      this.abandon({ reason: 'overflow', messages: this.live + this.inFlight, queuedBytes: this.pendingBytes });
      return RESOLVED;
    }
    if (!this.flushScheduled && !this.waitingForDrain) {
      this.flushScheduled = true;
      setImmediate(this.flush);
    }
    return RESOLVED;
  }

  /** Writes what is pending (unless the peer overflowed) and detaches from the streams. Idempotent; does not end the streams. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('error', this.onInputError);
    this.output.off('error', this.onOutputError);
    this.output.off('drain', this.onDrain);
    this.partial = [];
    this.discard = undefined;
    this.onclose?.();
  }

  /** JSON text of `message`; a response that cannot be serialised (too deep, a cycle) becomes an error for its id. */
  private serialise(message: JSONRPCMessage): string | undefined {
    try {
      return this.requestIds.serialise(message);
    } catch (err) {
      this.onerror?.(new Error(`cannot serialise an outgoing message: ${(err as Error).message}`));
      const m = message as { id?: unknown; method?: unknown };
      if (m.method !== undefined || m.id === undefined) return undefined;
      return JSON.stringify(errorAnswer(readableId(m.id), JsonRpc.INTERNAL_ERROR, 'Internal error'));
    }
  }

  private drop(index: number): void {
    const text = this.queue[index];
    if (text === undefined || text === TOMBSTONE) return;
    this.queue[index] = TOMBSTONE;
    this.queuedBytes -= text.length + 1;
    this.live--;
  }

  private readonly flush = (): void => {
    this.flushScheduled = false;
    if (this.closed || this.live === 0) return;
    if (this.output.writableNeedDrain) {
      if (!this.waitingForDrain) {
        this.waitingForDrain = true;
        this.output.once('drain', this.onDrain);
      }
      return;
    }
    const texts = this.live === this.queue.length ? this.queue : this.queue.filter((t) => t !== TOMBSTONE);
    const count = this.live;
    this.queue = [];
    this.keyed.clear();
    this.queuedBytes = 0;
    this.live = 0;
    this.inFlight += count;
    const data = texts.length === 1 ? `${texts[0]}\n` : `${texts.join('\n')}\n`;
    this.output.write(data, (err) => {
      if (!err) this.inFlight -= count; // on error they are lost: counted by onOutputError
    });
  };

  private readonly onDrain = (): void => {
    this.waitingForDrain = false;
    this.flush();
  };

  /** Gives up on the peer's output (it is not reading, or the stream failed): report the loss, then close. */
  private abandon(loss: OutputLoss): void {
    this.queue = [];
    this.keyed.clear();
    this.queuedBytes = 0;
    this.live = 0;
    try {
      this.onloss?.(loss);
    } finally {
      void this.close();
    }
  }

  private readonly onData = (chunk: Buffer): void => {
    try {
      this.consume(chunk);
    } catch (err) {
      // Only a bug of ours can land here (peers' input is bounded and refused above); the cost
      // of it is this one connection, never the process.
      this.onerror?.(new TransportFailure(`closing the connection after an unexpected failure: ${(err as Error).message}`));
      void this.close();
    }
  };

  private consume(chunk: Buffer): void {
    let start = 0;
    let nl = chunk.indexOf(NEWLINE);
    while (nl !== -1 && !this.closed) {
      this.lineEnds(chunk.subarray(start, nl));
      start = nl + 1;
      nl = chunk.indexOf(NEWLINE, start);
    }
    if (start >= chunk.length || this.closed) return;
    const rest = chunk.subarray(start);
    if (this.discard) {
      this.discard.tail = tailOf([this.discard.tail, rest]);
      return;
    }
    this.partial.push(rest);
    this.partialBytes += rest.length;
    if (this.partialBytes > this.maxMessageBytes) this.startDiscard(this.partial);
  }

  /** `piece` completes the current line. */
  private lineEnds(piece: Buffer): void {
    if (this.discard) return this.endDiscard(piece);
    if (this.partialBytes + piece.length > this.maxMessageBytes) {
      this.startDiscard([...this.partial, piece]);
      return this.endDiscard(Buffer.alloc(0));
    }
    let line: string;
    if (this.partial.length > 0) {
      this.partial.push(piece);
      line = Buffer.concat(this.partial).toString('utf8');
      this.partial = [];
      this.partialBytes = 0;
    } else {
      line = piece.toString('utf8');
    }
    this.handleLine(line);
  }

  private startDiscard(buffers: Buffer[]): void {
    this.discard = { head: headOf(buffers), tail: tailOf(buffers) };
    this.partial = [];
    this.partialBytes = 0;
  }

  private endDiscard(piece: Buffer): void {
    const { head, tail } = this.discard!;
    this.discard = undefined;
    const id = idAtStart(head.toString('utf8')) ?? idAtEnd(tailOf([tail, piece]).toString('utf8'));
    this.refuse({ reason: 'too-large', id, limit: this.maxMessageBytes });
  }

  private handleLine(raw: string): void {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return this.refuse({ reason: 'parse-error', id: null });
    }
    const m =
      typeof message === 'object' && message !== null && !Array.isArray(message)
        ? (message as { id?: unknown; method?: unknown; params?: { requestId?: unknown } })
        : undefined;
    if (exceedsDepth(line, this.maxDepth)) {
      const id = m ? readableId(m.id) : null;
      return this.refuse({ reason: 'too-deep', id, limit: this.maxDepth, ...idText(id, line) });
    }
    if (m && 'method' in m) {
      if ('id' in m && !this.requestIds.admit(m.id, line)) {
        // Always answered as text: an answer through send() would settle the first request's id.
        const id = readableId(m.id);
        return this.refuse({ reason: 'duplicate-id', id, idText: spelledId(id, line) });
      }
      if (m.method === 'notifications/cancelled') this.requestIds.release(m.params?.requestId);
    }
    this.onmessage?.(message as JSONRPCMessage);
  }

  private refuse(refusal: Refusal): void {
    if (this.onrefused) this.onrefused(refusal);
    else this.onerror?.(new Error(`refused a message (${refusal.reason})`));
  }

  private readonly onInputError = (error: Error): void => {
    this.onerror?.(error);
  };

  /** A failed write loses everything not yet written: say how much, and stop using the stream. */
  private readonly onOutputError = (error: Error): void => {
    if (this.closed) return;
    this.abandon({ reason: 'write-error', error: error.message, messages: this.live + this.inFlight, queuedBytes: this.pendingBytes });
  };
}

/** `{ idText }` when the numeric `id` was spelled otherwise than JSON would write it; else nothing. */
function idText(id: ReadableId, line: string): { idText?: string } {
  if (typeof id !== 'number') return {};
  const lexeme = numericIdLexeme(line);
  return lexeme === undefined || lexeme === String(id) ? {} : { idText: lexeme };
}

/** The first {@link HEAD_BYTES} of a line held in pieces. */
function headOf(buffers: Buffer[]): Buffer {
  const out: Buffer[] = [];
  let n = 0;
  for (const b of buffers) {
    if (n >= HEAD_BYTES) break;
    const take = b.subarray(0, HEAD_BYTES - n);
    out.push(take);
    n += take.length;
  }
  return Buffer.concat(out);
}

/** The last {@link TAIL_BYTES} of a line held in pieces (copied, so big chunks are not retained). */
function tailOf(buffers: Buffer[]): Buffer {
  const out: Buffer[] = [];
  let n = 0;
  for (let i = buffers.length - 1; i >= 0 && n < TAIL_BYTES; i--) {
    const b = buffers[i]!;
    const take = b.subarray(Math.max(0, b.length - (TAIL_BYTES - n)));
    out.unshift(take);
    n += take.length;
  }
  return Buffer.from(Buffer.concat(out));
}

const ID_VALUE = String.raw`(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.){0,256}")`;
/** `{"id":7,...` or `{"jsonrpc":"2.0","id":7,...`: where clients put the id. */
const ID_AT_START = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*` + ID_VALUE);
/** `...,"id":7}` or `..."id":7,"jsonrpc":"2.0"}`: where the SDK's serialised responses put it. */
const ID_AT_END = new RegExp(String.raw`"id"\s*:\s*` + ID_VALUE + String.raw`\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$`);

function parseId(match: RegExpExecArray | null): ReadableId | undefined {
  if (!match?.[1]) return undefined;
  try {
    return readableId(JSON.parse(match[1]));
  } catch {
    return undefined;
  }
}

/** The id of an oversized line, read from its first bytes. */
export function idAtStart(head: string): ReadableId | undefined {
  return parseId(ID_AT_START.exec(head));
}

/** The id of an oversized line, read from its last bytes (a top-level key closes the object). */
export function idAtEnd(tail: string): ReadableId {
  return parseId(ID_AT_END.exec(tail.endsWith('\r') ? tail.slice(0, -1) : tail)) ?? null;
}
