// `audit verify` over several replicas' files: one chain per replica (its `chain` id in every record), each verified through its own files.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDirEach } from '../helpers/temp-dir.js';
import { GENESIS_HASH, sealRecord, type AuditEntry } from '../../src/audit/record.js';
import { auditCommand } from '../../src/commands/audit-verify.js';

const entry = (i: number): AuditEntry => ({
  caller: { principal: 'alice', roles: [], session: 's', transport: 'http' },
  method: 'resources/read',
  uri: `docs+file:///${i}.md`,
  decision: 'allow',
  rule: 'default',
  outcome: 'ok',
  durationMs: i,
});

/** Lines of a chain of `n` records of replica `chain`, from seq `from` after `prev`. */
function lines(chain: string | undefined, n: number, from = 1, prev = GENESIS_HASH): { lines: string[]; head: string } {
  const out: string[] = [];
  for (let seq = from; seq < from + n; seq++) {
    const { record, line } = sealRecord(entry(seq), { seq, prev, time: Date.UTC(2026, 0, 1) + seq, chain });
    out.push(line);
    prev = record.hash;
  }
  return { lines: out, head: prev };
}

async function verify(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await auditCommand(['verify', ...args], { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

describe('audit verify across replicas', () => {
  const tmp = tempDirEach('audit-chains');
  const file = (name: string) => path.join(tmp.path, name);

  it('records carry their chain id (hashed with them); three replicas’ files, one rotated, verify together, each chain on its own', async () => {
    const r1 = lines('r1', 4);
    expect(JSON.parse(r1.lines[0]!).chain).toBe('r1');
    writeFileSync(file('r1.jsonl.1'), r1.lines.slice(0, 2).join(''));
    writeFileSync(file('r1.jsonl'), r1.lines.slice(2).join(''));
    writeFileSync(file('r2.jsonl'), lines('r2', 3).lines.join(''));
    writeFileSync(file('r3.jsonl'), lines('r3', 5).lines.join(''));
    const { code, out } = await verify(file('r1.jsonl.1'), file('r2.jsonl'), file('r1.jsonl'), file('r3.jsonl'));
    expect(code).toBe(0);
    expect(out).toMatch(/^chain r1: verified 4 records in 2 files, last seq 4 hash [0-9a-f]{64}$/m);
    expect(out).toMatch(/^chain r2: verified 3 records in 1 file, last seq 3/m);
    expect(out).toMatch(/^chain r3: verified 5 records in 1 file, last seq 5/m);
    expect(out).toMatch(/^3 chains: 3 verified, 0 broken, 12 records$/m);
  });

  it('a record altered in one replica’s file fails that chain only, exit 1; the others still verify', async () => {
    writeFileSync(file('r1.jsonl'), lines('r1', 3).lines.join(''));
    const r2 = lines('r2', 3).lines;
    r2[1] = r2[1]!.replace('"outcome":"ok"', '"outcome":"no"');
    writeFileSync(file('r2.jsonl'), r2.join(''));
    const { code, out } = await verify(file('r1.jsonl'), file('r2.jsonl'));
    expect(code).toBe(1);
    expect(out).toMatch(/^chain r1: verified 3 records/m);
    expect(out).toContain(`chain r2: ${file('r2.jsonl')}:2: hash mismatch`);
    expect(out).toMatch(/^2 chains: 1 verified, 1 broken, 4 records$/m);
  });

  it('another replica’s record spliced into a chain (re-sealed to link) is caught by its chain id', async () => {
    const r1 = lines('r1', 2);
    const forged = lines('r2', 1, 3, r1.head); // links to r1's head, but is r2's
    writeFileSync(file('r1.jsonl'), [...r1.lines, ...forged.lines].join(''));
    const { code, out } = await verify(file('r1.jsonl'));
    expect(code).toBe(1);
    expect(out).toContain(':3: chain "r2" follows chain "r1"');
  });

  it('one replica’s file alone, or a single gateway’s log, verifies exactly as before; --anchor with several chains is refused', async () => {
    writeFileSync(file('one.jsonl'), lines(undefined, 2).lines.join(''));
    const single = await verify(file('one.jsonl'));
    expect(single.code).toBe(0);
    expect(single.out.split('\n')[0]).toBe('verified 2 records');
    writeFileSync(file('r1.jsonl'), lines('r1', 2).lines.join(''));
    const replica = await verify(file('r1.jsonl'));
    expect(replica.out.split('\n')[0]).toBe('verified 2 records');
    expect(JSON.parse(readFileSync(file('one.jsonl'), 'utf8').split('\n')[0]!)).not.toHaveProperty('chain');
    writeFileSync(file('anchors.jsonl'), '');
    const refused = await verify('--anchor', file('anchors.jsonl'), file('r1.jsonl'), file('one.jsonl'));
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('--anchor checks one chain');
  });
});
