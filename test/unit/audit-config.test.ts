// The `audit` config block: defaults, validation, and `file` resolved against the config file's folder.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig, parseConfig } from '../../src/config/load.js';

const servers = { a: { command: 'node' } };
const parse = (audit: unknown) => parseConfig({ servers, audit }, { env: {} });

describe('audit config', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('is absent unless configured', () => {
    expect(parseConfig({ servers }, { env: {} }).audit).toBeUndefined();
  });

  it('defaults to no rotation and 10 rotated files kept', () => {
    expect(parse({ file: 'audit.jsonl' })).toMatchObject({ audit: { file: 'audit.jsonl', maxBytes: 0, keep: 10 } });
  });

  it.each([
    [{}, 'audit.file'],
    [{ file: '' }, 'audit.file'],
    [{ file: 'a', maxBytes: -1 }, 'audit.maxBytes'],
    [{ file: 'a', keep: 0 }, 'audit.keep'],
    [{ file: 'a', rotate: 3 }, 'audit: unknown field "rotate"'],
    [{ file: 'a', maxByte: 3 }, 'audit: unknown field "maxByte" (did you mean "maxBytes"?)'],
  ])('rejects %j (%s)', (audit, where) => {
    expect(() => parse(audit)).toThrow(where);
  });

  it('resolves a relative file against the config file’s folder, keeps an absolute one and "stderr"', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'audit-config-'));
    const write = (name: string, audit: unknown) => {
      const file = path.join(dir!, name);
      writeFileSync(file, JSON.stringify({ servers, audit }));
      return file;
    };
    const cwd = os.tmpdir();
    const relative = await loadConfig({ cwd, file: write('rel.json', { file: 'logs/audit.jsonl' }) });
    expect(relative.config.audit?.file).toBe(path.join(dir, 'logs', 'audit.jsonl'));
    const absolute = await loadConfig({ cwd, file: write('abs.json', { file: '/var/log/audit.jsonl' }) });
    expect(absolute.config.audit?.file).toBe('/var/log/audit.jsonl');
    const stderr = await loadConfig({ cwd, file: write('err.json', { file: 'stderr' }) });
    expect(stderr.config.audit?.file).toBe('stderr');
  });
});
