// End-to-end helpers: the BUILT CLI as a real process, driven by a real SDK Client (or raw JSON-RPC),
// real upstream processes, temp config files. Everything here is AsyncDisposable (`await using`).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execa, type Options as ExecaOptions, type Result as ExecaResult, type ResultPromise } from 'execa';
import { afterAll, beforeAll } from 'vitest';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CLI = path.join(ROOT, 'dist', 'cli.js');
export const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'catalog-server.mjs');
export const EVERYTHING = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
export const MEMORY = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');
export const PACKAGE_VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
export const META_INCOMPLETE = 'mcp-federate/incomplete';

/** The e2e suite runs the built CLI; `npm test` builds it first (pretest). */
export function assertBuilt(): void {
  if (!existsSync(CLI)) {
    throw new Error(`${CLI} is missing: the e2e tests run the built CLI. Run \`npm run build\` first (\`npm test\` does it via pretest).`);
  }
}

/** A stdio upstream as written in a config file. */
export interface StdioUpstream {
  command: string;
  args: string[];
  env?: Record<string, string>;
  [field: string]: unknown;
}

/** Upstream entries for config files (absolute paths, so the config's folder does not matter). */
export const upstreams = {
  fixture: (...args: string[]): StdioUpstream => ({ command: process.execPath, args: [FIXTURE, ...args] }),
  everything: (): StdioUpstream => ({ command: process.execPath, args: [EVERYTHING, 'stdio'] }),
  memory: (file: string): StdioUpstream => ({ command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: file } }),
  missing: (): StdioUpstream => ({ command: path.join(os.tmpdir(), 'mcp-federate-e2e-no-such-command'), args: [] }),
};

/** `config` with `list.firstWaitMs` 60 s unless it sets one (only for plain config objects). */
export function withPatientLists(config: unknown): unknown {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return config;
  const c = config as Record<string, unknown>;
  if (!('servers' in c) && !('mcpServers' in c)) return config;
  const list = c.list;
  if (list !== undefined && (typeof list !== 'object' || list === null || 'firstWaitMs' in list)) return config;
  return { ...c, list: { ...(list as object | undefined), firstWaitMs: 60_000 } };
}

/** A fresh temp folder, removed on dispose. */
export class TempDir implements Disposable {
  readonly path = mkdtempSync(path.join(os.tmpdir(), 'mcp-federate-e2e-'));
  file(name: string): string {
    return path.join(this.path, name);
  }
  /**
   * Writes `config` as JSON (or a raw string as-is) and returns the file's path. An object config
   * that does not set `list.firstWaitMs` gets 60 s: on a loaded test machine an upstream can take
   * longer than the 2 s default to start, and a test that lists at once expects every upstream
   * (the tests of the wait itself set it).
   */
  writeConfig(config: unknown, name = 'mcp-federate.json'): string {
    const file = this.file(name);
    writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(withPatientLists(config), null, 2));
    return file;
  }
  [Symbol.dispose](): void {
    rmSync(this.path, { recursive: true, force: true });
  }
}

/** One pino record from the proxy's log. */
export type LogRecord = Record<string, unknown> & { level: number; msg: string };

/** Parses JSON log lines; a line that is not JSON fails the test (the proxy logs JSON when not on a TTY). */
export function parseLogLines(text: string): LogRecord[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as LogRecord;
      } catch {
        throw new Error(`log line is not JSON: ${line}`);
      }
    });
}

export interface ProxyOptions {
  /** --log-level. Default: "warn". */
  logLevel?: string;
  /** Extra CLI arguments after the config and log level. */
  args?: string[];
  /** Extra environment for the proxy (on top of the SDK's safe default set). */
  env?: Record<string, string>;
}

/**
 * The built CLI serving `config` on stdio, connected to a real SDK Client over StdioClientTransport.
 * Its stderr (the log, unless --log-file) is captured.
 */
export class ProxyProcess implements AsyncDisposable {
  readonly dir = new TempDir();
  readonly configFile: string;
  readonly client = new Client({ name: 'e2e-client', version: '1.0.0' });
  readonly transport: StdioClientTransport;
  /** Resolves when the proxy's stdio session has closed (the process has exited). */
  readonly closed: Promise<void>;
  private stderrText = '';
  private readonly stderrListeners = new Set<() => unknown>();

