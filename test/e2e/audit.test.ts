// End to end: `mcp-federate audit verify` on real audit files (built CLI: exit codes, file:line of each
// tampering), hostile URIs, SIGKILL durability, and a gateway's keyed, anchored log across restarts.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { type AuditEntry, openAuditLog } from '../../src/audit/log.js';
import { verifyAuditFiles } from '../../src/audit/verify.js';
import { type AuditRecord, GENESIS_HASH, sealRecord } from '../../src/audit/record.js';
import { ROOT, runCli, upstreams, waitForExit } from '../helpers/built-cli.js';
import { within } from '../helpers/gate.js';
import { ProxyProcess } from '../helpers/sdk-clients.js';
import { TempDir } from '../helpers/temp-dir.js';

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
  void p.close();
  const recordBytes = readFileSync(probe).length;
  const log = openAuditLog({ file, maxBytes: recordBytes * perFile + recordBytes / 2, keep: 10 }, { now: () => Date.UTC(2026, 0, 1) });
  for (let i = 1; i <= n; i++) log.record(entry(`docs+file:///${String(i).padStart(4, '0')}.md`));
  void log.close();
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
    [
      'an edited field',
      (l: string[]) => l.map((x, i) => (i === 1 ? x.replace('"principal":"alice"', '"principal":"mallory"') : x)),
      2,
      'hash mismatch: the record was altered',
    ],
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
    const { sealRecord, GENESIS_HASH } = await import('../../src/audit/record.js');
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
    void log.close();
    const text = readFileSync(file, 'utf8');
    expect(text.split(/\r\n|\r|\n|\u2028|\u2029/)).toHaveLength(3); // two lines and the empty rest, by any reader's rules
    expect((JSON.parse(text.split('\n')[0]!) as { uri: string }).uri).toBe(hostile);
    const result = await runCli(['audit', 'verify', file]);
    expect(result.exitCode).toBe(0);
    expect(String(result.stdout).split('\n')[0]).toBe('verified 2 records');
  });

  it('"stderr" as the destination writes a chain starting at seq 1 on stderr, which verifies once captured', async () => {
    using dir = new TempDir();
    const moduleUrl = new URL('../../dist/audit/log.js', import.meta.url).href;
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
    expect(String(result.stderr)).toContain('Usage:\n  mcp-federate audit verify [--key-env <NAME>] [--anchor <file>] [--strict] [--config <file>] <file>...');
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
    expect(await runCli(['audit', '--help'])).toMatchObject({
      exitCode: 0,
      stderr: '',
      stdout: expect.stringContaining('mcp-federate audit verify [--key-env <NAME>] [--anchor <file>]'),
    });
    expect(String((await runCli(['--help'])).stdout)).toContain('mcp-federate audit verify [--key-env <NAME>] [--anchor <file>] [--strict] <file>...');
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
    void log.close();
    const after = await verifyAuditFiles([file]);
    expect(after.broken).toBeUndefined();
    expect(after.records).toBe(result.records + 1);
    const cli = await runCli(['audit', 'verify', file]);
    expect(cli.exitCode).toBe(0);
  });
});

const KEY_ENV = 'MCPF_E2E_AUDIT_KEY';
const KEY = 'e2e audit key: 32 bytes or so...';
const withKey = { env: { [KEY_ENV]: KEY } };

/** The entry a record was sealed from, so a forger can re-seal it (changed) without the key. */
function entryOf(r: AuditRecord, over: Partial<AuditRecord> = {}): AuditEntry {
  const x = { ...r, ...over };
  return {
    caller: { principal: x.principal, roles: x.roles, session: x.session, transport: x.transport },
    method: x.method,
    ...(x.uri === undefined ? {} : { uri: x.uri }),
    ...(x.server === undefined ? {} : { server: x.server }),
    ...(x.upstreamUri === undefined ? {} : { upstreamUri: x.upstreamUri }),
    decision: x.decision,
    rule: x.rule,
    outcome: x.outcome,
    ...(x.cache === undefined ? {} : { cache: x.cache }),
    ...(x.bytes === undefined ? {} : { bytes: x.bytes }),
    durationMs: x.durationMs,
    ...(x.returned === undefined ? {} : { returned: x.returned }),
    ...(x.filtered === undefined ? {} : { filtered: x.filtered }),
  };
}

