// The one raw stdio client: the built CLI on stdio spoken to byte by byte (any line, any id), every
// answer kept and matched by id, waits that end on an event (a stdout line, a log line, exit) or fail
// with a readable message after a bound. No sleeps. Used by the hostile-peer suites and the CLI tests.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, CLI, TempDir, assertBuilt, isAlive, parseLogLines, within, type LogRecord, type StdioUpstream } from './helpers.js';

export { within };

export const HOSTILE_FIXTURE = path.join(ROOT, 'test', 'fixtures', 'hostile-upstream.mjs');

/** The raw hostile upstream (see test/fixtures/hostile-upstream.mjs) as a config entry. */
export const hostileUpstream = (...args: string[]): StdioUpstream => ({ command: process.execPath, args: [HOSTILE_FIXTURE, ...args] });

/** Default bound of one wait for an event. */
export const EVENT_MS = 10_000;

/** A JSON-RPC id as read off the wire (anything, for hostile input). */
export type AnyId = unknown;

/** One parsed stdout message. */
export interface Answer {
  jsonrpc?: unknown;
  id?: AnyId;
  method?: unknown;
  result?: Record<string, unknown>;
  error?: { code: unknown; message: unknown; data?: unknown };
}

/** A stable key for an id value: 'string:"x"', 'number:1.5', 'object:null'. */
export const idKey = (id: AnyId): string => `${typeof id}:${JSON.stringify(id)}`;

/** `levels` nested arrays as JSON text (built without recursion). */
export const nested = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);

/** Resident set size of a live process, in bytes (Linux /proc). */
export function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) * 1024;
}

export interface WireOptions {
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

/**
 * The built CLI serving `config` over stdio, driven with raw bytes. Answers (stdout messages without
 * a method) are indexed by {@link idKey}, so a test can ask how many answers an id got.
 */
export class WireSession implements AsyncDisposable {
  readonly dir = new TempDir();
  readonly child: ChildProcessWithoutNullStreams;
  /** Every stdout line, in order (for a line that is not JSON, parsed is undefined). */
  readonly lines: { raw: string; parsed: Answer | undefined }[] = [];
  /** Answers by id key. */
  private readonly answersById = new Map<string, Answer[]>();
  /** Answers with id null (or no id at all), in order. */
  readonly nullAnswers: Answer[] = [];
  stderr = '';
  exitCode: number | null | undefined;
  exitSignal: NodeJS.Signals | null | undefined;
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly wakers = new Set<() => void>();
  private stdoutRest = '';
  private nextId = 1;

  constructor(config: unknown, options: WireOptions = {}) {
    assertBuilt();
    const configFile = this.dir.writeConfig(config, options.configName);
    this.child = spawn(process.execPath, [CLI, '--config', configFile, '--log-level', options.logLevel ?? 'info'], {
      cwd: this.dir.path,
      env: { PATH: process.env.PATH ?? '', MCP_FEDERATE_E2E: '1' },
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
      this.wake();
    });
    this.child.stdin.on('error', () => undefined); // EPIPE after the proxy exited: the exit is asserted instead
    this.exited = new Promise((resolve) => {
      this.child.once('close', (code, signal) => {
        this.exitCode = code;
        this.exitSignal = signal;
        resolve({ code, signal });
        this.wake();
      });
    });
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

  /** Writes raw bytes; resolves once they are handed to the OS (not when the proxy read them). */
  write(data: string | Buffer): Promise<void> {
    if (this.exitCode !== undefined) return Promise.reject(new Error(`proxy exited (${this.exitCode}); stderr:\n${this.tail()}`));
    return new Promise((resolve, reject) => {
      this.child.stdin.write(data, (err) => (err ? reject(err) : resolve()));
    });
  }

  /** Writes one message as one line. */
  send(message: unknown): Promise<void> {
    return this.write(`${JSON.stringify(message)}\n`);
  }

  /** Every stdout line so far, as written. */
  get stdoutLines(): string[] {
    return this.lines.map((l) => l.raw);
  }

  /** Answers seen so far for `id`. */
  answers(id: AnyId): Answer[] {
    return this.answersById.get(idKey(id)) ?? [];
  }

  /** Resolves as soon as `done()` holds (re-checked on every stdout line, stderr chunk and exit). */
  until(done: () => boolean, what: string, ms = EVENT_MS): Promise<void> {
    let check: (() => void) | undefined;
    const settled = new Promise<void>((resolve, reject) => {
      check = () => {
        if (done()) resolve();
        else if (this.exitCode !== undefined) {
          reject(new Error(`proxy exited (${this.exitCode}, ${this.exitSignal}) while waiting for ${what}; stderr:\n${this.tail()}`));
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

  /** Sends a request (a fresh numeric id unless given) and resolves with its answer. */
  async request(method: string, params?: unknown, id: AnyId = `w-${this.nextId++}`, ms = EVENT_MS): Promise<Answer> {
    await this.send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
    return this.answer(id, ms);
  }

  /** initialize + notifications/initialized. */
  async initialize(): Promise<Answer> {
    const answer = await this.request('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'e2e-wire', version: '1.0.0' },
    });
    await this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
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

  async [Symbol.asyncDispose](): Promise<void> {
    if (this.exitCode === undefined) {
      this.child.stdin.end();
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 3_000);
      await this.exited;
      clearTimeout(timer);
    }
    this.dir[Symbol.dispose]();
  }

  private onStdout(chunk: string): void {
    const text = this.stdoutRest + chunk;
    const lines = text.split('\n');
    this.stdoutRest = lines.pop() ?? '';
    for (const raw of lines) {
      let parsed: Answer | undefined;
      try {
        const value: unknown = JSON.parse(raw);
        parsed = typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
      } catch {
        parsed = undefined;
      }
      this.lines.push({ raw, parsed });
      if (parsed && parsed.method === undefined) {
        if (parsed.id === null || parsed.id === undefined) this.nullAnswers.push(parsed);
        else {
          const key = idKey(parsed.id);
          const list = this.answersById.get(key);
          if (list) list.push(parsed);
          else this.answersById.set(key, [parsed]);
        }
      }
    }
    this.wake();
  }

  private wake(): void {
    for (const w of [...this.wakers]) w();
  }
}
