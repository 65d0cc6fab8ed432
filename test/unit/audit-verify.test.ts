// The chain verifier: each kind of tampering is caught at the right file and line; good chains pass.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GENESIS_HASH, sealRecord, type AuditEntry } from '../../src/access/audit-record.js';
import { AuditFileError, verifyAuditFiles } from '../../src/access/audit-verify.js';

const entry = (i: number): AuditEntry => ({
  caller: { principal: 'alice', roles: [], session: 's', transport: 'http' },
  method: 'resources/read',
  uri: `docs+file:///${i}.md`,
  decision: 'allow',
  rule: 'default',
  outcome: 'ok',
  durationMs: i,
});

/** Lines of a valid chain of `n` records starting at `seq` after `prev`; `seqs` overrides the seq of each. */
function chain(n: number, opts: { seq?: number; prev?: string; seqs?: number[] } = {}): string[] {
  let prev = opts.prev ?? GENESIS_HASH;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const seq = opts.seqs?.[i] ?? (opts.seq ?? 1) + i;
    const { record, line } = sealRecord(entry(seq), { seq, prev, time: Date.UTC(2026, 0, 1) + i });
    out.push(line.slice(0, -1));
    prev = record.hash;
  }
  return out;
}

describe('verifyAuditFiles', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'audit-verify-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const put = (name: string, lines: string[], end = '\n') => {
    const file = path.join(dir, name);
    writeFileSync(file, lines.length === 0 ? '' : lines.join('\n') + end);
    return file;
  };

  it('passes a valid chain and reports its size and last link', async () => {
    const lines = chain(4);
    const result = await verifyAuditFiles([put('a', lines)]);
    expect(result).toEqual({ records: 4, firstSeq: 1, anchored: false, last: { seq: 4, hash: JSON.parse(lines[3]!).hash } });
  });

  it('passes empty files, and a chain split over files given oldest first', async () => {
    const lines = chain(5);
    const files = [put('a.2', lines.slice(0, 2)), put('a.1', []), put('a', lines.slice(2))];
    const result = await verifyAuditFiles(files);
    expect(result).toMatchObject({ records: 5, anchored: false });
    expect(result.broken).toBeUndefined();
    expect(await verifyAuditFiles([put('empty', [])])).toEqual({ records: 0, anchored: false });
  });

  it('fails files given newest first at the first line of the second file', async () => {
    const lines = chain(4);
    const [older, newer] = [put('a.1', lines.slice(0, 2)), put('a', lines.slice(2))];
    expect((await verifyAuditFiles([newer, older])).broken).toEqual({ file: older, line: 1, reason: expect.stringContaining('"prev" is not the hash') });
  });

  it('anchors on a first record whose prev is not the genesis hash (later files only)', async () => {
    const lines = chain(6);
    expect(await verifyAuditFiles([put('tail', lines.slice(3))])).toMatchObject({ records: 3, firstSeq: 4, anchored: true });
  });

  it.each([
    ['an edited field', (l: string[]) => [l[0]!, l[1]!.replace('"outcome":"ok"', '"outcome":"denied"'), ...l.slice(2)], 2, 'hash mismatch'],
    ['an edited hash', (l: string[]) => [l[0]!, l[1]!.replace(/"hash":"[0-9a-f]/, '"hash":"z'), ...l.slice(2)], 2, 'no valid "hash"'],
    ['a deleted line', (l: string[]) => [l[0]!, ...l.slice(2)], 2, '"prev" is not the hash of the record before it (FILE:1)'],
    ['a deleted first line', (l: string[]) => l.slice(1), 1, undefined],
    ['an inserted copy of a line', (l: string[]) => [l[0]!, l[1]!, l[1]!, ...l.slice(2)], 3, '"prev" is not the hash'],
    ['an inserted forged record', (l: string[]) => [l[0]!, chain(1, { seq: 2 })[0]!, ...l.slice(1)], 2, '"prev" is not the hash'],
    ['two lines swapped', (l: string[]) => [l[0]!, l[2]!, l[1]!, ...l.slice(3)], 2, '"prev" is not the hash'],
    ['an empty line', (l: string[]) => [l[0]!, '', ...l.slice(1)], 2, 'empty line'],
    ['a line that is not JSON', (l: string[]) => [l[0]!, 'hello', ...l.slice(1)], 2, 'not JSON'],
    ['a JSON array', (l: string[]) => [l[0]!, '[]', ...l.slice(1)], 2, 'not a JSON object'],
  ])('fails %s at the right line', async (_what, tamper, line, reason) => {
    const file = put('a', tamper(chain(4)));
    const result = await verifyAuditFiles([file]);
    if (reason === undefined) {
      // Deleting the first record is indistinguishable from verifying a later file: it anchors.
      expect(result).toMatchObject({ records: 3, anchored: true, firstSeq: 2 });
      return;
    }
    expect(result.broken).toEqual({ file, line, reason: expect.stringContaining(reason.replace('FILE', file)) });
    expect(result.records).toBe(line - 1);
  });

  it('fails a seq that does not increase by one, even with every hash recomputed', async () => {
    const file = put('a', chain(4, { seqs: [1, 2, 4, 5] }));
    expect((await verifyAuditFiles([file])).broken).toEqual({ file, line: 3, reason: 'seq 4 does not follow seq 2' });
  });

  it('fails a chain that claims to start (genesis prev) at a seq other than 1', async () => {
    const file = put('a', chain(2, { seq: 7 }));
    expect((await verifyAuditFiles([file])).broken).toMatchObject({ file, line: 1, reason: expect.stringContaining('seq 7') });
  });

  it('fails a torn last line (no line break at its end), even when what is there parses', async () => {
    const lines = chain(3);
    const cut = put('cut', [...lines.slice(0, 2), lines[2]!.slice(0, 40)], '');
    expect((await verifyAuditFiles([cut])).broken).toEqual({ file: cut, line: 3, reason: expect.stringContaining('torn last line') });
    const noNewline = put('whole', lines, '');
    expect((await verifyAuditFiles([noNewline])).broken).toEqual({ file: noNewline, line: 3, reason: expect.stringContaining('torn last line') });
  });

  it('accepts CRLF line ends and reformatted whitespace: the hash is over the parsed record, not its bytes', async () => {
    const lines = chain(2);
    const file = put('crlf', [lines[0]! + '\r', JSON.stringify(JSON.parse(lines[1]!), null, 1).replace(/\n/g, ' ')]);
    const result = await verifyAuditFiles([file]);
    expect(result.records).toBe(2);
    expect(result.broken).toBeUndefined();
  });

  it('reads lines across read-buffer boundaries', async () => {
    const lines = chain(2000);
    const file = put('big', lines);
    expect(readFileSync(file).length).toBeGreaterThan(3 * 64 * 1024);
    expect(await verifyAuditFiles([file])).toMatchObject({ records: 2000, last: { seq: 2000 } });
  });

  it('throws AuditFileError naming a file that is missing or a directory, before reading any', async () => {
    const broken = put('a', ['not a record']); // broken, but the missing file is reported first
    const missing = path.join(dir, 'nope');
    const error = await verifyAuditFiles([broken, missing]).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(AuditFileError);
    expect(error).toMatchObject({ file: missing, message: `cannot read ${missing} (ENOENT)` });
    await expect(verifyAuditFiles([dir])).rejects.toThrow(`cannot read ${dir} (EISDIR)`);
  });
});