/** What a forger without the key can do: lines from index `i` on re-sealed as a plain chain, the record at `i` changed by `over`. */
function resealPlain(lines: string[], i: number, over: Partial<AuditRecord>): string[] {
  const out = lines.slice(0, i);
  let prev = i === 0 ? GENESIS_HASH : (JSON.parse(lines[i - 1]!) as AuditRecord).hash;
  for (let j = i; j < lines.length; j++) {
    const r = JSON.parse(lines[j]!) as AuditRecord;
    const { record, line } = sealRecord(entryOf(r, j === i ? over : {}), { seq: r.seq, prev, time: Date.parse(r.time) });
    out.push(line.slice(0, -1));
    prev = record.hash;
  }
  return out;
}

/** Runs the built gateway on stdio with `audit`, reads `reads` resources, and waits for it to exit (its shutdown anchor written). */
async function serveAndRead(audit: Record<string, unknown>, reads: number): Promise<void> {
  const proxy = await ProxyProcess.start(
    { servers: { fx: upstreams.fixture('--resources', '3') }, stdio: { principal: 'erin', roles: ['eng'] }, audit },
    withKey,
  );
  const pid = proxy.pid;
  try {
    for (let i = 0; i < reads; i++) await proxy.client.readResource({ uri: `fx+fixture://res/${i % 3}` });
  } finally {
    await proxy[Symbol.asyncDispose]();
  }
  expect(await waitForExit(pid)).toBe(true);
}

