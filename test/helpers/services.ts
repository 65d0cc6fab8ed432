// Real Debian services for the scale-out tests: a throwaway redis-server (no persistence) and an haproxy, each in a temp dir on a free loopback port.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { within } from './gate.js';
import { TempDir } from './temp-dir.js';

/** The path of a Debian binary: on PATH, else in the sbin folders root's PATH has and a test runner's may not. */
export function findBinary(name: string): string | undefined {
  const which = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) return which.stdout.trim();
  return ['/usr/sbin', '/usr/bin', '/usr/local/bin', '/usr/local/sbin'].map((d) => path.join(d, name)).find((p) => existsSync(p));
}

/** A loopback port free right now (the OS picks it; a service started on it next almost surely gets it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Waits for a line of `child`'s output (stdout and stderr) that matches, or its exit. */
function lineOf(child: ChildProcess, match: RegExp, what: string): Promise<void> {
  return within(
    new Promise<void>((resolve, reject) => {
      let seen = '';
      const onLine = (line: string) => {
        seen += `${line}\n`;
        if (match.test(line)) resolve();
      };
      createInterface({ input: child.stdout! }).on('line', onLine);
      createInterface({ input: child.stderr! }).on('line', onLine);
      child.once('exit', (code) => reject(new Error(`${what} exited (${code}) before it was ready:\n${seen}`)));
    }),
    what,
  );
}

/** A redis-server on 127.0.0.1, no persistence, in its own temp dir; `restart()` keeps its port. */
export class RedisServer implements AsyncDisposable {
  private child!: ChildProcess;
  private readonly dir = new TempDir('redis');

  private constructor(readonly port: number) {}

  static async start(): Promise<RedisServer> {
    return RedisServer.startOn(await freePort());
  }

  /** On a given port (one a client is already trying to reach). */
  static async startOn(port: number): Promise<RedisServer> {
    const r = new RedisServer(port);
    await r.spawn();
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  private async spawn(): Promise<void> {
    const bin = findBinary('redis-server');
    if (!bin) throw new Error('redis-server not found (apt-get install redis-server; .ci/run does)');
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir.path, '--daemonize', 'no'];
    this.child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    await lineOf(this.child, /Ready to accept connections/, 'redis-server');
  }

  /** SIGKILL, then wait for the exit. */
  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGKILL');
    await exited;
  }

  /** A fresh, empty server on the same port (what a crashed Redis without persistence comes back as). */
  async restart(): Promise<void> {
    await this.kill();
    await this.spawn();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.kill();
    this.dir[Symbol.dispose]();
  }
}

/** An haproxy in front of `backends` (host:port), round robin on /mcp, sticky on Mcp-Session-Id; config from `render`. */
export class Haproxy implements AsyncDisposable {
  private child!: ChildProcess;
  private readonly dir = new TempDir('haproxy');

  private constructor(readonly port: number) {}

  /** Starts haproxy with the config `render(port)` returns (the frontend must bind 127.0.0.1:port); `port`: a free one by default. */
  static async start(render: (port: number) => string, port?: number): Promise<Haproxy> {
    const bin = findBinary('haproxy');
    if (!bin) throw new Error('haproxy not found (apt-get install haproxy; .ci/run does)');
    const h = new Haproxy(port ?? (await freePort()));
    const file = h.dir.file('haproxy.cfg');
    writeFileSync(file, render(h.port));
    const check = spawnSync(bin, ['-c', '-f', file], { encoding: 'utf8' });
    if (check.status !== 0) throw new Error(`haproxy config invalid:\n${check.stdout}${check.stderr}`);
    h.child = spawn(bin, ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    h.child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    h.child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    await within(
      waitForPort(h.port, h.child).catch((err: Error) => {
        throw new Error(`haproxy ${err.message}:\n${output}`);
      }),
      'haproxy to listen',
    );
    return h;
  }

  get url(): URL {
    return new URL(`http://127.0.0.1:${this.port}/mcp`);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((r) => this.child.once('exit', r));
      this.child.kill('SIGTERM');
      await exited;
    }
    this.dir[Symbol.dispose]();
  }
}

/** Resolves once something accepts connections on 127.0.0.1:port; rejects if `child` exits first. */
async function waitForPort(port: number, child: ChildProcess): Promise<void> {
  const { connect } = await import('node:net');
  let exited = false;
  child.once('exit', () => (exited = true));
  for (;;) {
    if (exited) throw new Error('exited before listening');
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setImmediate(r));
  }
}
