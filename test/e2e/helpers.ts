// End-to-end helpers: the BUILT CLI as a real process, driven by a real SDK Client (raw JSON-RPC: wire.ts),
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
import { Client as V2Client, StreamableHTTPClientTransport as V2HttpTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport as V2StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { execa, type Options as ExecaOptions, type Result as ExecaResult, type ResultPromise } from 'execa';
import { afterAll, beforeAll } from 'vitest';
import { EVENT_TIMEOUT_MS, within } from '../helpers/gate.js';

export { EVENT_TIMEOUT_MS, within };

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
  return { ...c, list: { ...list, firstWaitMs: 60_000 } };
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

/**
 * The built CLI on stdio with an SDK v2 client. `mode` is its version negotiation: `auto` (the
 * default) probes with server/discover and is served 2026-07-28, as Claude Code is; `legacy` is the
 * plain 2025-11-25 initialize, so the 2025 path is driven by both SDKs.
 */
export class V2Proxy implements AsyncDisposable {
  readonly dir = new TempDir();
  readonly client: V2Client;
  readonly transport: V2StdioClientTransport;
  constructor(config: unknown, mode: 'auto' | 'legacy' = 'auto') {
    assertBuilt();
    this.client = new V2Client({ name: 'e2e-modern', version: '1.0.0' }, { versionNegotiation: { mode } });
    this.transport = new V2StdioClientTransport({
      command: process.execPath,
      args: [CLI, '--config', this.dir.writeConfig(config), '--log-level', 'warn'],
      env: {},
      cwd: this.dir.path,
      stderr: 'pipe',
    });
  }
  async start(): Promise<this> {
    await this.client.connect(this.transport);
    return this;
  }
  /** A raw request: the result exactly as the proxy sent it (no client-side cache, no typed helper). */
  raw(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    return this.client.request({ method, params } as never, { '~standard': { version: 1, vendor: 'test', validate: (v: unknown) => ({ value: v }) } } as never);
  }
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

/** How to run `serve --http` (see {@link HttpGatewayProcess}). */
export interface HttpGatewayOptions {
  /** --log-level; the CLI's default (info) when absent. */
  logLevel?: string;
  /** Extra CLI arguments after the config and log level. */
  args?: string[];
  /** Run `dist/cli.js` itself, so its shebang's V8 settings apply (as installed); else `node dist/cli.js`. */
  direct?: boolean;
  /** Bound on the wait for `listening`. Default: {@link EVENT_TIMEOUT_MS}. */
  listenMs?: number;
  /** Environment variables added to the process's. Default: none. */
  env?: Record<string, string>;
}

/**
 * The built CLI serving HTTP on 127.0.0.1 with an OS-assigned port: `url` once its log says
 * `listening`, `started` once every upstream has made its first connection attempt, the whole log
 * in `log`. Each HTTP suite subclasses it with the requests it makes; dispose with `await using`.
 */
export class HttpGatewayProcess implements AsyncDisposable {
  readonly dir = new TempDir();
  process!: ResultPromise<{ reject: false; stdin: 'ignore'; all: true }>;
  url!: URL;
  /** The log (stderr) so far, line by line. */
  log = '';
  /** Resolves when every upstream has made its first connection attempt (`upstreams started`). */
  started!: Promise<void>;

  private readonly lineListeners = new Set<(line: string) => void>();

  /** A plain gateway on an existing config file (a suite that needs no requests of its own). */
  static async serve(configFile: string, options: HttpGatewayOptions = {}): Promise<HttpGatewayProcess> {
    const g = new HttpGatewayProcess();
    await g.spawn(configFile, options);
    return g;
  }

  /** Spawns `serve --http` on `configFile`; resolves once it listens. */
  protected async spawn(configFile: string, options: HttpGatewayOptions = {}): Promise<void> {
    assertBuilt();
    const args = [
      'serve',
      '--http',
      '--port',
      '0',
      '--config',
      configFile,
      ...(options.logLevel ? ['--log-level', options.logLevel] : []),
      ...(options.args ?? []),
    ];
    const execaOptions = { reject: false, stdin: 'ignore', all: true, ...(options.env ? { env: options.env } : {}) } as const;
    this.process = options.direct ? execa(CLI, args, execaOptions) : execa(process.execPath, [CLI, ...args], execaOptions);
    createInterface({ input: this.process.stderr }).on('line', (line) => {
      this.log += `${line}\n`;
      for (const l of [...this.lineListeners]) l(line);
    });
    this.started = this.nextLog((r) => r.msg === 'upstreams started').then(() => undefined);
    const exited = this.process.then((r): never => {
      throw new Error(`gateway exited ${r.exitCode}: ${this.log}`);
    });
    exited.catch(() => undefined);
    const listening = this.nextLog((r) => r.msg === 'listening' && typeof r.url === 'string');
    this.url = new URL((await within(Promise.race([listening, exited]), 'the gateway to listen', options.listenMs)).url as string);
  }

  /** The first record of the whole log (so far, or as soon as it is written) that matches; bounded by `ms`. */
  waitForLog(predicate: (r: LogRecord) => boolean, what = 'a gateway log record', ms = EVENT_TIMEOUT_MS): Promise<LogRecord> {
    let check: ((line?: string) => void) | undefined;
    const found = new Promise<LogRecord>((resolve) => {
      check = () => {
        const record = parseLogLines(this.log).find(predicate);
        if (!record) return;
        this.lineListeners.delete(check!);
        resolve(record);
      };
      this.lineListeners.add(check);
      check();
    });
    return within(found, what, ms).finally(() => this.lineListeners.delete(check!));
  }

  /** The first log record from now on that matches. */
  nextLog(match: (r: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    return new Promise((resolve) => {
      const l = (line: string) => {
        const r = JSON.parse(line) as Record<string, unknown>;
        if (!match(r)) return;
        this.lineListeners.delete(l);
        resolve(r);
      };
      this.lineListeners.add(l);
    });
  }

  get pid(): number {
    return this.process.pid!;
  }

  /** SIGTERM; resolves with the exit code. */
  async stop(): Promise<number | undefined> {
    this.process.kill('SIGTERM');
    return (await this.process).exitCode;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (this.process.exitCode === null) await this.stop();
    this.dir[Symbol.dispose]();
  }
}

/** Runs the built CLI to completion (never rejects; inspect exitCode, stdout, stderr). */
export async function runCli(args: string[], options: ExecaOptions = {}): Promise<ExecaResult> {
  assertBuilt();
  return await execa(process.execPath, [CLI, ...args], { reject: false, stdin: 'ignore', timeout: 20_000, ...options });
}

export { rpcError } from '../helpers/rpc-error.js';

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

/**
 * An SDK v2 client over HTTP to `url`, negotiating the revision (2026-07-28 with the gateway), that
 * declares form elicitation and answers every question with `{ name }` accepted.
 */
export async function elicitingModernClient(url: URL, clientName: string, name: string): Promise<V2Client> {
  const client = new V2Client({ name: clientName, version: '1.0.0' }, {
    capabilities: { elicitation: { form: {} } },
    versionNegotiation: { mode: 'auto' },
  } as never);
  client.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { name } }) as never);
  await client.connect(new V2HttpTransport(url));
  return client;
}
