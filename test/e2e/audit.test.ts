// End to end: `mcp-federate audit verify` on real audit files (built CLI: exit codes, file:line of each
// tampering), hostile URIs, and SIGKILL durability of a writer using the built audit log.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { openAuditLog, type AuditEntry } from '../../src/access/audit-log.js';
import { verifyAuditFiles } from '../../src/access/audit-verify.js';
import { ROOT, TempDir, runCli, within } from './helpers.js';

const caller = { principal: 'alice', roles: ['reader'], session: 's-1', transport: 'http' } as const;
const entry = (uri: string): AuditEntry => ({
  caller,
  method: 'resources/read',
  uri,
  server: 'docs',
  upstreamUri: uri.slice(uri.indexOf('+') + 1),
  decision: 'allow',
  rule: 'default',
  outcome: 'ok',
  cache: 'hit',
  bytes: 10,
  durationMs: 0.25,
});

/** Writes `n` records to `<dir>/audit.jsonl`, rotating every `perFile` records; returns the files oldest first. */
function writeLog(dir: TempDir, n: number, perFile = n): string[] {
  const file = dir.file('audit.jsonl');
  const probe = dir.file('probe.jsonl');
  const p = openAuditLog({ file: probe, maxBytes: 0, keep: 1 });
  p.record(entry('docs+file:///0000.md'));
  p.close();
  const recordBytes = readFileSync(probe).length;
  const log = openAuditLog({ file, maxBytes: recordBytes * perFile + recordBytes / 2, keep: 10 }, { now: () => Date.UTC(2026, 0, 1) });
  for (let i = 1; i <= n; i++) log.record(entry(`docs+file:///${String(i).padStart(4, '0')}.md`));
  log.close();
  const rotated = Math.ceil(n / perFile) - 1;
  return [...Array.from({ length: rotated }, (_, i) => `${file}.${rotated - i}`), file];
}

const linesOf = (file: string) => readFileSync(file, 'utf8').split('\n').slice(0, -1);
const writeLines = (file: string, lines: string[], end = '\n') => writeFileSync(file, lines.join('\n') + end);

