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

  it('defaults to no key, anchors to the operational log every 1000 records or 30 s', () => {
    const { audit } = parse({ file: 'audit.jsonl' });
    expect(audit).toMatchObject({ anchorEvery: 1000, anchorSeconds: 30 });
    expect(audit!.keyEnv).toBeUndefined();
    expect(audit!.anchorFile).toBeUndefined();
    expect(parse({ file: 'a', keyEnv: 'MCP_AUDIT_KEY', anchorFile: 'anchors.jsonl', anchorEvery: 5, anchorSeconds: 2 }).audit).toMatchObject({
      keyEnv: 'MCP_AUDIT_KEY',
      anchorEvery: 5,
    });
  });

  it.each([
    [{}, 'audit.file'],
    [{ file: '' }, 'audit.file'],
    [{ file: 'a', maxBytes: -1 }, 'audit.maxBytes'],
    [{ file: 'a', keep: 0 }, 'audit.keep'],
    [{ file: 'a', rotate: 3 }, 'audit: unknown field "rotate"'],
    [{ file: 'a', maxByte: 3 }, 'audit: unknown field "maxByte" (did you mean "maxBytes"?)'],
    [{ file: 'a', keyEnv: 'not a name' }, 'audit.keyEnv: expected an environment variable name'],
    [{ file: 'a', key: 'secret' }, 'audit: unknown field "key"'],
    [{ file: 'a', anchorEvery: 0 }, 'audit.anchorEvery'],
    [{ file: 'a', anchorSeconds: 0 }, 'audit.anchorSeconds'],
    [{ file: 'a', anchorFile: '' }, 'audit.anchorFile'],
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
    const stderr = await loadConfig({ cwd, file: write('err.json', { file: 'stderr', anchorFile: 'anchors/a.jsonl' }) });
    expect(stderr.config.audit?.file).toBe('stderr');
    expect(stderr.config.audit?.anchorFile).toBe(path.join(dir, 'anchors', 'a.jsonl'));
  });
});
