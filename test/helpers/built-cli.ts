// The built CLI and the upstreams e2e tests spawn: paths, the check that dist/ exists, upstream config entries, one-shot CLI runs, and process liveness.
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { execa, type Options as ExecaOptions, type Result as ExecaResult } from 'execa';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CLI = path.join(ROOT, 'dist', 'cli.js');
export const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'catalog-server.mjs');
export const HOSTILE_FIXTURE = path.join(ROOT, 'test', 'fixtures', 'hostile-upstream.mjs');
export const EVERYTHING = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
export const MEMORY = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');
export const PACKAGE_VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/**
 * `MCP_FEDERATE_SDK_REQUESTS` of the test run, handed on to the spawned CLI (whose environment is
 * otherwise the SDK's safe default set), so that `npm run test:sdk-path` runs the CLI with its lanes off.
 */
export function laneEnv(): Record<string, string> {
  const value = process.env.MCP_FEDERATE_SDK_REQUESTS;
  return value === undefined ? {} : { MCP_FEDERATE_SDK_REQUESTS: value };
}

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

/** The raw hostile upstream (see test/fixtures/hostile-upstream.mjs) as a config entry. */
export const hostileUpstream = (...args: string[]): StdioUpstream => ({ command: process.execPath, args: [HOSTILE_FIXTURE, ...args] });

/** Runs the built CLI to completion (never rejects; inspect exitCode, stdout, stderr). */
export async function runCli(args: string[], options: ExecaOptions = {}): Promise<ExecaResult> {
  assertBuilt();
  return await execa(process.execPath, [CLI, ...args], { reject: false, stdin: 'ignore', timeout: 20_000, ...options });
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

/** Resident set size of a live process, in bytes (Linux /proc). */
export function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) * 1024;
}
