// The chain verifier: each kind of tampering is caught at the right file and line; good chains pass.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDirEach } from '../helpers/temp-dir.js';
import { createSecretKey, type KeyObject } from 'node:crypto';
import { anchorLine } from '../../src/audit/anchor.js';
import { GENESIS_HASH, sealRecord, type AuditEntry } from '../../src/audit/record.js';
import { AuditFileError, readAnchorFile, verifyAuditFiles, type ReadAnchor } from '../../src/audit/verify.js';

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

const KEY = createSecretKey(Buffer.from('k'.repeat(32)));
const OTHER_KEY = createSecretKey(Buffer.from('o'.repeat(32)));

/** Lines of a keyed chain of `n` records from seq 1 (`unkeyed` leading ones without a MAC), and each record's hash and mac. */
function keyedChain(n: number, key: KeyObject, unkeyed = 0): { lines: string[]; heads: { seq: number; hash: string; mac?: string }[] } {
  let prev = GENESIS_HASH;
  let prevMac = GENESIS_HASH;
  const lines: string[] = [];
  const heads: { seq: number; hash: string; mac?: string }[] = [];
  for (let seq = 1; seq <= n; seq++) {
    const at = { seq, prev, time: Date.UTC(2026, 0, 1) + seq };
    const { record, line } = sealRecord(entry(seq), seq <= unkeyed ? at : { ...at, keyed: { key, prevMac } });
    lines.push(line.slice(0, -1));
    heads.push({ seq, hash: record.hash, ...(record.mac ? { mac: record.mac } : {}) });
    prev = record.hash;
    prevMac = record.mac ?? GENESIS_HASH;
  }
  return { lines, heads };
}

/** `lines` with the record at index `i` changed (principal mallory) and it and every later record re-sealed with `key` (none: plain, MACs dropped). */
function reseal(lines: string[], i: number, key?: KeyObject): string[] {
  const out = lines.slice(0, i);
  const before = i === 0 ? undefined : (JSON.parse(lines[i - 1]!) as { hash: string; mac?: string });
  let prev = before?.hash ?? GENESIS_HASH;
  let prevMac = before?.mac ?? GENESIS_HASH;
  for (let j = i; j < lines.length; j++) {
    const r = JSON.parse(lines[j]!) as { seq: number; durationMs: number; time: string };
    const e = entry(r.durationMs);
    const changed = j === i ? { ...e, caller: { ...e.caller, principal: 'mallory' } } : e;
    const at = { seq: r.seq, prev, time: Date.parse(r.time) };
    const { record, line } = sealRecord(changed, key ? { ...at, keyed: { key, prevMac } } : at);
    out.push(line.slice(0, -1));
    prev = record.hash;
    prevMac = record.mac ?? GENESIS_HASH;
  }
  return out;
}

const anchorsOf = (heads: { seq: number; hash: string; mac?: string }[], seqs: number[]): { file: string; anchors: ReadAnchor[] } => ({
  file: 'anchors.jsonl',
  anchors: seqs.map((seq, i) => ({ ...heads[seq - 1]!, time: '2026-01-01T00:00:00.000Z', line: i + 1 })),
});

