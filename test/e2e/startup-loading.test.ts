// What the built CLI loads, and when: stdio upstreams are spawned before the SDK loads, a stdio-only gateway loads none of the HTTP, metrics, Redis, JWT or YAML modules, and a config that does not validate spawns nothing.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { assertBuilt, CLI, upstreams } from '../helpers/built-cli.js';
import { TempDir } from '../helpers/temp-dir.js';

const LOAD_LOG = fileURLToPath(new URL('../fixtures/load-log.mjs', import.meta.url));

/** Modules of features a stdio-only config leaves off, by URL (builtins, packages, dist/ files unbundled or bundled chunks). */
const OFF_URL =
  /^node:https?$|\/node_modules\/(prom-client|jose|yaml|redis|@redis)\/|\/dist\/(serve\/http|serve\/auth|cluster|shared-state)\/|\/dist\/observe\/prometheus|\/dist\/cli-(endpoint|ops-listener|prometheus|cluster|lean-http)-/;
/** What those modules define, wherever a bundler put them: the HTTP endpoint, the Prometheus metrics, jose's claim errors, yaml's parse errors. */
const OFF_DEFINITIONS = ['function createHttpEndpoint(', 'function createPrometheusMetrics(', 'JWTClaimValidationFailed', 'YAMLParseError'];

/** The source of a loaded file: URL (empty for builtins). */
function sourceOf(url: string): string {
  return url.startsWith('file:') ? readFileSync(fileURLToPath(url), 'utf8') : '';
}

/** Each module the process loaded, in order, with how many children it had by then. */
function readLoads(file: string): { url: string; children: number }[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [url, children] = line.split('\t');
      return { url: url!, children: Number(children) };
    });
}

/** Serves `config` on stdio under the load log until the first `resources/list` is answered, then ends stdin; resolves with the exit code. */
async function serveOneList(configFile: string, logFile: string): Promise<{ code: number | null; list: unknown }> {
  const child = spawn(process.execPath, ['--import', LOAD_LOG, CLI, '--config', configFile, '--log-level', 'warn'], {
    env: { PATH: process.env.PATH ?? '', LOAD_LOG: logFile },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const answers = new Map<number, (message: unknown) => void>();
  let rest = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop()!;
    for (const line of lines) {
      const message = JSON.parse(line) as { id?: number };
      if (message.id !== undefined) answers.get(message.id)?.(message);
    }
  });
  const request = (id: number, method: string, params: unknown = {}) =>
    new Promise<unknown>((resolve) => {
      answers.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  await request(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'load-log', version: '1.0.0' } });
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  const list = await request(2, 'resources/list');
  child.stdin.end();
  return { code: await exited, list };
}

describe.runIf(process.platform === 'linux')('module loading at startup (load hooks in the built CLI)', () => {
  it('spawns the stdio upstreams before loading the SDK, and a stdio-only gateway loads no module of a feature that is off', async () => {
    assertBuilt();
    using dir = new TempDir();
    const config = dir.writeConfig({ servers: { a: upstreams.fixture('--resources', '2'), b: upstreams.fixture('--resources', '1') } });
    const log = dir.file('loads.txt');
    const { code, list } = await serveOneList(config, log);
    expect(code).toBe(0);
    const uris = (list as { result: { resources: { uri: string }[] } }).result.resources.map((r) => r.uri.split('+')[0]);
    expect(new Set(uris)).toEqual(new Set(['a', 'b'])); // both upstreams, each through its early child
    const loads = readLoads(log);
    // The CLI may be bundled (scripts/bundle-cli.mjs) or not: modules are recognised by what they define.
    const firstSdk = loads.find((l) => sourceOf(l.url).includes('LATEST_PROTOCOL_VERSION'));
    expect(firstSdk, 'the SDK loads at some point').toBeDefined();
    expect(firstSdk!.children, `children when ${firstSdk!.url} loaded`).toBe(2);
    const off = loads.map((l) => l.url).filter((url) => OFF_URL.test(url) || OFF_DEFINITIONS.some((definition) => sourceOf(url).includes(definition)));
    expect(off).toEqual([]);
  });

  it('a config that does not validate exits 2 naming the file and the problem, having spawned nothing', async () => {
    assertBuilt();
    using dir = new TempDir();
    const marker = dir.file('spawned');
    const config = dir.writeConfig({
      servers: {
        early: { command: process.execPath, args: ['-e', `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'x')`] },
        bad: { url: 'not a url' },
      },
    });
    const log = dir.file('loads.txt');
    const result = await execa(process.execPath, ['--import', LOAD_LOG, CLI, '--config', config], {
      reject: false,
      stdin: 'ignore',
      env: { PATH: process.env.PATH ?? '', LOAD_LOG: log },
      timeout: 20_000,
    });
    expect(result).toMatchObject({ exitCode: 2, stdout: '', stderr: `mcp-federate: ${config}: servers.bad.url: Invalid URL` });
    expect(readLoads(log).filter((l) => l.children > 0)).toEqual([]);
    expect(readLoads(log).filter((l) => sourceOf(l.url).includes('LATEST_PROTOCOL_VERSION'))).toEqual([]);
    expect(existsSync(marker)).toBe(false);
  });
});