  private constructor(config: unknown, options: ProxyOptions) {
    this.configFile = this.dir.writeConfig(config);
    this.transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, '--config', this.configFile, '--log-level', options.logLevel ?? 'warn', ...(options.args ?? [])],
      env: options.env ?? {},
      cwd: this.dir.path,
      stderr: 'pipe',
    });
    this.transport.stderr?.on('data', (chunk: Buffer) => {
      this.stderrText += chunk.toString('utf8');
      for (const l of this.stderrListeners) l();
    });
    this.closed = new Promise((resolve) => {
      this.client.onclose = () => resolve();
    });
  }

  /** Spawns the proxy and completes the MCP handshake. */
  static async start(config: unknown, options: ProxyOptions = {}): Promise<ProxyProcess> {
    assertBuilt();
    const proxy = new ProxyProcess(config, options);
    try {
      await proxy.client.connect(proxy.transport);
    } catch (err) {
      await proxy[Symbol.asyncDispose]();
      throw new Error(`proxy failed to start: ${String(err)}\nstderr:\n${proxy.stderr}`);
    }
    return proxy;
  }

  /** The proxy's pid. */
  get pid(): number {
    const pid = this.transport.pid;
    if (pid === null) throw new Error('proxy is not running');
    return pid;
  }

  /** Everything the proxy wrote to stderr so far. */
  get stderr(): string {
    return this.stderrText;
  }

  /** The proxy's stderr log so far, parsed. */
  logs(): LogRecord[] {
    return parseLogLines(this.stderrText.slice(0, this.stderrText.lastIndexOf('\n') + 1));
  }

  /** Resolves with the first log record matching `predicate`, as soon as it is written; rejects if the proxy exits first. */
  waitForLog(predicate: (r: LogRecord) => boolean): Promise<LogRecord> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.logs().find(predicate);
        if (!found) return false;
        this.stderrListeners.delete(check);
        resolve(found);
        return true;
      };
      this.stderrListeners.add(check);
      void this.closed.then(() => {
        if (!check()) reject(new Error(`proxy exited without logging the expected record; stderr:\n${this.stderr}`));
      });
      check();
    });
  }

  /** Closes the client (ends the proxy's stdin; the SDK escalates to SIGTERM/SIGKILL) and removes the temp folder. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.client.close().catch(() => undefined);
    this.dir[Symbol.dispose]();
  }
}

/** A direct SDK client to an upstream (no proxy), for "what does the upstream itself say" comparisons. */
export class DirectClient implements AsyncDisposable {
  readonly client = new Client({ name: 'e2e-direct', version: '1.0.0' });
  private constructor() {}

  static async start(upstream: StdioUpstream): Promise<DirectClient> {
    const transport = new StdioClientTransport({
      command: upstream.command,
      args: upstream.args,
      env: upstream.env ?? {},
      stderr: 'pipe',
    });
    transport.stderr?.on('data', () => undefined); // drained, not shown
    const direct = new DirectClient();
    try {
      await direct.client.connect(transport);
    } catch (err) {
      await direct[Symbol.asyncDispose]();
      throw err;
    }
    return direct;
  }

  /** Closes the session; the SDK ends the upstream's stdin, then signals it if needed. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.client.close().catch(() => undefined);
  }
}

/** The catalog fixture serving Streamable HTTP (`/mcp`) or legacy SSE (`/sse`) on an ephemeral port. */
export class RemoteFixture implements AsyncDisposable {
  private constructor(
    readonly subprocess: ResultPromise<{ reject: false; stdin: 'ignore' }>,
    readonly port: number,
    readonly url: string,
  ) {}

  static start(mode: 'http' | 'sse', ...args: string[]): Promise<RemoteFixture> {
    return RemoteFixture.startOn(mode, 0, ...args);
  }

  /** Like `start`, on a given port (0: any free one), e.g. to restart a server where it was. */
  static startOn(mode: 'http' | 'sse', port: number, ...args: string[]): Promise<RemoteFixture> {
    return RemoteFixture.spawn(FIXTURE, mode, port, args);
  }

  /** The SDK v2 fixture (`test/fixtures/modern-server.mjs`) over Streamable HTTP, stateless (`createMcpHandler`). */
  static startModern(port = 0): Promise<RemoteFixture> {
    return RemoteFixture.spawn(path.join(ROOT, 'test', 'fixtures', 'modern-server.mjs'), 'http', port, []);
  }

