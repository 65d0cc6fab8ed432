// Bounds each event of a Server-Sent Events stream of JSON-RPC messages, replacing refused ones, framing kept.
import type { Transformer } from 'node:stream/web';
import { exceedsDepth } from '../wire/json-depth.js';
import { MessageSniffer, type RpcId } from './message-sniffer.js';

/** Why a message was refused. */
export type Refusal = 'large' | 'deep';

/** Options of {@link boundEventStream}. */
export interface EventBoundsOptions {
  /** Largest event accepted, in bytes (all its lines). */
  maxEventBytes: number;
  /** Deepest nesting accepted in an event's data. */
  maxDepth: number;
  /** Ids of the requests in the POST this stream answers; empty for GET streams. */
  requestIds: readonly RpcId[];
  /** The JSON-RPC error message that stands in for a refused answer to request `id`. */
  refusal: (id: RpcId, why: Refusal) => object;
  /** Hears each refused event (and each cut comment), with a reason for logs. */
  onDrop: (reason: string) => void;
}

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const COLON = 0x3a;
const NEWLINE = new Uint8Array([LF]);
const BOM = [0xef, 0xbb, 0xbf];
/** Longest field name, event type, `id` or `retry` value kept; longer ones are none the SDK acts on. */
const FIELD_CAP = 256;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Passes `body` (an SSE stream) event by event. An event over `maxEventBytes` is discarded up to the
 * blank line that ends it, never held past the limit; one whose data nests deeper than `maxDepth`
 * likewise. A refused `message` event is replaced by `refusal(id)` for the request it answers: its
 * own `id` when it is recognisably a response, else the first request of `requestIds` no passed
 * event has answered; refused notifications, server requests and events of other types are dropped.
 * Its `id` and `retry` fields are kept, so resumption still works. Everything else passes byte for
 * byte; lines may end in LF, CRLF or CR.
 */
export function boundEventStream(body: ReadableStream<Uint8Array>, options: EventBoundsOptions): ReadableStream<Uint8Array> {
  return body.pipeThrough(new TransformStream(new EventBounds(options)));
}

type Field = 'data' | 'event' | 'id' | 'retry' | 'other';

/**
 * A byte-level line parser that holds each event (as views of the incoming chunks) until its blank
 * line, then passes it unchanged or replaces it. Comments between events pass at once; everything
 * else is part of the event being held.
 */
class EventBounds implements Transformer<Uint8Array, Uint8Array> {
  private out!: TransformStreamDefaultController<Uint8Array>;
  private bomSeen = 0;
  private afterCR = false;
  /** Where the previous line's bytes went: a stray LF completing its CRLF follows it there. */
  private previousDirect = true;

  // The current line.
  private atLineStart = true;
  private lineLength = 0;
  /** This line bypasses the held event (a comment or blank line between events). */
  private direct = false;
  private directBytes = 0;
  private field: Field | undefined;
  private readonly name: number[] = [];
  private skipSpace = false;
  private readonly value: number[] = [];
  private valueLong = false;

  // The current event.
  private pieces: Uint8Array[] = [];
  private bytes = 0;
  private overflow = false;
  private data: Uint8Array[] = [];
  private dataBytes = 0;
  private dataLines = 0;
  private eventType = '';
  private eventId: string | undefined;
  private retry: string | undefined;
  private sniffer: MessageSniffer | undefined;

  /** Request ids of the POST this stream answers that no event has answered yet. */
  private readonly pending: RpcId[];
  private readonly answered = new Set<RpcId>();

  constructor(private readonly options: EventBoundsOptions) {
    this.pending = [...options.requestIds];
  }

  transform(chunk: Uint8Array, controller: TransformStreamDefaultController<Uint8Array>): void {
    this.out = controller;
    const n = chunk.length;
    let i = 0;
    // A byte order mark opens the stream, not its first line.
    while (this.bomSeen < 3 && i < n && chunk[i] === BOM[this.bomSeen]) {
      this.bomSeen++;
      controller.enqueue(chunk.subarray(i, ++i));
    }
    if (i < n) this.bomSeen = 3;
    if (this.afterCR && i < n) {
      this.afterCR = false;
      if (chunk[i] === LF) {
        this.stray(chunk.subarray(i, i + 1));
        i++;
      }
    }
    let nextLF = -2;
    let nextCR = -2;
    while (i < n) {
      if (nextLF !== -1 && nextLF < i) nextLF = chunk.indexOf(LF, i);
      if (nextCR !== -1 && nextCR < i) nextCR = chunk.indexOf(CR, i);
      const eol = nextLF === -1 ? nextCR : nextCR === -1 ? nextLF : Math.min(nextLF, nextCR);
      if (eol === -1) {
        this.line(chunk, i, n, n, false);
        break;
      }
      let next = eol + 1;
      if (chunk[eol] === CR) {
        if (next === n) this.afterCR = true;
        else if (chunk[next] === LF) next++;
      }
      this.line(chunk, i, eol, next, true);
      i = next;
    }
  }

