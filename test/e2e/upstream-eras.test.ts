// Upstream revisions by default (`protocol: auto`): each upstream speaks its own era, on one connection, started once.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runCli, upstreams } from '../helpers/built-cli.js';
import { parseLogLines } from '../helpers/logs.js';
import { TempDir } from '../helpers/temp-dir.js';

const MODERN = path.join(ROOT, 'test', 'fixtures', 'modern-server.mjs');
const modern = (...args: string[]) => ({ command: process.execPath, args: [MODERN, ...args] });
const starts = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '').length;

describe('protocol: auto is the default', () => {
  it('a 2025-only, a 2026-only and a dual-era upstream each start once and speak their newest revision', async () => {
    using dir = new TempDir();
    const [legacyStarts, modernStarts, dualStarts] = ['legacy', 'modern', 'dual'].map((n) => dir.file(`${n}.starts`));
    const file = dir.writeConfig({
      servers: {
        legacy: upstreams.fixture('--resources', '1', '--starts-file', legacyStarts!),
        modern: modern('--modern-only', '--starts-file', modernStarts!),
        dual: modern('--starts-file', dualStarts!),
      },
    });
    const result = await runCli(['ls', '--json', '--config', file, '--log-level', 'info']);
    expect(result.exitCode).toBe(0);
    const catalog = JSON.parse(String(result.stdout)) as { servers: { id: string; status: string; protocol?: string }[] };
    expect(catalog.servers.map((s) => [s.id, s.status, s.protocol])).toEqual([
      ['legacy', 'ready', '2025-11-25'],
      ['modern', 'ready', '2026-07-28'],
      ['dual', 'ready', '2026-07-28'],
    ]);
    expect([starts(legacyStarts!), starts(modernStarts!), starts(dualStarts!)]).toEqual([1, 1, 1]);
    const ready = parseLogLines(String(result.stderr)).filter((r) => r.msg === 'upstream ready');
    expect(Object.fromEntries(ready.map((r) => [r.server, r.protocol]))).toEqual({ legacy: '2025-11-25', modern: '2026-07-28', dual: '2026-07-28' });
  });

  it('an upstream pinned to a revision it does not speak is shown failed with the reason, in ls and the log', async () => {
    using dir = new TempDir();
    const file = dir.writeConfig({
      servers: {
        ok: upstreams.fixture('--resources', '1'),
        newonly: { ...modern('--modern-only'), protocol: '2025-11-25' },
        oldonly: { ...upstreams.fixture('--resources', '1'), protocol: '2026-07-28', timeoutMs: 5_000 },
      },
    });
    const result = await runCli(['ls', '--config', file]);
    expect(result.exitCode).toBe(1);
    const table = String(result.stdout).split('\n').slice(0, 4);
    expect(table).toEqual([
      'SERVER   STATUS       RESOURCES  TEMPLATES  PROTOCOL',
      expect.stringMatching(/^ok +ready +\d+ +\d+ +2025-11-25$/),
      'newonly  unavailable  -          -          -',
      'oldonly  unavailable  -          -          -',
    ]);
    const stderr = String(result.stderr);
    const reasons = stderr.split('\n').filter((l) => l.startsWith('mcp-federate: '));
    expect(reasons).toEqual([
      'mcp-federate: newonly is unavailable: Unsupported protocol version: 2025-11-25',
      expect.stringMatching(/^mcp-federate: oldonly is unavailable: .*did not offer pinned protocol version 2026-07-28/),
    ]);
    const failed = parseLogLines(
      stderr
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .join('\n'),
    ).filter((r) => r.msg === 'upstream failed to start; serving the others');
    expect(failed.map((r) => r.server).sort()).toEqual(['newonly', 'oldonly']);
  });
});
