// The built CLI serving HTTP (`serve --http`) on 127.0.0.1 with an OS-assigned port, its log read as it is written.
import { createInterface } from 'node:readline';
import { execa, type ResultPromise } from 'execa';
import { CLI, assertBuilt } from './built-cli.js';
import { EVENT_TIMEOUT_MS, within } from './gate.js';
import { parseLogLines, type LogRecord } from './logs.js';
import { TempDir } from './temp-dir.js';

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