  flush(controller: TransformStreamDefaultController<Uint8Array>): void {
    this.out = controller;
    // An unterminated last line is discarded by SSE parsers; its bytes (already held) go out as they came.
    if (this.inEvent()) this.dispatch();
  }

  private inEvent(): boolean {
    return this.pieces.length > 0 || this.overflow;
  }

  /** One segment of a line: content `[start, contentEnd)`, then its terminator up to `next` when `ended`. */
  private line(chunk: Uint8Array, start: number, contentEnd: number, next: number, ended: boolean): void {
    if (this.atLineStart) {
      this.atLineStart = false;
      this.direct = !this.inEvent() && (start === contentEnd || chunk[start] === COLON);
    }
    if (start < contentEnd) {
      this.lineLength += contentEnd - start;
      this.content(chunk, start, contentEnd);
    }
    this.raw(chunk, start, contentEnd, next);
    if (ended) this.lineEnd();
  }

  /** Field name and value bytes of the current line. */
  private content(chunk: Uint8Array, start: number, end: number): void {
    let i = start;
    if (this.field === undefined) {
      // Field names are short: one longer than FIELD_CAP is none the SDK acts on.
      while (i < end && chunk[i] !== COLON) {
        if (this.name.length === FIELD_CAP) return this.setField('other');
        this.name.push(chunk[i++]!);
      }
      if (i === end) return;
      this.setField(fieldOf(this.name));
      this.skipSpace = true;
      if (++i === end) return; // past the colon
    }
    if (this.skipSpace) {
      this.skipSpace = false;
      if (chunk[i] === SPACE && ++i === end) return;
    }
    if (this.field === 'data') this.pushData(chunk.subarray(i, end));
    else if (this.field !== 'other') {
      for (; i < end && !this.valueLong; i++) {
        if (this.value.length === FIELD_CAP) this.valueLong = true;
        else this.value.push(chunk[i]!);
      }
    }
  }

  private setField(field: Field): void {
    this.field = field;
    if (field === 'data' && this.dataLines++ > 0) this.pushData(NEWLINE);
  }

  private pushData(bytes: Uint8Array): void {
    if (this.sniffer) {
      this.sniffer.feed(bytes);
    } else {
      this.data.push(bytes);
      this.dataBytes += bytes.length;
    }
  }

  /** The bytes of a line segment: held with the event, or passed at once for direct lines. */
  private raw(chunk: Uint8Array, start: number, contentEnd: number, next: number): void {
    if (this.direct) {
      // A comment longer than the limit is cut (still a comment): SSE parsers buffer whole lines.
      const room = this.options.maxEventBytes - this.directBytes;
      const length = contentEnd - start;
      if (room > 0 && length > 0) this.out.enqueue(chunk.subarray(start, start + Math.min(room, length)));
      if (room >= 0 && length > room) this.options.onDrop(this.reason('large', 'SSE comment'));
      this.directBytes += length;
      if (next > contentEnd) this.out.enqueue(chunk.subarray(contentEnd, next));
      return;
    }
    this.hold(chunk.subarray(start, next));
  }

  private hold(bytes: Uint8Array): void {
    this.bytes += bytes.length;
    if (this.overflow) return;
    if (this.bytes > this.options.maxEventBytes) {
      // Past the limit: let go of what is held; only the sniffer still looks at the data.
      this.overflow = true;
      this.sniff();
      this.pieces = [];
    } else if (bytes.length > 0) {
      this.pieces.push(bytes);
    }
  }

  /** The LF of a CRLF whose CR ended the previous chunk. */
  private stray(lf: Uint8Array): void {
    if (this.previousDirect) this.out.enqueue(lf);
    else this.hold(lf);
  }