describe.concurrent('audit verify (built CLI)', () => {
  it('verifies a chain rotated over three files, given oldest first', async () => {
    using dir = new TempDir();
    const files = writeLog(dir, 9, 3);
    expect(files.map((f) => path.basename(f))).toEqual(['audit.jsonl.2', 'audit.jsonl.1', 'audit.jsonl']);
    const result = await runCli(['audit', 'verify', ...files]);
    const lastHash = (JSON.parse(linesOf(files[2]!)[2]!) as { hash: string }).hash;
    expect(result).toMatchObject({ exitCode: 0, stderr: '', stdout: `verified 9 records\nlast: seq 9 hash ${lastHash}` });
  });

  it('anchors on the first record when only later files are given, and says where the chain starts', async () => {
    using dir = new TempDir();
    const files = writeLog(dir, 9, 3);
    const result = await runCli(['audit', 'verify', ...files.slice(1)]);
    expect(result.exitCode).toBe(0);
    expect(String(result.stdout).split('\n')[0]).toBe('verified 6 records (chain starts at seq 4)');
  });

  it.each([
    ['an edited field', (l: string[]) => l.map((x, i) => (i === 1 ? x.replace('"principal":"alice"', '"principal":"mallory"') : x)), 2, 'hash mismatch: the record was altered'],
    ['a deleted line', (l: string[]) => l.filter((_, i) => i !== 1), 2, '"prev" is not the hash of the record before it'],
    ['an inserted line', (l: string[]) => [l[0]!, l[2]!, ...l.slice(1)], 2, '"prev" is not the hash of the record before it'],
    ['reordered lines', (l: string[]) => [l[0]!, l[2]!, l[1]!], 2, '"prev" is not the hash of the record before it'],
  ])('exits 1 at the file and line of %s in the middle file', async (_what, tamper, line, reason) => {
    using dir = new TempDir();
    const files = writeLog(dir, 9, 3);
    const middle = files[1]!;
    writeLines(middle, tamper(linesOf(middle)));
    const result = await runCli(['audit', 'verify', ...files]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toBe('');
    const [first, second] = String(result.stdout).split('\n');
    expect(first!.startsWith(`${middle}:${line}: ${reason}`)).toBe(true);
    expect(second).toBe(`chain broken after ${3 + line - 1} verified records`);
  });

  it('exits 1 at a truncated (torn) last line of the newest file', async () => {
    using dir = new TempDir();
    const files = writeLog(dir, 6, 3);
    const newest = files[1]!;
    const text = readFileSync(newest, 'utf8');
    writeFileSync(newest, text.slice(0, text.length - 30));
    const result = await runCli(['audit', 'verify', ...files]);
    expect(result.exitCode).toBe(1);
    expect(String(result.stdout).split('\n')[0]).toBe(`${newest}:3: torn last line: no line break at its end (a write cut short)`);
  });

  it('exits 1 when a seq is skipped although every hash was recomputed', async () => {
    using dir = new TempDir();
    const file = dir.file('forged.jsonl');
    // A writer whose chain is consistent except for seq: rebuild the file with seq 3 renumbered 4.
    const { sealRecord, GENESIS_HASH } = await import('../../src/access/audit-record.js');
    let prev = GENESIS_HASH;
    const lines = [1, 2, 4].map((seq) => {
      const { record, line } = sealRecord(entry(`docs+file:///${seq}`), { seq, prev, time: 0 });
      prev = record.hash;
      return line;
    });
    writeFileSync(file, lines.join(''));
    const result = await runCli(['audit', 'verify', file]);
    expect(result).toMatchObject({ exitCode: 1, stdout: `${file}:3: seq 4 does not follow seq 2\nchain broken after 2 verified records` });
  });

  it('keeps a hostile URI (\\n, \\r, U+2028, U+2029) on one line, and it verifies', async () => {
    using dir = new TempDir();
    const file = dir.file('audit.jsonl');
    const hostile = 'docs+file:///x\n{"seq":99,"forged":1}\r\n\u2028{"a":1}\u2029end';
    const log = openAuditLog({ file, maxBytes: 0, keep: 1 });
    log.record(entry(hostile));
    log.record(entry('docs+file:///after'));
    log.close();
    const text = readFileSync(file, 'utf8');
    expect(text.split(/\r\n|\r|\n|\u2028|\u2029/)).toHaveLength(3); // two lines and the empty rest, by any reader's rules
    expect((JSON.parse(text.split('\n')[0]!) as { uri: string }).uri).toBe(hostile);
    const result = await runCli(['audit', 'verify', file]);
    expect(result.exitCode).toBe(0);
    expect(String(result.stdout).split('\n')[0]).toBe('verified 2 records');
  });

  it('"stderr" as the destination writes a chain starting at seq 1 on stderr, which verifies once captured', async () => {
    using dir = new TempDir();
    const moduleUrl = new URL('../../dist/access/audit-log.js', import.meta.url).href;
    const script = `const { openAuditLog } = await import(${JSON.stringify(moduleUrl)});
      const log = openAuditLog({ file: 'stderr', maxBytes: 0, keep: 1 });
      for (const n of [1, 2, 3]) log.record({ caller: { principal: 'p', roles: [], session: 's', transport: 'stdio' }, method: 'resources/list', decision: 'allow', rule: 'default', outcome: 'ok', durationMs: n, returned: n });
      await log.close();`;
    const { execa } = await import('execa');
    const child = await execa(process.execPath, ['--input-type=module', '-e', script], { reject: false, stripFinalNewline: false });
    expect(child.exitCode).toBe(0);
    expect(child.stdout).toBe('');
    const captured = dir.file('captured.jsonl');
    writeFileSync(captured, String(child.stderr));
    expect(linesOf(captured).map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual([1, 2, 3]);
    expect((await runCli(['audit', 'verify', captured])).exitCode).toBe(0);
  });

  it.each([
    [['audit'], 'audit: expected a subcommand'],
    [['audit', 'check', 'x'], 'audit: unknown subcommand: check'],
    [['audit', 'verify'], 'audit verify: expected at least one file'],
    [['audit', 'verify', '--bogus', 'x'], "Unknown option '--bogus'"],
  ])('exits 2 for %j with a reason and the usage', async (args, reason) => {
    const result = await runCli(args);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(String(result.stderr).startsWith(`mcp-federate: ${reason}`)).toBe(true);
    expect(String(result.stderr)).toContain('Usage:\n  mcp-federate audit verify <file>...');
  });

  it('exits 2 naming a file that cannot be read, even when an earlier one is broken', async () => {
    using dir = new TempDir();
    const broken = dir.file('broken.jsonl');
    writeFileSync(broken, 'garbage\n');
    const missing = dir.file('missing.jsonl');
    const result = await runCli(['audit', 'verify', broken, missing]);
    expect(result).toMatchObject({ exitCode: 2, stdout: '', stderr: `mcp-federate: audit verify: cannot read ${missing} (ENOENT)` });
    const directory = await runCli(['audit', 'verify', dir.path]);
    expect(directory).toMatchObject({ exitCode: 2, stderr: `mcp-federate: audit verify: cannot read ${dir.path} (EISDIR)` });
  });

  it('audit --help prints its usage and the main --help lists the command', async () => {
    expect(await runCli(['audit', '--help'])).toMatchObject({ exitCode: 0, stderr: '', stdout: expect.stringContaining('mcp-federate audit verify <file>...') });
    expect(String((await runCli(['--help'])).stdout)).toContain('mcp-federate audit verify <file>...');
  });
});

describe('audit log durability', () => {
  it('a writer killed with SIGKILL after reporting N answered leaves at least N complete records that verify', async () => {
    using dir = new TempDir();
    const file = dir.file('audit.jsonl');
    const N = 300;
    const child = spawn(process.execPath, [path.join(ROOT, 'test', 'fixtures', 'audit-writer.mjs'), file], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = once(child, 'exit');
    let answered = 0;
    try {
      // Killed from the line handler itself, the moment "done N" arrives: no stream is closed first
      // (which could end the writer with EPIPE instead), and the writer keeps going until the signal lands.
      const reported = new Promise<void>((resolve) => {
        createInterface({ input: child.stdout }).on('line', (line) => {
          if (answered >= N) return;
          answered = Number(line.split(' ')[1]);
          if (answered === N) {
            child.kill('SIGKILL');
            resolve();
          }
        });
      });
      await within(reported, `"done ${N}" from the writer`);
      const [, signal] = await within(exited, 'the writer to die');
      expect(signal).toBe('SIGKILL');
    } finally {
      child.kill('SIGKILL');
    }
    // Every answered record is complete; the writer may have got further (the kill races its loop).
    const result = await verifyAuditFiles([file]);
    expect(result.records).toBeGreaterThanOrEqual(N);
    // A record being written at the kill may be torn (a short write); that is the only break allowed.
    if (result.broken) expect(result.broken).toMatchObject({ line: result.records + 1, reason: expect.stringContaining('torn last line') });
    // Reopening cuts such a tail and continues the chain; then the whole file verifies.
    const log = openAuditLog({ file, maxBytes: 0, keep: 1 });
    log.record(entry('docs+file:///after-restart'));
    log.close();
    const after = await verifyAuditFiles([file]);
    expect(after.broken).toBeUndefined();
    expect(after.records).toBe(result.records + 1);
    const cli = await runCli(['audit', 'verify', file]);
    expect(cli.exitCode).toBe(0);
  });
});
