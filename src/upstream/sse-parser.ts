// An incremental Server-Sent Events parser over raw socket chunks: each event's data bounded in bytes, nothing held past the bound.
import { MessageSniffer, type Sniffed } from './message-sniffer.js';

/** One complete event, as the lean HTTP client needs it. */
export interface SseEvent {
  /** The `event` field; "" when absent (a `message`). */
  type: string;
  /** The `id` field of this event, when it had one. */
  id: string | undefined;
  /** The data lines joined with LF; undefined when the event had none or its data went past the bound. */
  data: Buffer | undefined;
  /** Present when the data went past `maxEventBytes`: what its message was, as far as a sniff tells. */
  overflow: Sniffed | undefined;
}

/** Options of {@link SseParser}. */
export interface SseParserOptions {
  /** Largest data of one event, in bytes; past it the data is only sniffed, not kept. */
  maxEventBytes: number;
  /** Hears each complete event (a blank line ended it). */
  onEvent: (event: SseEvent) => void;
  /** Hears each valid `retry` field, in milliseconds. */
  onRetry?: (ms: number) => void;
}

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const COLON = 0x3a;
const NEWLINE = Buffer.from([LF]);
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
/** Longest field name or `event`/`id`/`retry` value kept; longer ones are none the client acts on. */
const FIELD_CAP = 256;

type Field = 'data' | 'event' | 'id' | 'retry' | 'other';

/**
 * Feeds on `Buffer` chunks as a socket delivers them (lines may end in LF, CRLF or CR, and be split
 * anywhere). Data bytes are kept as views of the chunks until their event ends; an event whose data
 * passes `maxEventBytes` lets go of them and is reported with `overflow` instead. Comments and unknown
 * fields cost nothing; field names and values are capped. An unterminated last event is discarded, as
 * the SSE standard says.
 */
export class SseParser {
  private afterCR = false;
  private atStart = true;
  // The current line.
  private lineLength = 0;
  private field: Field | undefined;
  private name = '';
  private skipSpace = false;
  private value = '';
  // The current event.
  private data: Buffer[] = [];
  private dataBytes = 0;
  private dataLines = 0;
  private sniffer: MessageSniffer | undefined;
  private type = '';
  private id: string | undefined;

  constructor(private readonly options: SseParserOptions) {}

  /** Takes the next bytes of the stream. */
  feed(chunk: Buffer): void {
    const n = chunk.length;
    let i = 0;
    if (this.atStart) {
      // A byte order mark may open the stream (only a whole one at the very start is skipped).
      if (n >= 3 && chunk[0] === BOM[0] && chunk[1] === BOM[1] && chunk[2] === BOM[2]) i = 3;
      this.atStart = false;
    }
    if (this.afterCR && i < n) {
      this.afterCR = false;
      if (chunk[i] === LF) i++;
    }
    let nextLF = -2;
    let nextCR = -2;
    while (i < n) {
      if (nextLF !== -1 && nextLF < i) nextLF = chunk.indexOf(LF, i);
      if (nextCR !== -1 && nextCR < i) nextCR = chunk.indexOf(CR, i);
      const eol = nextLF === -1 ? nextCR : nextCR === -1 ? nextLF : Math.min(nextLF, nextCR);
      if (eol === -1) {
        this.segment(chunk, i, n);
        return;
      }
      this.segment(chunk, i, eol);
      this.lineEnd();
      i = eol + 1;
      if (chunk[eol] === CR) {
        if (i === n) this.afterCR = true;
        else if (chunk[i] === LF) i++;
      }
    }
  }

  /** Part of a line, `[start, end)` of `chunk`. */
  private segment(chunk: Buffer, start: number, end: number): void {
    if (start === end) return;
    this.lineLength += end - start;
    let i = start;
    if (this.field === undefined) {
      const colon = chunk.indexOf(COLON, i);
      const nameEnd = colon === -1 || colon >= end ? end : colon;
      if (this.name.length < FIELD_CAP) this.name += chunk.toString('latin1', i, Math.min(nameEnd, i + FIELD_CAP));
      if (nameEnd === end) return;
      this.setField(fieldOf(this.name));
      this.skipSpace = true;
      i = nameEnd + 1;
      if (i === end) return;
    }
    if (this.skipSpace) {
      this.skipSpace = false;
      if (chunk[i] === SPACE && ++i === end) return;
    }
    if (this.field === 'data') this.pushData(chunk.subarray(i, end));
    else if (this.field !== 'other' && this.value.length <= FIELD_CAP) this.value += chunk.toString('utf8', i, Math.min(end, i + FIELD_CAP + 1));
  }

  private setField(field: Field): void {
    this.field = field;
    if (field === 'data' && this.dataLines++ > 0) this.pushData(NEWLINE);
  }

  private pushData(bytes: Buffer): void {
    if (this.sniffer) return this.sniffer.feed(bytes);
    this.dataBytes += bytes.length;
    if (this.dataBytes <= this.options.maxEventBytes) {
      this.data.push(bytes);
      return;
    }
    // Past the bound: let go of what is held; only the sniffer still looks at the data.
    this.sniffer = new MessageSniffer();
    for (const part of this.data) this.sniffer.feed(part);
    this.sniffer.feed(bytes);
    this.data = [];
  }

  private lineEnd(): void {
    if (this.lineLength === 0) {
      this.dispatch();
    } else {
      if (this.field === undefined) this.setField(fieldOf(this.name));
      const value = this.value.length > FIELD_CAP ? undefined : this.value;
      if (this.field === 'event') this.type = value ?? '\0long';
      else if (this.field === 'id' && value !== undefined && !value.includes('\0')) this.id = value;
      else if (this.field === 'retry' && value !== undefined && /^\d+$/.test(value)) this.options.onRetry?.(Number(value));
    }
    this.lineLength = 0;
    this.field = undefined;
    this.name = '';
    this.skipSpace = false;
    this.value = '';
  }

  private dispatch(): void {
    if (this.dataLines > 0 || this.id !== undefined) {
      const overflow = this.sniffer?.result();
      const data = overflow || this.dataLines === 0 ? undefined : this.data.length === 1 ? this.data[0] : Buffer.concat(this.data, this.dataBytes);
      this.options.onEvent({ type: this.type, id: this.id, data, overflow });
    }
    this.data = [];
    this.dataBytes = 0;
    this.dataLines = 0;
    this.sniffer = undefined;
    this.type = '';
    this.id = undefined;
  }
}

function fieldOf(name: string): Field {
  switch (name) {
    case 'data':
    case 'event':
    case 'id':
    case 'retry':
      return name;
    default:
      return 'other'; // comments ("" before the colon) included
  }
}