  private lineEnd(): void {
    if (this.lineLength === 0) {
      if (!this.direct) this.dispatch();
      this.previousDirect = true;
    } else {
      if (this.field === undefined) this.setField(fieldOf(this.name));
      const value = this.valueLong ? undefined : decoder.decode(Uint8Array.from(this.value));
      if (this.field === 'event') this.eventType = value ?? '\0long';
      else if (this.field === 'id') this.eventId = value;
      else if (this.field === 'retry') this.retry = value;
      this.previousDirect = this.direct;
    }
    this.atLineStart = true;
    this.lineLength = 0;
    this.direct = false;
    this.directBytes = 0;
    this.field = undefined;
    this.name.length = 0;
    this.skipSpace = false;
    this.value.length = 0;
    this.valueLong = false;
  }

  /** The held event is complete: pass it, or replace it. */
  private dispatch(): void {
    const isMessage = this.eventType === '' || this.eventType === 'message';
    if (this.overflow) {
      this.refuse('large', isMessage);
    } else if (isMessage && this.dataLines > 0) {
      // Only text longer than 2 * maxDepth can be too deep (and bytes >= characters).
      const data = this.data.length === 1 ? this.data[0]! : Buffer.concat(this.data, this.dataBytes);
      if (this.dataBytes > 2 * this.options.maxDepth && exceedsDepth(decoder.decode(data), this.options.maxDepth)) {
        this.sniff();
        this.refuse('deep', true);
      } else {
        this.emitHeld();
        if (this.pending.length > 0) this.track(data);
      }
    } else {
      this.emitHeld();
    }
    this.pieces = [];
    this.bytes = 0;
    this.overflow = false;
    this.data = [];
    this.dataBytes = 0;
    this.dataLines = 0;
    this.eventType = '';
    this.eventId = undefined;
    this.retry = undefined;
    this.sniffer = undefined;
  }

  private emitHeld(): void {
    for (const piece of this.pieces) this.out.enqueue(piece);
  }

  /** Starts sniffing the refused event's message, from the data held so far. */
  private sniff(): void {
    this.sniffer = new MessageSniffer();
    for (const part of this.data) this.sniffer.feed(part);
    this.data = [];
    this.dataBytes = 0;
  }

  /**
   * Replaces a refused event: an error for the request it answers when that is known (its own id if
   * it is recognisably a response, else the first request of this POST not yet answered); nothing for
   * notifications and server requests. `id` and `retry` fields are kept so resumption still works.
   */
  private refuse(why: Refusal, isMessage: boolean): void {
    this.options.onDrop(this.reason(why, 'SSE event'));
    let answer: RpcId | undefined;
    if (isMessage) {
      const seen = this.sniffer?.result() ?? { kind: 'unknown' };
      if (seen.kind === 'response') answer = this.answered.has(seen.id) ? undefined : seen.id;
      else if (seen.kind === 'unknown') answer = this.pending[0];
    }
    let text = '';
    if (this.eventId !== undefined) text += `id: ${this.eventId}\n`;
    if (this.retry !== undefined) text += `retry: ${this.retry}\n`;
    if (answer !== undefined) {
      this.markAnswered(answer);
      text += `event: message\ndata: ${JSON.stringify(this.options.refusal(answer, why))}\n`;
    }
    if (text) this.out.enqueue(encoder.encode(`${text}\n`));
  }

  /** Notes which of the POST's requests a passed event answered (a sniff costs less than a parse). */
  private track(data: Uint8Array): void {
    const sniffer = new MessageSniffer();
    sniffer.feed(data);
    const seen = sniffer.result();
    if (seen.kind === 'response') this.markAnswered(seen.id);
  }

  private reason(why: Refusal, what: string): string {
    return why === 'large' ? `${what} over maxResponseBytes (${this.options.maxEventBytes})` : `${what} nested deeper than maxDepth (${this.options.maxDepth})`;
  }

  private markAnswered(id: RpcId): void {
    this.answered.add(id);
    const at = this.pending.indexOf(id);
    if (at !== -1) this.pending.splice(at, 1);
  }
}

function fieldOf(name: readonly number[]): Field {
  switch (String.fromCharCode(...name)) {
    case 'data':
      return 'data';
    case 'event':
      return 'event';
    case 'id':
      return 'id';
    case 'retry':
      return 'retry';
    default:
      return 'other'; // comments ("" before the colon) included
  }
}
