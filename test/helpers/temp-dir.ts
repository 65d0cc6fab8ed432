// Temp folders for a test, removed on dispose, and the config files written into them.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';

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
  readonly path: string;
  /** `prefix` starts the folder's name (after `mcp-federate-`). */
  constructor(prefix = 'test') {
    this.path = mkdtempSync(path.join(os.tmpdir(), `mcp-federate-${prefix}-`));
  }
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

/**
 * A fresh temp folder for each test of the calling describe block, removed after the test: `path`
 * and `file(name)` name the current test's folder.
 */
export function tempDirEach(prefix: string): { readonly path: string; file(name: string): string } {
  let current: TempDir | undefined;
  beforeEach(() => {
    current = new TempDir(prefix);
  });
  afterEach(() => {
    current?.[Symbol.dispose]();
    current = undefined;
  });
  const dir = () => {
    if (!current) throw new Error('tempDirEach: no test is running');
    return current;
  };
  return {
    get path() {
      return dir().path;
    },
    file: (name) => dir().file(name),
  };
}
