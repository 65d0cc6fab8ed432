// Tells what a JSON-RPC message is (response and its id, or request/notification) in one pass and constant memory.

/** A JSON-RPC request id. */
export type RpcId = string | number;

const SPACE = 0x20;
const COLON = 0x3a;
const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
/** Longest top-level key or `id` value captured; longer ones are none a JSON-RPC message uses. */
const CAP = 256;

const decoder = new TextDecoder();

/** What a refused message was, as far as its top-level keys tell. */
export type Sniffed = { kind: 'response'; id: RpcId } | { kind: 'call' } | { kind: 'unknown' };

/**
 * Streams over JSON text (UTF-8 bytes, fed in any pieces) and notes the top-level keys of an object:
 * enough to tell a response, and its `id`, from a request or notification without keeping the
 * message. Strings are skipped with `indexOf`, so the scan costs little more than reading the bytes.
 * Never throws: text that is not a JSON object yields "unknown".
 *
 * @example const s = new MessageSniffer(); s.feed(bytes); s.result() // { kind: 'response', id: 7 }
 */
export class MessageSniffer {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private topObject = false;
  private done = false;
  /** At depth 1: the next string is a key (else it is a value). */
  private expectKey = false;
  /** The depth-1 key whose value is being read. */
  private key = '';
  /** Bytes of a depth-1 key or string `id` value being captured; undefined when not capturing. */
  private capture: number[] | undefined;
  private captureIsKey = false;
  /** Bytes of a scalar (number, literal) `id` value. */
  private scalar: number[] = [];
  private id: RpcId | undefined;
  private hasMethod = false;
  private hasOutcome = false;

  /** Takes the next bytes of the message. */
  feed(bytes: Uint8Array): void {
    const n = bytes.length;
    let i = 0;
    while (i < n && !this.done) {
      if (this.inString) {
        i = this.capture ? this.captureString(bytes, i) : this.skipString(bytes, i);
        continue;
      }
      const b = bytes[i++]!;
      if (b === QUOTE) {
        this.inString = true;
        this.escaped = false;
        if (this.depth === 1 && this.topObject && (this.expectKey || this.key === 'id')) {
          this.capture = [];
          this.captureIsKey = this.expectKey;
        }
      } else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
        if (++this.depth === 1) {
          this.topObject = b === OPEN_OBJECT;
          this.expectKey = this.topObject;
        } else if (this.depth === 2 && this.key === 'id') {
          this.id = undefined; // an object or array is no request id
        }
      } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
        if (this.depth === 1) this.endScalar();
        if (--this.depth <= 0) this.done = true;
      } else if (this.depth === 1 && this.topObject) {
        if (b === COMMA) {
          this.endScalar();
          this.expectKey = true;
          this.key = '';
        } else if (b !== COLON && this.key === 'id' && b > SPACE && this.scalar.length < CAP) {
          this.scalar.push(b);
        }
      }
    }
  }

  /**
   * What the bytes fed so far tell. A top-level `method` makes a call at once; a response needs the
   * whole object, with `result` or `error` and a string or number `id` (a later key could still be `method`).
   */
  result(): Sniffed {
    if (!this.topObject) return { kind: 'unknown' };
    if (this.hasMethod) return { kind: 'call' };
    if (this.done && this.hasOutcome && this.id !== undefined) return { kind: 'response', id: this.id };
    return { kind: 'unknown' };
  }

  /** Inside a string nobody needs: jump to its closing quote. Returns where to continue. */
  private skipString(bytes: Uint8Array, from: number): number {
    let start = from;
    for (;;) {
      const quote = bytes.indexOf(QUOTE, start);
      const end = quote === -1 ? bytes.length : quote;
      let run = 0;
      while (end - run - 1 >= start && bytes[end - run - 1] === BACKSLASH) run++;
      const odd = (end - run === start ? run + (this.escaped ? 1 : 0) : run) % 2 === 1;
      if (quote === -1) {
        this.escaped = odd;
        return bytes.length;
      }
      this.escaped = false;
      if (!odd) {
        this.inString = false;
        return quote + 1;
      }
      start = quote + 1; // an escaped quote
    }
  }

  /** Inside a depth-1 key or string id: keep its bytes (up to a cap). Returns where to continue. */
  private captureString(bytes: Uint8Array, from: number): number {
    const capture = this.capture!;
    let i = from;
    for (; i < bytes.length; i++) {
      const b = bytes[i]!;
      if (this.escaped) this.escaped = false;
      else if (b === BACKSLASH) this.escaped = true;
      else if (b === QUOTE) {
        this.inString = false;
        this.endString(capture);
        return i + 1;
      }
      if (capture.length === CAP) {
        // Too long to be a key or id we care about.
        this.capture = undefined;
        if (this.captureIsKey) {
          this.key = '\0long';
          this.expectKey = false;
        } else {
          this.id = undefined;
        }
        return i + 1;
      }
      capture.push(b);
    }
    return i;
  }

  private endString(capture: number[]): void {
    this.capture = undefined;
    let text: string;
    try {
      text = JSON.parse(`"${decoder.decode(Uint8Array.from(capture))}"`) as string;
    } catch {
      text = '\0invalid';
    }
    if (!this.captureIsKey) {
      this.id = text;
      return;
    }
    this.key = text;
    this.expectKey = false;
    if (text === 'method') this.hasMethod = true;
    else if (text === 'result' || text === 'error') this.hasOutcome = true;
    else if (text === 'id') this.id = undefined;
  }

  private endScalar(): void {
    if (this.key === 'id' && this.scalar.length > 0) {
      const text = String.fromCharCode(...this.scalar);
      const value = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text) ? Number(text) : undefined;
      this.id = value;
    }
    this.scalar = [];
  }
}
