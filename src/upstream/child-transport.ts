// Client transport to an upstream child process over stdio (spawn, framing, stderr lines, graceful stop).
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Transport, JSONRPCMessage } from '@modelcontextprotocol/client';
import { LineTransport, type Refusal } from '../wire/line-transport.js';
import { safeEnvironment } from './safe-env.js';

/** How to start the child. */
export interface ChildTransportParams {
  command: string;
  args: string[];
  /** Added to the SDK's safe default environment (PATH, HOME, ...): the proxy's secrets are not inherited. */
  env: Record<string, string>;
  cwd?: string | undefined;
  /** Receives each line the child writes to stderr (never forwarded to our stdout). */
  onStderrLine?: (line: string) => void;
  /** Grace period after closing stdin, and again after SIGTERM, before escalating. Default: 2000 ms. */
  killGraceMs?: number;
  /** Largest message the child may send, in bytes. Default: see {@link LineTransport}. */
  maxMessageBytes?: number;
  /** Deepest nesting accepted from the child. Default: see {@link LineTransport}. */
  maxDepth?: number;
}

/** Lines of the child's stderr kept for {@link ChildTransport.stderrTail}, and the characters kept of each. */
const STDERR_TAIL_LINES = 20;
const STDERR_LINE_CHARS = 1000;

/**
 * Like the SDK's StdioClientTransport (same environment rules and stop sequence: stdin end,
 * SIGTERM, SIGKILL) but framed by {@link LineTransport}, so writes to the child are batched.
 */
export class ChildTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** A line from the child that was not passed on (see {@link LineTransport.onrefused}). */
  onrefused?: (refusal: Refusal) => void;
  private child: ChildProcess | undefined;
  private lines: LineTransport | undefined;
  private exited: Promise<void> | undefined;
  private starting: Promise<void> | undefined;
  private readonly stderrLines: string[] = [];

  constructor(private readonly params: ChildTransportParams) {}

  /**
   * The last lines (up to 20, each cut at 1000 characters) the child wrote to stderr: why a child
   * that failed did so, kept without logging every line above info.
   */
  get stderrTail(): readonly string[] {
    return [...this.stderrLines];
  }

  /**
   * The child's stderr stream (read by this transport; exposed so SDK 2.x recognises a stdio
   * transport by shape and probes a protocol version in place the way it does for its own).
   */
  get stderr(): NodeJS.ReadableStream | null {
    return this.child?.stderr ?? null;
  }

  /** The child's pid once started. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Spawns the child. Idempotent: a transport started early (see `prespawn`) is adopted by `Client.connect`. */
  start(): Promise<void> {
    this.starting ??= this.spawn();
    return this.starting;
  }

  private async spawn(): Promise<void> {
    const child = spawn(this.params.command, this.params.args, {
      env: { ...safeEnvironment(), ...this.params.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      shell: false,
      windowsHide: true,
      ...(this.params.cwd ? { cwd: this.params.cwd } : {}),
    });
    this.child = child;
    this.exited = new Promise((resolve) => child.once('close', () => resolve()));
    const { maxMessageBytes, maxDepth } = this.params;
    // The child's framing hands its messages, errors and refusals to this transport's handlers, set by whoever connects it.
    const lines: LineTransport = new LineTransport(
      child.stdout,
      child.stdin,
      {
        ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }),
        ...(maxDepth === undefined ? {} : { maxDepth }),
      },
      {
        onmessage: (m) => this.onmessage?.(m),
        onerror: (e) => this.onerror?.(e),
        onrefused: (r) => (this.onrefused ? this.onrefused(r) : this.onerror?.(new Error(`refused a message (${r.reason})`))),
        // The framing gave up (unexpected failure, or the child stopped reading its stdin): the child
        // is of no more use, so stop it; its exit reports the close and the upstream reconnects.
        onclose: () => {
          if (this.child === child) void this.close();
        },
      },
    );
    this.lines = lines;
    const onStderrLine = this.params.onStderrLine;
    createInterface({ input: child.stderr, crlfDelay: Infinity }).on('line', (line) => {
      if (this.stderrLines.push(line.slice(0, STDERR_LINE_CHARS)) > STDERR_TAIL_LINES) this.stderrLines.shift();
      onStderrLine?.(line);
    });
    child.once('close', () => {
      this.child = undefined;
      void lines.close();
      this.onclose?.();
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', (err) => {
        reject(err);
        this.onerror?.(err);
      });
    });
    await lines.start();
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (!this.lines || !this.child) return Promise.reject(new Error('Not connected'));
    return this.lines.send(message);
  }

  /** SIGKILL at once: for a child that stopped answering (liveness), which no grace period would help. */
  kill(): void {
    this.child?.kill('SIGKILL');
  }

  /** Ends stdin, then SIGTERM, then SIGKILL, each after the grace period. Idempotent. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const grace = this.params.killGraceMs ?? 2000;
    const exited = this.exited!;
    const within = (ms: number) => Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
    try {
      child.stdin?.end();
    } catch {
      // already gone
    }
    if (await within(grace)) return;
    child.kill('SIGTERM');
    if (await within(grace)) return;
    child.kill('SIGKILL');
    await exited;
  }
}
