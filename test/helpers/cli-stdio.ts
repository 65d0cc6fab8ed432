// The built CLI spawned on stdio as a raw client's carrier: its stdout lines handed on, its stderr log read, its exit awaited. `rawCli` opens a RawClient on it.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { assertBuilt, CLI, isAlive, laneEnv } from './built-cli.js';
import { within } from './gate.js';
import { type LogRecord, parseLogLines } from './logs.js';
import { type Carrier, type CarrierSink, EVENT_MS, RawClient, type RawClientOptions } from './raw-client.js';
import { TempDir } from './temp-dir.js';

/** How to run the CLI for a raw client. */
export interface CliOptions extends RawClientOptions {
  /** --log-level. Default: "info" (upstream lifecycle records are info). */
  logLevel?: string;
  /** The config file's name; its extension picks the format (`config` is written as JSON, or a string as-is). Default: mcp-federate.json. */
  configName?: string;
  /**
   * Read the proxy's stdout. Default: true. With false nothing ever reads it: once the OS pipe and
   * the stream's small buffer are full, the proxy's writes have nowhere to go (a stalled client).
   */
  readStdout?: boolean;
}

/** The built CLI serving `config` over stdio, driven by a {@link RawClient} with raw bytes; dispose with `await using`. */
export function rawCli(config: unknown, options: CliOptions = {}): RawClient<CliStdio> {
  return new RawClient(new CliStdio(config, options), options);
}

/** The built CLI as a process on stdio: the carrier of a raw client, and its log and exit. */
export class CliStdio implements Carrier {
  readonly dir = new TempDir();
  readonly child: ChildProcessWithoutNullStreams;
  stderr = '';
  exitCode: number | null | undefined;
  exitSignal: NodeJS.Signals | null | undefined;
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private sink: CarrierSink | undefined;
  private stdoutRest = '';

  constructor(config: unknown, options: CliOptions = {}) {
    assertBuilt();
    const configFile = this.dir.writeConfig(config, options.configName);
    this.child = spawn(process.execPath, [CLI, '--config', configFile, '--log-level', options.logLevel ?? 'info'], {
      cwd: this.dir.path,
      env: { PATH: process.env.PATH ?? '', MCP_FEDERATE_E2E: '1', ...laneEnv() },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    if (options.readStdout !== false) {
      this.child.stdout.setEncoding('utf8');
      this.child.stdout.on('data', (chunk: string) => this.onStdout(chunk));
    } else {
      // Unread output would keep the stream (and so 'close') open forever once the process is gone.
      this.child.once('exit', () => this.child.stdout.destroy());
    }
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (chunk: string) => {
      this.stderr += chunk;
      this.sink?.wake();
    });
    this.child.stdin.on('error', () => undefined); // EPIPE after the proxy exited: the exit is asserted instead
    this.exited = new Promise((resolve) => {
      this.child.once('close', (code, signal) => {
        this.exitCode = code;
        this.exitSignal = signal;
        resolve({ code, signal });
        this.sink?.wake();
      });
    });
  }

  attach(sink: CarrierSink): void {
    this.sink = sink;
  }

  get pid(): number {
    const pid = this.child.pid;
    if (pid === undefined) throw new Error('proxy did not start');
    return pid;
  }

  /** True while the proxy process runs. */
  get alive(): boolean {
    return this.exitCode === undefined && isAlive(this.pid);
  }

  /** Writes raw bytes onto stdin; resolves once they are handed to the OS (not when the proxy read them). */
  write(data: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      this.child.stdin.write(data, (err) => (err ? reject(err) : resolve()));
    });
  }

  ended(): string | undefined {
    return this.exitCode === undefined ? undefined : `proxy exited (${this.exitCode}, ${this.exitSignal}); stderr:\n${this.tail()}`;
  }

  /**
   * Log records written so far. Lines that are not JSON (a Node warning, a crash's stack trace) are
   * skipped here; they stay in `stderr` for failure messages.
   */
  logs(): LogRecord[] {
    const records: LogRecord[] = [];
    for (const line of this.stderr.slice(0, this.stderr.lastIndexOf('\n') + 1).split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        records.push(...parseLogLines(line));
      } catch {
        // not a log record
      }
    }
    return records;
  }

  /** Log records matching `match`. */
  logCount(match: (r: LogRecord) => boolean): number {
    return this.logs().filter(match).length;
  }

  /** Resolves once at least `n` records match `match`. */
  async waitForLogs(n: number, match: (r: LogRecord) => boolean, what: string, ms = EVENT_MS): Promise<void> {
    await this.until(() => this.logCount(match) >= n, `${n} log record(s): ${what}`, ms);
  }

  /** The first log record matching `match`, as soon as it is written. */
  async waitForLog(match: (r: LogRecord) => boolean, what = 'a matching log record', ms = EVENT_MS): Promise<LogRecord> {
    await this.until(() => this.logs().some(match), what, ms);
    return this.logs().find(match)!;
  }

  /** The end of stderr, for failure messages. */
  tail(chars = 4000): string {
    return this.stderr.slice(-chars);
  }

  /** Resolves with the exit in execa's terms (exit code, signal or undefined, the whole stderr), or rejects after `ms`. */
  async exit(ms = EVENT_MS): Promise<{ exitCode: number | null; signal: NodeJS.Signals | undefined; stderr: string }> {
    const { code, signal } = await within(this.exited, `the proxy to exit; stderr:\n${this.tail()}`, ms);
    return { exitCode: code, signal: signal ?? undefined, stderr: this.stderr };
  }

  /** Ends stdin and waits for the exit (SIGKILL after 3 s), then removes the temp folder; idempotent. */
  async close(): Promise<void> {
    if (this.exitCode === undefined) {
      this.child.stdin.end();
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 3_000);
      await this.exited;
      clearTimeout(timer);
    }
    this.dir[Symbol.dispose]();
  }

  private until(done: () => boolean, what: string, ms: number): Promise<void> {
    if (!this.sink) throw new Error('the CLI carrier is not attached to a client');
    return this.sink.until(done, what, ms);
  }

  private onStdout(chunk: string): void {
    const lines = (this.stdoutRest + chunk).split('\n');
    this.stdoutRest = lines.pop() ?? '';
    for (const raw of lines) this.sink?.line(raw);
  }
}

/** A raw client on the built CLI's stdio. */
export type RawCliClient = RawClient<CliStdio>;