  private static async spawn(script: string, mode: 'http' | 'sse', port: number, args: string[]): Promise<RemoteFixture> {
    const subprocess = execa(process.execPath, [script, `--${mode}`, String(port), ...args], { reject: false, stdin: 'ignore' });
    const lines = createInterface({ input: subprocess.stdout });
    const exited = subprocess.then((r) => {
      throw new Error(`fixture exited before listening (${r.exitCode}): ${String(r.stderr)}`);
    });
    exited.catch(() => undefined);
    const [first] = (await Promise.race([once(lines, 'line'), exited])) as [string];
    lines.close();
    const listening = (JSON.parse(first) as { port: number }).port;
    return new RemoteFixture(subprocess, listening, `http://127.0.0.1:${listening}/${mode === 'http' ? 'mcp' : 'sse'}`);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.subprocess.kill('SIGTERM');
    await this.subprocess;
  }
}

/** Runs the built CLI to completion (never rejects; inspect exitCode, stdout, stderr). */
export async function runCli(args: string[], options: ExecaOptions = {}): Promise<ExecaResult> {
  assertBuilt();
  return (await execa(process.execPath, [CLI, ...args], { reject: false, stdin: 'ignore', timeout: 20_000, ...options })) as ExecaResult;
}

/** How long an e2e test waits for an event before failing with a readable message. */
export const EVENT_TIMEOUT_MS = 10_000;

/** Rejects with a readable message when `p` has not settled within `ms` (a bound on an event wait, never a sleep). */
export async function within<T>(p: Promise<T>, what: string, ms = EVENT_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A JSON-RPC message as read off the wire. */
export type WireMessage = { jsonrpc: '2.0'; id?: number | string; method?: string; params?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };

/**
 * The built CLI serving stdio, spoken to by hand: every stdout line is kept for inspection and
 * the exit code is available (the SDK's StdioClientTransport does not expose it).
 */
export class RawSession implements AsyncDisposable {
  readonly dir = new TempDir();
  readonly subprocess: ResultPromise<{ reject: false; stdin: 'pipe'; env: Record<string, string> }>;
  /** Every stdout line, in order. */
  readonly stdoutLines: string[] = [];
  /** Everything written to stderr so far. */
  stderr = '';
  private readonly stderrListeners = new Set<() => void>();
  private readonly pending = new Map<number, (m: WireMessage) => void>();
  private nextId = 1;
  private readonly exited: Promise<never>;

  /** `config` is written as JSON, or a string as-is, to `configName` (its extension picks the format). */
  constructor(config: unknown, args: string[] = [], configName = 'mcp-federate.json') {
    assertBuilt();
    const configFile = this.dir.writeConfig(config, configName);
    this.subprocess = execa(process.execPath, [CLI, '--config', configFile, ...args], {
      reject: false,
      stdin: 'pipe',
      env: { MCP_FEDERATE_E2E: '1' },
      cwd: this.dir.path,
    });
    const lines = createInterface({ input: this.subprocess.stdout });
    lines.on('line', (line) => {
      this.stdoutLines.push(line);
      let message: WireMessage;
      try {
        message = JSON.parse(line) as WireMessage;
      } catch {
        return; // kept in stdoutLines; the test asserts on it
      }
      if (typeof message.id === 'number' && message.method === undefined) this.pending.get(message.id)?.(message);
    });
    this.subprocess.stderr.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString('utf8');
      for (const l of this.stderrListeners) l();
    });
    this.exited = this.subprocess.then((r) => {
      throw new Error(`proxy exited (${r.exitCode}); stderr:\n${String(r.stderr)}`);
    });
    this.exited.catch(() => undefined);
  }

