// Newline-delimited JSON-RPC over a readable/writable pair: one write per event-loop turn, one parse per message.
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** Options of {@link LineTransport}. */
export interface LineTransportOptions {
  /** Largest message accepted, in bytes; a longer line closes the transport. Default: 64 MiB. */
  maxMessageBytes?: number;
  /** Answer a line that is not JSON with a JSON-RPC -32700 "Parse error" (server side). Default: false. */
  replyToParseErrors?: boolean;
}

const NEWLINE = 0x0a;

/**
 * The SDK's stdio transports validate every message with zod, which `Protocol` repeats when it
 * dispatches, and issue one write (a syscall on a pipe) per message. This transport parses each
 * line once (Protocol still classifies and validates it) and coalesces all messages sent in one
 * event-loop turn into a single write: under concurrent load that is most of the proxy's cost.
 */
export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private pending: string[] = [];
  private flushScheduled = false;
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private closed = false;
  private readonly maxMessageBytes: number;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly options: LineTransportOptions = {},
  ) {
    this.maxMessageBytes = options.maxMessageBytes ?? 64 * 1024 * 1024;
  }

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('error', this.onStreamError);
    this.output.on('error', this.onStreamError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error('Not connected'));
    this.pending.push(JSON.stringify(message));
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.flush);
    }
    if (!this.output.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => this.output.once('drain', resolve));
  }

  /** Writes what is pending and detaches from the streams. Idempotent; does not end the streams. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('error', this.onStreamError);
    this.output.off('error', this.onStreamError);
    this.partial = [];
    this.onclose?.();
  }

  private readonly flush = (): void => {
    this.flushScheduled = false;
    if (this.pending.length === 0 || this.closed) return;
    const data = this.pending.length === 1 ? `${this.pending[0]}\n` : `${this.pending.join('\n')}\n`;
    this.pending = [];
    this.output.write(data);
  };

  private readonly onData = (chunk: Buffer): void => {
    let start = 0;
    let nl = chunk.indexOf(NEWLINE);
    while (nl !== -1 && !this.closed) {
      let line: string;
      if (this.partial.length > 0) {
        this.partial.push(chunk.subarray(start, nl));
        line = Buffer.concat(this.partial).toString('utf8');
        this.partial = [];
        this.partialBytes = 0;
      } else {
        line = chunk.toString('utf8', start, nl);
      }
      this.handleLine(line);
      start = nl + 1;
      nl = chunk.indexOf(NEWLINE, start);
    }
    if (start < chunk.length && !this.closed) {
      this.partial.push(chunk.subarray(start));
      this.partialBytes += chunk.length - start;
      if (this.partialBytes > this.maxMessageBytes) {
        this.onerror?.(new Error(`message exceeds ${this.maxMessageBytes} bytes`));
        void this.close();
      }
    }
  };

  private handleLine(raw: string): void {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      message = undefined;
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      this.onerror?.(new Error('received a line that is not a JSON-RPC message'));
      if (this.options.replyToParseErrors) {
        void this.send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } } as unknown as JSONRPCMessage);
      }
      return;
    }
    this.onmessage?.(message as JSONRPCMessage);
  }

  private readonly onStreamError = (error: Error): void => {
    this.onerror?.(error);
  };
}