describe('keyed chain and anchors (built CLI)', () => {
  it('a gateway started with audit.keyEnv naming an unset variable exits 2 naming it, and writes no record', async () => {
    using dir = new TempDir();
    const auditFile = dir.file('audit.jsonl');
    const config = dir.writeConfig({ servers: { fx: upstreams.fixture() }, audit: { file: auditFile, keyEnv: 'MCPF_E2E_UNSET_KEY' } });
    const result = await runCli(['--config', config], { env: { MCPF_E2E_UNSET_KEY: undefined } });
    expect(result.exitCode).toBe(2);
    expect(String(result.stderr)).toContain('audit.keyEnv: environment variable MCPF_E2E_UNSET_KEY is not set');
    expect(readdirSync(dir.path)).not.toContain('audit.jsonl');
  });

  it('a keyed log written across rotations and restarts verifies with the key and its anchors; a wrong or missing key does not', async () => {
    using dir = new TempDir();
    const auditFile = dir.file('audit.jsonl');
    const anchorFile = dir.file('anchors.jsonl');
    const audit = { file: auditFile, maxBytes: 2500, keep: 20, keyEnv: KEY_ENV, anchorFile, anchorEvery: 4 };
    await serveAndRead(audit, 9);
    await serveAndRead(audit, 7); // a restart: the chain, the MACs and the anchors continue
    const rotated = readdirSync(dir.path)
      .filter((f) => /^audit\.jsonl\.\d+$/.test(f))
      .sort((a, b) => Number(b.split('.').pop()) - Number(a.split('.').pop()));
    expect(rotated.length).toBeGreaterThanOrEqual(2);
    const files = [...rotated.map((f) => dir.file(f)), auditFile];
    const all = files.flatMap(linesOf).map((l) => JSON.parse(l) as AuditRecord);
    expect(all.map((r) => r.seq)).toEqual(all.map((_, i) => i + 1));
    expect(all.every((r) => /^[0-9a-f]{64}$/.test(r.mac ?? ''))).toBe(true);
    const anchors = linesOf(anchorFile).map((l) => JSON.parse(l) as { seq: number; hash: string; mac: string });
    expect(anchors.at(-1)).toMatchObject({ seq: all.length, hash: all.at(-1)!.hash, mac: all.at(-1)!.mac }); // the shutdown anchor

    const ok = await runCli(['audit', 'verify', '--key-env', KEY_ENV, '--anchor', anchorFile, '--strict', ...files], withKey);
    expect(ok.exitCode).toBe(0);
    expect(String(ok.stdout)).toContain(
      `verified ${all.length} records\nlast: seq ${all.length} hash ${all.at(-1)!.hash} mac ${all.at(-1)!.mac}\nkeyed: ${all.length} MACs verified with the key from ${KEY_ENV}\nanchors: ${anchors.length} matched`,
    );
    expect(String(ok.stdout)).not.toContain('warning');
    // The defaults come from the config's audit block.
    const config = dir.writeConfig({ servers: { fx: upstreams.fixture() }, audit });
    expect(await runCli(['audit', 'verify', '--config', config, '--strict', ...files], withKey)).toMatchObject({ exitCode: 0 });

    const wrong = await runCli(['audit', 'verify', '--key-env', KEY_ENV, ...files], { env: { [KEY_ENV]: 'not the key, but long enough' } });
    expect(wrong).toMatchObject({ exitCode: 1, stdout: expect.stringMatching(new RegExp(`^${files[0]}:1: MAC mismatch`)) });
    const unset = await runCli(['audit', 'verify', '--key-env', 'MCPF_E2E_UNSET_KEY', ...files], { env: { MCPF_E2E_UNSET_KEY: undefined } });
    expect(unset).toMatchObject({
      exitCode: 2,
      stderr: 'mcp-federate: audit verify: --key-env: environment variable MCPF_E2E_UNSET_KEY is not set (it must hold the audit key)',
    });
    // Without the key the plain chain still verifies, and the MACs are reported as not checked (--strict fails on it).
    const keyless = await runCli(['audit', 'verify', ...files]);
    expect(keyless).toMatchObject({ exitCode: 0, stdout: expect.stringContaining(`warning: ${all.length} records carry a MAC that was not checked`) });
    expect((await runCli(['audit', 'verify', '--strict', ...files])).exitCode).toBe(1);
  });

  describe("tampered copies of a gateway's keyed, anchored log", () => {
    let lines: string[] = [];
    let anchorText = '';
    const setup = async (dir: TempDir) => {
      if (lines.length === 0) {
        const auditFile = dir.file('audit.jsonl');
        const anchorFile = dir.file('anchors.jsonl');
        await serveAndRead({ file: auditFile, keyEnv: KEY_ENV, anchorFile, anchorEvery: 4 }, 10);
        lines = linesOf(auditFile);
        anchorText = readFileSync(anchorFile, 'utf8');
      }
      expect(lines).toHaveLength(10);
      const anchors = dir.file('anchors.jsonl');
      writeFileSync(anchors, anchorText);
      return anchors;
    };
    const verify = (file: string, anchors: string, ...more: string[]) =>
      runCli(['audit', 'verify', '--key-env', KEY_ENV, '--anchor', anchors, ...more, file], withKey);
    const firstLine = (r: { stdout: unknown }) => String(r.stdout).split('\n')[0];

    it('the untouched copy verifies strictly', async () => {
      using dir = new TempDir();
      const anchors = await setup(dir);
      const file = dir.file('copy.jsonl');
      writeLines(file, lines);
      expect(await verify(file, anchors, '--strict')).toMatchObject({ exitCode: 0 });
    });

    it.each([
      [
        'leading duplicate keys, hash untouched',
        (l: string[]) => l.map((x, i) => (i === 4 ? `{"principal":"someone-else","outcome":"denied",${x.slice(1)}` : x)),
        5,
        'not the canonical form',
      ],
      ['a re-spaced line', (l: string[]) => l.map((x, i) => (i === 4 ? x.replace(/,"/g, ', "') : x)), 5, 'not the canonical form'],
      ['a record changed and everything after it re-sealed', (l: string[]) => resealPlain(l, 5, { principal: 'mallory' }), 6, 'no "mac" after keyed records'],
      [
        'a forged record appended',
        (l: string[]) => [...l, resealPlain([...l, l[9]!.replace('"seq":10,', '"seq":11,')], 10, { principal: 'mallory' }).at(-1)!],
        11,
        'no "mac" after keyed records',
      ],
      ['its tail cut off', (l: string[]) => l.slice(0, 7), 7, 'the log ends at seq 7, before seq 10 anchored at'],
    ])('fails with the key and the anchors: %s, naming its line', async (_what, tamper, line, reason) => {
      using dir = new TempDir();
      const anchors = await setup(dir);
      const file = dir.file('tampered.jsonl');
      writeLines(file, tamper(lines));
      const result = await verify(file, anchors);
      expect(result.exitCode).toBe(1);
      expect(firstLine(result)).toContain(`${file}:${line}: ${reason}`);
    });

    // Anchors are made off the event loop, so which seqs between 4 and 10 got one varies: `line`
    // receives the anchored seqs and says which line must fail (one record per line, from seq 1).
    it.each([
      [
        'a record changed and everything after it re-sealed',
        (l: string[]) => resealPlain(l, 5, { principal: 'mallory' }),
        (seqs: number[]) => seqs.find((s) => s >= 6)!,
        'is not the record anchored at',
      ],
      ['its tail cut off', (l: string[]) => l.slice(0, 7), () => 7, 'records after this line were cut off (truncated)'],
    ])('fails with the anchors alone (no key): %s, naming its line', async (_what, tamper, lineOf, reason) => {
      using dir = new TempDir();
      const anchors = await setup(dir);
      const seqs = linesOf(anchors).map((a) => (JSON.parse(a) as { seq: number }).seq);
      expect(seqs.at(-1)).toBe(10); // the shutdown anchor
      const line = lineOf(seqs);
      const exit = 1;
      const file = dir.file('tampered.jsonl');
      writeLines(file, tamper(lines));
      const result = await runCli(['audit', 'verify', '--anchor', anchors, file]);
      expect(result.exitCode).toBe(exit);
      expect(firstLine(result)).toMatch(new RegExp(`^${file}:${line}: .*${reason.replace(/[()]/g, '\\$&')}`));
    });

    it('reports records appended after the last anchor (no key) as unanchored from their line, and --strict fails on them', async () => {
      using dir = new TempDir();
      const anchors = await setup(dir);
      const file = dir.file('appended.jsonl');
      const forged = resealPlain([...lines, lines[9]!.replace('"seq":10,', '"seq":11,'), lines[9]!.replace('"seq":10,', '"seq":12,')], 10, {
        principal: 'mallory',
      });
      writeLines(file, forged);
      const lax = await runCli(['audit', 'verify', '--anchor', anchors, file]);
      expect(lax.exitCode).toBe(0);
      expect(String(lax.stdout)).toContain(`warning: ${file}:11: seq 11-12 (2 records, to ${file}:12) come after the last anchor (seq 10): unanchored`);
      const strict = await runCli(['audit', 'verify', '--anchor', anchors, '--strict', file]);
      expect(strict.exitCode).toBe(1);
      expect(String(strict.stdout)).toContain('strict: failing on');
    });

    it('a torn last anchor (a crash while anchoring) is ignored with a warning', async () => {
      using dir = new TempDir();
      const anchors = await setup(dir);
      appendFileSync(anchors, '{"seq":99,"ha');
      const file = dir.file('copy.jsonl');
      writeLines(file, lines);
      const result = await verify(file, anchors);
      expect(result.exitCode).toBe(0);
      expect(firstLine(result)).toMatch(/^warning: .*anchors\.jsonl:\d+: torn last anchor ignored/);
    });
  });
});