  /** Resolves with the first stderr log record matching `predicate`, as soon as it is written. */
  waitForLog(predicate: (r: LogRecord) => boolean): Promise<LogRecord> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const complete = this.stderr.slice(0, this.stderr.lastIndexOf('\n') + 1);
        const found = parseLogLines(complete).find(predicate);
        if (!found) return;
        this.stderrListeners.delete(check);
        resolve(found);
      };
      this.stderrListeners.add(check);
      this.exited.catch((err: unknown) => {
        this.stderrListeners.delete(check);
        reject(err as Error);
      });
      check();
    });
  }

  /** Sends a request and resolves with its response message (result or error). */
  async request(method: string, params?: Record<string, unknown>): Promise<WireMessage> {
    const id = this.nextId++;
    const response = new Promise<WireMessage>((resolve) => this.pending.set(id, resolve));
    this.send({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });
    try {
      return await Promise.race([response, this.exited]);
    } finally {
      this.pending.delete(id);
    }
  }

  notify(method: string, params?: Record<string, unknown>): void {
    this.send({ jsonrpc: '2.0', method, ...(params ? { params } : {}) });
  }

  /** initialize + notifications/initialized. */
  async initialize(): Promise<WireMessage> {
    const response = await this.request('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'e2e-raw', version: '1.0.0' },
    });
    this.notify('notifications/initialized');
    return response;
  }

  /** Reads a text resource through the proxy and parses it as JSON. */
  async readJson(uri: string): Promise<Record<string, unknown>> {
    const response = await this.request('resources/read', { uri });
    const contents = (response.result?.contents ?? []) as { text?: string }[];
    if (contents[0]?.text === undefined) throw new Error(`read ${uri} failed: ${JSON.stringify(response)}`);
    return JSON.parse(contents[0].text) as Record<string, unknown>;
  }

  private send(message: unknown): void {
    this.subprocess.stdin.write(`${JSON.stringify(message)}\n`);
  }

  /** Resolves with the exit result, or rejects when the process is still running after `ms`. */
  async exit(ms = 10_000): Promise<Awaited<typeof this.subprocess>> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`proxy still running ${ms} ms later; stderr:\n${this.stderr}`)), ms);
    });
    try {
      return await Promise.race([this.subprocess, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (this.subprocess.exitCode === null && this.subprocess.signalCode === null) {
      this.subprocess.stdin.end();
      const timer = setTimeout(() => this.subprocess.kill('SIGKILL'), 3_000);
      await this.subprocess;
      clearTimeout(timer);
    }
    this.dir[Symbol.dispose]();
  }
}

/** True while a process with this pid exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}

/** Waits (bounded) until `pid` is gone; call after the parent's exit has been observed. */
export async function waitForExit(pid: number, attempts = 100): Promise<boolean> {
  for (let i = 0; i < attempts; i++) {
    if (!isAlive(pid)) return true;
    await delay(20);
  }
  return !isAlive(pid);
}

/** A list walked to its end: every item and each page's size, `_meta` and cursor. */
export interface WalkedList {
  items: Record<string, unknown>[];
  pages: { size: number; meta: Record<string, unknown> | undefined; nextCursor: string | undefined }[];
}

/** Walks resources/list or resources/templates/list to the end (bounded). */
export async function listAll(client: Client, kind: 'resources' | 'templates' = 'resources', maxPages = 100): Promise<WalkedList> {
  const out: WalkedList = { items: [], pages: [] };
  let cursor: string | undefined;
  do {
    const params = cursor === undefined ? {} : { cursor };
    const page = kind === 'resources' ? await client.listResources(params) : await client.listResourceTemplates(params);
    const items = (kind === 'resources' ? page.resources : page.resourceTemplates) as Record<string, unknown>[];
    out.items.push(...items);
    cursor = page.nextCursor;
    out.pages.push({ size: items.length, meta: page._meta, nextCursor: cursor });
    if (out.pages.length > maxPages) throw new Error(`${kind} list did not end within ${maxPages} pages`);
  } while (cursor !== undefined);
  return out;
}

/** The JSON-RPC error a client request rejected with (throws when it resolved). */
export async function rpcError(p: Promise<unknown>): Promise<{ code: unknown; message: string; data: unknown }> {
  try {
    await p;
  } catch (err) {
    const e = err as { code?: unknown; message: string; data?: unknown };
    return { code: e.code, message: e.message, data: e.data };
  }
  throw new Error('expected the request to fail');
}

/** What the client sees for a "Resource not found" about `uri`. */
export const notFound = (uri: string) => ({ code: -32002, message: 'MCP error -32002: Resource not found', data: { uri } });

/**
 * One long-lived resource per describe block: created in beforeAll, disposed in afterAll.
 * Returns a getter (the value exists only once beforeAll ran).
 */
export function suiteResource<T extends AsyncDisposable>(make: () => Promise<T>): () => T {
  let value: T | undefined;
  beforeAll(async () => {
    value = await make();
  });
  afterAll(async () => {
    await value?.[Symbol.asyncDispose]();
    value = undefined;
  });
  return () => {
    if (value === undefined) throw new Error('suite resource not started');
    return value;
  };
}

/** Several disposables as one, disposed in reverse order. */
export function disposeAll(...items: (AsyncDisposable | undefined)[]): AsyncDisposable {
  return {
    async [Symbol.asyncDispose]() {
      for (const item of items.reverse()) await item?.[Symbol.asyncDispose]();
    },
  };
}

/** The text of catalog fixture resource `i` (see test/fixtures/catalog-server.mjs). */
export function fixtureText(i: number, size: number): string {
  const filler = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(Math.ceil(size / 36) + 1);
  return `resource ${i}: ${filler}`.slice(0, size);
}

/** The bytes of catalog fixture blob resource `i` (every tenth: 9, 19, ...). */
export function fixtureBlob(i: number, size: number): Buffer {
  const bytes = Buffer.alloc(size);
  for (let j = 0; j < size; j++) bytes[j] = (i * 31 + j) & 0xff;
  return bytes;
}

/** What reading catalog fixture resource `i` returns, with `uri` as given. */
export function fixtureContent(uri: string, i: number, size: number): Record<string, string> {
  return i % 10 === 9
    ? { uri, mimeType: 'application/octet-stream', blob: fixtureBlob(i, size).toString('base64') }
    : { uri, mimeType: 'text/plain', text: fixtureText(i, size) };
}

/** `uri` with the namespace of `server`. */
export const ns = (server: string, uri: string): string => `${server}+${uri}`;
