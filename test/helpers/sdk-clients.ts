// Real SDK clients of the built CLI: on stdio behind an SDK v1 client (ProxyProcess) or an SDK v2 one (V2Proxy), a direct client to an upstream, and an eliciting SDK v2 client over HTTP.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2HttpTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport as V2StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { CLI, assertBuilt, laneEnv, type StdioUpstream } from './built-cli.js';
import { parseLogLines, type LogRecord } from './logs.js';
import { PASS } from './passthrough.js';
import { TempDir } from './temp-dir.js';

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
      env: { ...laneEnv(), ...options.env },
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
      env: laneEnv(),
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
    return this.client.request({ method, params } as never, PASS as never);
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