describe('verifyAuditFiles', () => {
  const tmp = tempDirEach('audit-verify');
  const put = (name: string, lines: string[], end = '\n') => {
    const file = path.join(tmp.path, name);
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

  it.each([
    ['leading duplicate keys (the hash untouched)', (l: string) => `{"principal":"someone-else","outcome":"denied",${l.slice(1)}`],
    ['a trailing duplicate key', (l: string) => `${l.slice(0, -1)},"principal":"alice"}`],
    ['a CR before the line break', (l: string) => `${l}\r`],
    ['a space after a colon', (l: string) => l.replace('"method":', '"method": ')],
    ['pretty-printed on one line', (l: string) => JSON.stringify(JSON.parse(l), null, 1).replace(/\n/g, ' ')],
    ['an escaped letter', (l: string) => l.replace('"alice"', '"\\u0061lice"')],
    ['an escaped slash', (l: string) => l.replace('file:///', 'file:\\/\\/\\/')],
    ['keys in another order', (l: string) => JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(l) as object).reverse()))],
    ['an uppercase hex hash', (l: string) => l.replace(/"hash":"([0-9a-f]{64})"/, (_m, h: string) => `"hash":"${h.toUpperCase()}"`)],
  ])('fails a line that parses to its record but is spelled otherwise: %s, at its line', async (_what, respell) => {
    const lines = chain(3);
    const spelled = respell(lines[1]!);
    expect(spelled).not.toBe(lines[1]);
    const file = put('respelled', [lines[0]!, spelled, lines[2]!]);
    const { broken, records } = await verifyAuditFiles([file]);
    expect(records).toBe(1);
    expect(broken).toMatchObject({ file, line: 2 });
    expect(broken!.reason).toMatch(/not the canonical form of its record|no valid "hash"/);
  });

  it('fails a line holding bytes that are not UTF-8, although they decode to the U+FFFD its record holds', async () => {
    const base = entry(1);
    const { line } = sealRecord({ ...base, caller: { ...base.caller, principal: 'al\ufffdce' } }, { seq: 1, prev: GENESIS_HASH, time: 0 });
    const good = put('good-utf8', [line.slice(0, -1)]);
    expect((await verifyAuditFiles([good])).broken).toBeUndefined();
    const bytes = Buffer.from(line, 'utf8');
    const at = bytes.indexOf(Buffer.from('\ufffd', 'utf8'));
    const bad = path.join(tmp.path, 'bad-utf8');
    writeFileSync(bad, Buffer.concat([bytes.subarray(0, at), Buffer.from([0xff]), bytes.subarray(at + 3)]));
    expect((await verifyAuditFiles([bad])).broken).toEqual({ file: bad, line: 1, reason: expect.stringContaining('not the canonical form') });
  });

  it('reads lines across read-buffer boundaries', async () => {
    const lines = chain(2000);
    const file = put('big', lines);
    expect(readFileSync(file).length).toBeGreaterThan(3 * 64 * 1024);
    expect(await verifyAuditFiles([file])).toMatchObject({ records: 2000, last: { seq: 2000 } });
  });

  it('throws AuditFileError naming a file that is missing or a directory, before reading any', async () => {
    const broken = put('a', ['not a record']); // broken, but the missing file is reported first
    const missing = path.join(tmp.path, 'nope');
    const error = await verifyAuditFiles([broken, missing]).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(AuditFileError);
    expect(error).toMatchObject({ file: missing, message: `cannot read ${missing} (ENOENT)` });
    await expect(verifyAuditFiles([tmp.path])).rejects.toThrow(`cannot read ${tmp.path} (EISDIR)`);
  });

  describe('keyed chain', () => {
    it('verifies every MAC with the right key and reports them', async () => {
      const { lines, heads } = keyedChain(5, KEY);
      const result = await verifyAuditFiles([put('k', lines)], { key: KEY });
      expect(result).toMatchObject({ records: 5, keyed: { checked: 5 }, last: heads[4] });
      expect(result.broken).toBeUndefined();
      expect(result.keyed!.unkeyed).toBeUndefined();
    });

    it('fails with a wrong key at the first line', async () => {
      const { lines } = keyedChain(3, KEY);
      const file = put('k', lines);
      expect((await verifyAuditFiles([file], { key: OTHER_KEY })).broken).toEqual({ file, line: 1, reason: expect.stringContaining('MAC mismatch') });
    });

    it('without a key, passes the plain chain and counts the MACs it could not check', async () => {
      const { lines } = keyedChain(3, KEY);
      expect(await verifyAuditFiles([put('k', lines)])).toMatchObject({ records: 3, uncheckedMacs: 3 });
    });

    it.each([
      ['re-sealed from a middle record with another key', (l: string[]) => reseal(l, 2, OTHER_KEY), 3, 'MAC mismatch'],
      ['re-sealed from a middle record as a plain chain (MACs dropped)', (l: string[]) => reseal(l, 2), 3, 'no "mac" after keyed records'],
      [
        're-sealed hashes keeping the old MACs',
        (l: string[]) =>
          reseal(l, 2, KEY).map((x, i) => (i < 2 ? x : x.replace(/"mac":"[0-9a-f]{64}"/, `"mac":"${(JSON.parse(l[i]!) as { mac: string }).mac}"`))),
        3,
        'MAC mismatch',
      ],
      [
        'a forged record appended without a MAC',
        (l: string[]) => [...l, reseal([...l, l[4]!.replace('"seq":5', '"seq":6')], 5).at(-1)!],
        6,
        'no "mac" after keyed records',
      ],
      [
        'a forged record appended with a made-up MAC',
        (l: string[]) => [...l, reseal([...l, l[4]!.replace('"seq":5', '"seq":6')], 5, OTHER_KEY).at(-1)!],
        6,
        'MAC mismatch',
      ],
      [
        'with the MACs stripped from its first records',
        (l: string[]) => l.map((x, i) => (i < 2 ? x.replace(/,"mac":"[0-9a-f]{64}"/, '') : x)),
        3,
        'MAC mismatch',
      ],
    ])('fails a log %s, at its line', async (_what, tamper, line, reason) => {
      const { lines } = keyedChain(5, KEY);
      const file = put('t', tamper(lines));
      const { broken } = await verifyAuditFiles([file], { key: KEY });
      expect(broken).toMatchObject({ file, line });
      expect(broken!.reason).toContain(reason);
    });

    it('accepts records without a MAC only before the first keyed one, and says which', async () => {
      const { lines } = keyedChain(5, KEY, 2);
      const result = await verifyAuditFiles([put('k', lines)], { key: KEY });
      expect(result).toMatchObject({ records: 5, keyed: { checked: 3, unkeyed: { from: 1, to: 2 } } });
      expect(result.broken).toBeUndefined();
      // A forger cannot use that: changing an unkeyed record breaks the first keyed record's MAC-bound prev.
      const forged = put('f', [...reseal(lines, 1).slice(0, 2), ...lines.slice(2)]);
      expect((await verifyAuditFiles([forged], { key: KEY })).broken).toMatchObject({ line: 3, reason: expect.stringContaining('"prev" is not the hash') });
      const resealed = put('r', [...reseal(lines, 1).slice(0, 2), ...reseal(reseal(lines, 1), 2, OTHER_KEY).slice(2)]);
      expect((await verifyAuditFiles([resealed], { key: KEY })).broken).toMatchObject({ line: 3, reason: expect.stringContaining('MAC mismatch') });
    });

    it('fails a log with no MAC at all when a key is given, naming its last line', async () => {
      const file = put('plain', chain(3));
      expect((await verifyAuditFiles([file], { key: KEY })).broken).toEqual({ file, line: 3, reason: expect.stringContaining('no record carries a "mac"') });
    });

    it('verifies later files alone, taking the first MAC as given, and still catches a change to that first record', async () => {
      const { lines } = keyedChain(6, KEY);
      const later = put('later', lines.slice(3));
      expect(await verifyAuditFiles([later], { key: KEY })).toMatchObject({ records: 3, anchored: true, firstSeq: 4, keyed: { checked: 2 } });
      const changed = put('changed', reseal(lines, 3, OTHER_KEY).slice(3));
      expect((await verifyAuditFiles([changed], { key: KEY })).broken).toMatchObject({
        file: changed,
        line: 2,
        reason: expect.stringContaining('MAC mismatch'),
      });
    });
  });

  describe('anchors', () => {
    it('passes a log that matches its anchors and ends at the last one', async () => {
      const { lines, heads } = keyedChain(6, KEY);
      const result = await verifyAuditFiles([put('a', lines)], { key: KEY, anchors: anchorsOf(heads, [3, 6]) });
      expect(result.broken).toBeUndefined();
      expect(result.anchorCheck).toEqual({ checked: 2, before: 0, last: { seq: 6, line: 2 } });
    });

    it('fails a truncated log, naming its last line and the anchor it does not reach', async () => {
      const lines = chain(6);
      const heads = lines.map((l) => JSON.parse(l) as { seq: number; hash: string });
      const file = put('cut', lines.slice(0, 4));
      expect((await verifyAuditFiles([file], { anchors: anchorsOf(heads, [3, 6]) })).broken).toEqual({
        file,
        line: 4,
        reason: 'the log ends at seq 4, before seq 6 anchored at anchors.jsonl:2: records after this line were cut off (truncated)',
      });
    });

    it('fails a plain log re-sealed from a middle record at the anchored seq after it', async () => {
      const lines = chain(6);
      const heads = lines.map((l) => JSON.parse(l) as { seq: number; hash: string });
      const file = put('resealed', reseal(lines, 1));
      expect((await verifyAuditFiles([file], { anchors: anchorsOf(heads, [3, 6]) })).broken).toEqual({
        file,
        line: 3,
        reason: expect.stringContaining('anchors.jsonl:1'),
      });
    });

    it('reports records appended after the last anchor as unanchored, from their first line', async () => {
      const lines = chain(6);
      const heads = lines.map((l) => JSON.parse(l) as { seq: number; hash: string });
      const file = put('appended', lines);
      const result = await verifyAuditFiles([file], { anchors: anchorsOf(heads, [4]) });
      expect(result.broken).toBeUndefined();
      expect(result.anchorCheck!.unanchored).toEqual({ from: { file, line: 5, seq: 5 }, to: { file, line: 6, seq: 6 }, count: 2 });
    });

    it('does not check anchors older than the files given, and counts them', async () => {
      const lines = chain(6);
      const heads = lines.map((l) => JSON.parse(l) as { seq: number; hash: string });
      const result = await verifyAuditFiles([put('later', lines.slice(3))], { anchors: anchorsOf(heads, [2, 5, 6]) });
      expect(result.broken).toBeUndefined();
      expect(result.anchorCheck).toMatchObject({ checked: 2, before: 1 });
    });

    it('reads anchor files as the writer writes them, leaving out a torn last line, and refuses a line that is not an anchor', async () => {
      const head = { seq: 3, hash: 'a'.repeat(64), mac: 'b'.repeat(64) };
      const text = anchorLine(head, 0) + anchorLine({ seq: 4, hash: 'c'.repeat(64) }, 0);
      const file = path.join(tmp.path, 'anchors.jsonl');
      writeFileSync(file, text + text.slice(0, 20));
      expect(await readAnchorFile(file)).toEqual({
        anchors: [
          { ...head, time: '1970-01-01T00:00:00.000Z', line: 1 },
          { seq: 4, hash: 'c'.repeat(64), time: '1970-01-01T00:00:00.000Z', line: 2 },
        ],
        torn: true,
      });
      // The operational log's anchor objects (jq -c 'select(.msg == "audit anchor") | .anchor') read too.
      writeFileSync(file, `{"seq":7,"hash":"${'d'.repeat(64)}"}\n`);
      expect((await readAnchorFile(file)).anchors).toEqual([{ seq: 7, hash: 'd'.repeat(64), line: 1 }]);
      writeFileSync(file, `${text}{"seq":"5"}\n`);
      await expect(readAnchorFile(file)).rejects.toThrow('line 3 is not an anchor');
    });
  });
});
