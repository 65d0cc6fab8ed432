// The catalog fixture (or the SDK v2 fixture) as a remote upstream: a process serving Streamable HTTP or legacy SSE on an ephemeral port.
import { once } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { execa, type ResultPromise } from 'execa';
import { FIXTURE, ROOT } from './built-cli.js';

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
