// The audit log writer: fields, the hash chain, restarts, rotation, hostile strings; checked with the verifier.
import { createHash, createSecretKey } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import fs from 'node:fs';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { tempDirEach } from '../helpers/temp-dir.js';
import type { Caller } from '../../src/caller.js';
import { openAuditLog, noopAuditLog, type AuditEntry, type AuditRecord } from '../../src/audit/log.js';
import { GENESIS_HASH, MAX_FIELD_CHARS } from '../../src/audit/record.js';
import { readAnchorFile, verifyAuditFiles } from '../../src/audit/verify.js';
import { canonicalize } from '../../src/audit/jcs.js';
import { ErrorCodes, ProxyError } from '../../src/errors.js';
import { createLogger } from '../../src/logger.js';

const T0 = Date.UTC(2026, 4, 1, 12, 0, 0, 7);
const caller: Caller = { principal: 'alice', roles: ['reader', 'ops'], session: 'sess-1', transport: 'stdio' };

const read = (uri = 'docs+file:///a.md', over: Partial<AuditEntry> = {}): AuditEntry => ({
  caller,
  method: 'resources/read',
  uri,
  server: 'docs',
  upstreamUri: uri.slice(uri.indexOf('+') + 1),
  decision: 'allow',
  rule: 'readers',
  outcome: 'ok',
  cache: 'miss',
  bytes: 1234,
  durationMs: 1.23456,
  ...over,
});

const list: AuditEntry = { caller, method: 'resources/list', decision: 'allow', rule: 'default', outcome: 'ok', durationMs: 3, returned: 7, filtered: 2 };

describe('audit log', () => {
  const tmp = tempDirEach('audit-log');
  let file: string;
  let clock: number;
  const now = () => clock++;
  const open = (over: { maxBytes?: number; keep?: number } = {}) => openAuditLog({ file, maxBytes: 0, keep: 10, ...over }, { now });
  const lines = (f = file) => readFileSync(f, 'utf8').split('\n').slice(0, -1);
  const records = (f = file) => lines(f).map((l) => JSON.parse(l) as AuditRecord);
  const write = (n: number, over: { maxBytes?: number; keep?: number } = {}) => {
    const log = open(over);
    for (let i = 0; i < n; i++) log.record(read(`docs+file:///${i}.md`));
    void log.close();
  };

  beforeEach(() => {
    file = path.join(tmp.path, 'audit.jsonl');
    clock = T0;
  });

  it('batches the records of one turn into one write, in chain order with synchronous ones, resolving once written', async () => {
    const log = open();
    const writes = vi.spyOn(fs, 'writeSync');
    const batched = Array.from({ length: 20 }, (_, i) => log.recordBatched(read(`docs+file:///b${i}.md`)));
    expect(existsSync(file) ? lines().length : 0).toBe(0); // nothing written yet: it waits for the turn to end
    await Promise.all(batched);
    expect(writes).toHaveBeenCalledTimes(1);
    const more = log.recordBatched(read('docs+file:///c.md'));
    log.record(read('docs+file:///sync.md')); // a synchronous record writes the pending batch first
    await more;
    writes.mockRestore();
    void log.close();
    expect(records().map((r) => r.uri)).toEqual([
      ...Array.from({ length: 20 }, (_, i) => `docs+file:///b${i}.md`),
      'docs+file:///c.md',
      'docs+file:///sync.md',
    ]);
    expect(records().map((r) => r.seq)).toEqual(Array.from({ length: 22 }, (_, i) => i + 1));
    const verified = await verifyAuditFiles([file]);
    expect([verified.records, verified.broken]).toEqual([22, undefined]);
  });

  it('a batch whose write fails rejects every record in it and leaves the chain where the file ends', async () => {
    const log = open();
    await log.recordBatched(read('docs+file:///ok.md'));
    const writes = vi.spyOn(fs, 'writeSync').mockImplementationOnce(() => {
      throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    });
    const failed = [log.recordBatched(read('docs+file:///x.md')), log.recordBatched(read('docs+file:///y.md'))];
    for (const p of failed) await expect(p).rejects.toThrow(/ENOSPC/);
    writes.mockRestore();
    await log.recordBatched(read('docs+file:///after.md'));
    void log.close();
    expect(records().map((r) => [r.seq, r.uri])).toEqual([
      [1, 'docs+file:///ok.md'],
      [2, 'docs+file:///after.md'],
    ]);
    expect((await verifyAuditFiles([file])).broken).toBeUndefined();
  });

  it('rotates on the batched path too, the chain continuing across the files', async () => {
    const log = open({ maxBytes: 1500 });
    for (let i = 0; i < 12; i++) await Promise.all([log.recordBatched(read(`docs+file:///${i}a.md`)), log.recordBatched(read(`docs+file:///${i}b.md`))]);
    void log.close();
    const files = [`${file}.2`, `${file}.1`, file].filter((f) => existsSync(f));
    expect(files.length).toBeGreaterThan(1);
    const verified = await verifyAuditFiles(files.filter((f) => existsSync(f)));
    expect(verified.broken).toBeUndefined();
    expect(verified.records).toBeGreaterThan(0);
    for (const f of files) expect(statSync(f).size).toBeLessThanOrEqual(1500);
  });

  it('writes one line per record with the caller, the decision and the chain fields, and nothing else', () => {
    const log = open();
    log.record(read());
    log.record(list);
    log.record(read('docs+file:///b.md', { decision: 'deny', rule: 'no-secrets', outcome: 'denied', cache: undefined, bytes: undefined }));
    void log.close();
    const [r1, r2, r3] = records();
    expect(lines()).toHaveLength(3);
    expect(r1).toEqual({
      time: '2026-05-01T12:00:00.007Z',
      seq: 1,
      session: 'sess-1',
      principal: 'alice',
      roles: ['reader', 'ops'],
      transport: 'stdio',
      method: 'resources/read',
      uri: 'docs+file:///a.md',
      server: 'docs',
      upstreamUri: 'file:///a.md',
      decision: 'allow',
      rule: 'readers',
      outcome: 'ok',
      cache: 'miss',
      bytes: 1234,
      durationMs: 1.235,
      prev: GENESIS_HASH,
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    // A list carries counts instead of URIs; fields that do not apply are absent, not null.
    expect(r2).toEqual({
      time: '2026-05-01T12:00:00.008Z',
      seq: 2,
      session: 'sess-1',
      principal: 'alice',
      roles: ['reader', 'ops'],
      transport: 'stdio',
      method: 'resources/list',
      decision: 'allow',
      rule: 'default',
      outcome: 'ok',
      durationMs: 3,
      returned: 7,
      filtered: 2,
      prev: r1!.hash,
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(r3).toMatchObject({ seq: 3, decision: 'deny', rule: 'no-secrets', outcome: 'denied', prev: r2!.hash });
    expect(Object.keys(r3!)).not.toContain('cache');
    expect(Object.keys(r3!)).not.toContain('bytes');
  });

  it('chains each record: hash = sha256(prev + JCS(record without hash)), the first prev is 64 zeros', async () => {
    write(5);
    const rs = records();
    expect(rs.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    let prev = GENESIS_HASH;
    for (const { hash, ...rest } of rs) {
      expect(rest.prev).toBe(prev);
      expect(hash).toBe(
        createHash('sha256')
          .update(prev + canonicalize(rest))
          .digest('hex'),
      );
      prev = hash;
    }
    expect(await verifyAuditFiles([file])).toEqual({ records: 5, firstSeq: 1, anchored: false, last: { seq: 5, hash: prev } });
  });

  it('records only the caller’s identity fields, whatever else the caller object carries', () => {
    const withSecret = { ...caller, token: 'Bearer s3cret', headers: { authorization: 'x' } } as Caller;
    const log = open();
    log.record({ ...read(), caller: withSecret, ...({ contents: 'the text', params: { secret: 1 } } as object) });
    void log.close();
    const text = readFileSync(file, 'utf8');
    expect(text).not.toMatch(/s3cret|authorization|the text|secret|contents|params/);
  });

  it('continues seq and the chain after a restart, reading the last line from the end', async () => {
    write(3);
    write(2);
    expect(records().map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(records()[3]!.prev).toBe(records()[2]!.hash);
    expect(await verifyAuditFiles([file])).toMatchObject({ records: 5, anchored: false });
  });

  it('continues the chain from a last line longer than one read chunk', async () => {
    const log = open();
    log.record(
      read(`docs+file:///${'x'.repeat(1500)}`, { caller: { ...caller, roles: Array.from({ length: 60 }, (_, i) => `role-${i}-${'r'.repeat(400)}`) } }),
    );
    void log.close();
    expect(statSync(file).size).toBeGreaterThan(20_000);
    write(1);
    expect(records().map((r) => r.seq)).toEqual([1, 2]);
    expect(await verifyAuditFiles([file])).toMatchObject({ records: 2 });
  });

  it.each(['missing', 'empty'])('continues from <file>.1 when the file is %s (a crash between rotation and the next record)', async (state) => {
    write(3);
    writeFileSync(`${file}.1`, readFileSync(file));
    if (state === 'missing') rmSync(file);
    else writeFileSync(file, '');
    write(2);
    expect(records().map((r) => r.seq)).toEqual([4, 5]);
    expect(records()[0]!.prev).toBe(records(`${file}.1`)[2]!.hash);
    expect(await verifyAuditFiles([`${file}.1`, file])).toMatchObject({ records: 5, anchored: false });
  });

  it('removes a torn last line (a write cut short) at open, says so, and continues from the last complete record', async () => {
    write(3);
    const size = statSync(file).size;
    truncateSync(file, size - 20);
    const warnings: string[] = [];
    const logger = createLogger({ destination: new Writable({ write: (c: Buffer, _e, cb) => (warnings.push(c.toString()), cb()) }), level: 'warn' });
    const log = openAuditLog({ file, maxBytes: 0, keep: 10 }, { now, logger });
    log.record(read());
    void log.close();
    expect(records().map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(await verifyAuditFiles([file])).toMatchObject({ records: 3 });
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ msg: expect.stringContaining('torn last line'), file, bytes: expect.any(Number) });
  });

  it('refuses to open a file whose last complete line is not a record, rather than restart the chain silently', () => {
    write(2);
    appendFileSync(file, 'garbage\n');
    expect(() => open()).toThrow(/its last line is not an audit record/);
  });

  it('rotates by maxBytes, logrotate-style, and the chain runs through the files: verify f.2 f.1 f passes', async () => {
    write(1);
    const recordBytes = statSync(file).size;
    rmSync(file);
    write(9, { maxBytes: recordBytes * 3 + 10 });
    expect([file, `${file}.1`, `${file}.2`].map((f) => records(f).map((r) => r.seq))).toEqual([
      [7, 8, 9],
      [4, 5, 6],
      [1, 2, 3],
    ]);
    expect(existsSync(`${file}.3`)).toBe(false);
    expect(await verifyAuditFiles([`${file}.2`, `${file}.1`, file])).toMatchObject({ records: 9, firstSeq: 1, anchored: false, last: { seq: 9 } });
    // The chain continues across a restart into the rotated set.
    write(1, { maxBytes: recordBytes * 3 + 10 });
    expect(records(file).map((r) => r.seq)).toEqual([10]);
    expect(records(`${file}.1`).map((r) => r.seq)).toEqual([7, 8, 9]);
  });

  it('keeps `keep` rotated files; verifying only those anchors the chain at their first record', async () => {
    write(1);
    const recordBytes = statSync(file).size;
    rmSync(file);
    write(10, { maxBytes: recordBytes * 2 + 10, keep: 2 });
    expect(existsSync(`${file}.3`)).toBe(false);
    expect(records(`${file}.2`).map((r) => r.seq)).toEqual([5, 6]);
    expect(await verifyAuditFiles([`${file}.2`, `${file}.1`, file])).toMatchObject({ records: 6, firstSeq: 5, anchored: true });
  });

  it('refuses the record whose rotation failed half-way, and the next one rotates and keeps the chain in order', async () => {
    write(1);
    const recordBytes = statSync(file).size;
    rmSync(file);
    const log = open({ maxBytes: recordBytes * 2 + 10 });
    log.record(read());
    log.record(read());
    const openSync = vi.spyOn(fs, 'openSync').mockImplementationOnce(() => {
      throw Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' });
    });
    try {
      expect(() => log.record(read())).toThrow('EMFILE');
    } finally {
      openSync.mockRestore();
    }
    log.record(read());
    void log.close();
    expect(records(`${file}.2`).map((r) => r.seq)).toEqual([1, 2]);
    expect(records(file).map((r) => r.seq)).toEqual([3]);
    expect(await verifyAuditFiles([`${file}.2`, file])).toMatchObject({ records: 3, anchored: false });
  });

  it('keeps a hostile URI on one line: newlines, separators, C1 and bidi controls are written escaped, and it verifies', async () => {
    const hostile = 'docs+file:///a\n{"forged":true}\r\u2028x\u2029y\u0085z\u202e\u2066\u007f\u0000"\\';
    const log = open();
    log.record(read(hostile));
    log.record(read());
    void log.close();
    const text = readFileSync(file, 'utf8');
    expect(text.split('\n')).toHaveLength(3);
    expect(text).not.toMatch(/[\r\u2028\u2029\u0085\u202e\u2066\u007f\u0000]/);
    expect(text).toContain('\\u2028x\\u2029y\\u0085z\\u202e\\u2066\\u007f\\u0000');
    expect(records()[0]!.uri).toBe(hostile);
    expect(await verifyAuditFiles([file])).toMatchObject({ records: 2 });
  });

  it('cuts strings past MAX_FIELD_CHARS, never inside a surrogate pair, and lists the fields cut', async () => {
    const long = `docs+file:///${'a'.repeat(MAX_FIELD_CHARS - 14)}😀tail`; // the emoji straddles the limit
    const log = open();
    log.record(read(long, { upstreamUri: 'file:///short', caller: { ...caller, principal: 'p'.repeat(5000) } }));
    void log.close();
    const [r] = records();
    expect(r!.uri).toBe(long.slice(0, MAX_FIELD_CHARS - 1));
    expect(r!.principal).toHaveLength(MAX_FIELD_CHARS);
    expect(r!.truncated).toEqual(['principal', 'uri']);
    expect(await verifyAuditFiles([file])).toMatchObject({ records: 1 });
  });

  it('close is idempotent, flushes, and a record after it is refused with CLOSED', async () => {
    const log = open();
    log.record(read());
    void log.close();
    void log.close();
    await log[Symbol.asyncDispose]();
    let error: unknown;
    try {
      log.record(read());
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ProxyError);
    expect((error as ProxyError).code).toBe(ErrorCodes.CLOSED);
    expect(lines()).toHaveLength(1);
  });

  it('`await using` closes it', async () => {
    {
      await using log = open();
      log.record(read());
    }
    write(1); // a second writer only after the first closed
    expect(records().map((r) => r.seq)).toEqual([1, 2]);
  });

  it('is a no-op when audit is not configured', async () => {
    const log = openAuditLog(undefined);
    expect(log).toBe(noopAuditLog);
    log.record(read());
    await log.close();
    await log[Symbol.asyncDispose]();
    expect(existsSync(file)).toBe(false);
  });

  describe('keyed chain (audit.keyEnv)', () => {
    const KEY_TEXT = 'an audit key of 32 bytes, ok....';
    const env = { AUDIT_KEY: KEY_TEXT };
    const KEY = createSecretKey(Buffer.from(KEY_TEXT));
    const WRONG = createSecretKey(Buffer.from('another key of at least 16 bytes'));
    const openKeyed = (over: { maxBytes?: number; keep?: number } = {}) =>
      openAuditLog({ file, maxBytes: 0, keep: 10, keyEnv: 'AUDIT_KEY', ...over }, { now, env });
    const writeKeyed = (n: number, over: { maxBytes?: number; keep?: number } = {}) => {
      const log = openKeyed(over);
      for (let i = 0; i < n; i++) log.record(read(`docs+file:///${i}.md`));
      void log.close();
    };

    it('gives each record a MAC over the previous MAC and the canonical record, first from 64 zeros', async () => {
      writeKeyed(2);
      const [a, b] = records();
      const { hash: _h, mac: _m, ...bodyA } = a!;
      const macA = (await import('node:crypto'))
        .createHmac('sha256', KEY_TEXT)
        .update(GENESIS_HASH + canonicalize(bodyA))
        .digest('hex');
      expect(a!.mac).toBe(macA);
      const { hash: _h2, mac: _m2, ...bodyB } = b!;
      expect(b!.mac).toBe(
        (await import('node:crypto'))
          .createHmac('sha256', KEY_TEXT)
          .update(macA + canonicalize(bodyB))
          .digest('hex'),
      );
      expect(lines()[0]!.endsWith(`,"hash":"${a!.hash}","mac":"${a!.mac}"}`)).toBe(true);
      expect(await verifyAuditFiles([file], { key: KEY })).toMatchObject({ records: 2, keyed: { checked: 2 } });
      expect((await verifyAuditFiles([file], { key: WRONG })).broken).toMatchObject({ line: 1, reason: expect.stringContaining('MAC mismatch') });
    });

    it('continues the keyed chain across rotations, the batched path and restarts, and the whole set verifies with the key', async () => {
      writeKeyed(1);
      const recordBytes = statSync(file).size;
      rmSync(file);
      writeKeyed(4, { maxBytes: recordBytes * 3 + 10 });
      const log = openKeyed({ maxBytes: recordBytes * 3 + 10 }); // a restart, then batched records that rotate
      await Promise.all([1, 2, 3, 4].map((i) => log.recordBatched(read(`docs+file:///b${i}.md`))));
      void log.close();
      writeKeyed(1, { maxBytes: recordBytes * 3 + 10 }); // another restart
      const files = [`${file}.2`, `${file}.1`, file];
      expect(files.map((f) => records(f).map((r) => r.seq))).toEqual([
        [1, 2, 3],
        [4, 5, 6],
        [7, 8, 9],
      ]);
      expect(await verifyAuditFiles(files, { key: KEY })).toMatchObject({ records: 9, keyed: { checked: 9 } });
      expect((await verifyAuditFiles(files, { key: WRONG })).broken).toMatchObject({ file: `${file}.2`, line: 1 });
    });

    it('starts the MACs from 64 zeros on a plain log whose key was just configured, and verify says which records carry none', async () => {
      write(2);
      writeKeyed(2);
      expect(records().map((r) => r.mac === undefined)).toEqual([true, true, false, false]);
      expect(await verifyAuditFiles([file], { key: KEY })).toMatchObject({ records: 4, keyed: { checked: 2, unkeyed: { from: 1, to: 2 } } });
      // A key taken away is visible: plain records after keyed ones fail with the key.
      write(1);
      expect((await verifyAuditFiles([file], { key: KEY })).broken).toMatchObject({ line: 5, reason: expect.stringContaining('no "mac" after keyed records') });
    });

    it.each([
      [{}, 'audit.keyEnv: environment variable AUDIT_KEY is not set'],
      [{ AUDIT_KEY: '' }, 'audit.keyEnv: environment variable AUDIT_KEY is not set'],
      [{ AUDIT_KEY: 'short' }, 'audit.keyEnv: environment variable AUDIT_KEY holds 5 bytes'],
    ])('refuses to open with %j as the environment: a config error naming the variable, never its value', (e, message) => {
      let error: unknown;
      try {
        openAuditLog({ file, maxBytes: 0, keep: 10, keyEnv: 'AUDIT_KEY' }, { env: e });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ProxyError);
      expect(error).toMatchObject({ code: ErrorCodes.CONFIG_INVALID, message: expect.stringContaining(message) });
      expect((error as Error).message).not.toContain('short');
      expect(existsSync(file)).toBe(false);
    });
  });

  describe('anchors', () => {
    const anchorFile = () => path.join(tmp.path, 'anchors.jsonl');
    /** A manual anchor timer: `tick()` runs what the writer scheduled. */
    const manualTimer = () => {
      const t = { fn: undefined as (() => void) | undefined, ms: 0, stopped: false, tick: () => t.fn?.() };
      return { t, every: (fn: () => void, ms: number) => ((t.fn = fn), (t.ms = ms), () => void (t.stopped = true)) };
    };

    it('anchors every N records, one in flight at a time, and at close, after the records are on disk; the log verifies against them', async () => {
      const { t, every } = manualTimer();
      const log = openAuditLog({ file, maxBytes: 0, keep: 10, anchorFile: anchorFile(), anchorEvery: 3, anchorSeconds: 7 }, { now, every });
      expect(t.ms).toBe(7000);
      const syncs = vi.spyOn(fs, 'fsync');
      // Ten records in one turn: the anchor at 3 starts (its fsyncs off the event loop), and the ones
      // due at 6 and 9 wait for it; it cannot finish before the turn ends, so they are skipped.
      for (let i = 0; i < 10; i++) log.record(read(`docs+file:///${i}.md`));
      expect(syncs).toHaveBeenCalledTimes(1); // the audit file first; the anchor file's follows the append
      await log.close();
      expect(syncs).toHaveBeenCalledTimes(2);
      syncs.mockRestore();
      expect(t.stopped).toBe(true);
      const { anchors } = await readAnchorFile(anchorFile());
      expect(anchors.map((a) => a.seq)).toEqual([3, 10]);
      expect(anchors[0]).toMatchObject({ hash: records()[2]!.hash });
      expect(anchors[1]).toMatchObject({ hash: records()[9]!.hash, time: expect.any(String) });
      const result = await verifyAuditFiles([file], { anchors: { file: anchorFile(), anchors } });
      expect(result.broken).toBeUndefined();
      expect(result.anchorCheck).toEqual({ checked: 2, before: 0, last: { seq: 10, line: 2 } });
    });

    it('rotates while an anchor is in flight, and the chain and the anchors stay in order', async () => {
      write(1);
      const recordBytes = statSync(file).size;
      rmSync(file);
      const { every } = manualTimer();
      const log = openAuditLog({ file, maxBytes: recordBytes * 2 + 10, keep: 10, anchorFile: anchorFile(), anchorEvery: 2 }, { now, every });
      for (let i = 0; i < 7; i++) log.record(read(`docs+file:///${i}.md`));
      await log.close();
      const files = [`${file}.3`, `${file}.2`, `${file}.1`, file];
      const { anchors } = await readAnchorFile(anchorFile());
      expect(anchors.at(-1)!.seq).toBe(7);
      const result = await verifyAuditFiles(files, { anchors: { file: anchorFile(), anchors } });
      expect(result).toMatchObject({ records: 7, anchorCheck: { checked: anchors.length } });
      expect(result.broken).toBeUndefined();
    });

    it('anchors on the timer only when records were written since the last anchor, batched ones included', async () => {
      const { t, every } = manualTimer();
      const log = openAuditLog({ file, maxBytes: 0, keep: 10, anchorFile: anchorFile(), keyEnv: 'K' }, { now, every, env: { K: 'x'.repeat(32) } });
      t.tick();
      expect(readFileSync(anchorFile(), 'utf8')).toBe('');
      await Promise.all([log.recordBatched(read()), log.recordBatched(read())]);
      t.tick();
      t.tick(); // nothing new since (or the first still in flight): no second anchor
      await log.close();
      const { anchors } = await readAnchorFile(anchorFile());
      expect(anchors).toEqual([{ seq: 2, hash: records()[1]!.hash, mac: records()[1]!.mac, time: expect.any(String), line: 1 }]); // and no shutdown anchor: nothing new since
      await log.close();
    });

    it('without an anchor file, anchors go to the operational log at info', async () => {
      const logged: string[] = [];
      const logger = createLogger({ destination: new Writable({ write: (c: Buffer, _e, cb) => (logged.push(c.toString()), cb()) }), level: 'info' });
      const log = openAuditLog({ file, maxBytes: 0, keep: 10, anchorEvery: 2 }, { now, logger });
      for (let i = 0; i < 3; i++) log.record(read());
      void log.close();
      const anchors = logged.map((l) => JSON.parse(l) as { msg: string; level: number; anchor: unknown }).filter((l) => l.msg === 'audit anchor');
      expect(anchors.map((a) => a.anchor)).toEqual([
        { seq: 2, hash: records()[1]!.hash },
        { seq: 3, hash: records()[2]!.hash },
      ]);
      expect(anchors.every((a) => a.level === 30)).toBe(true);
    });

    it('a restart does not anchor what it found: only records it wrote are vouched for', async () => {
      write(2);
      const { every } = manualTimer();
      void openAuditLog({ file, maxBytes: 0, keep: 10, anchorFile: anchorFile() }, { now, every }).close();
      expect(readFileSync(anchorFile(), 'utf8')).toBe('');
    });

    it.runIf(existsSync('/dev/full'))('an anchor that cannot be written is logged at error once per period; records go on', async () => {
      const logged: string[] = [];
      const logger = createLogger({ destination: new Writable({ write: (c: Buffer, _e, cb) => (logged.push(c.toString()), cb()) }), level: 'info' });
      const log = openAuditLog({ file, maxBytes: 0, keep: 10, anchorFile: '/dev/full', anchorEvery: 2 }, { now, logger });
      for (let i = 0; i < 2; i++) log.record(read());
      await vi.waitFor(() => expect(logged.join('')).toContain('anchor not written'));
      for (let i = 0; i < 3; i++) log.record(read());
      await log.close();
      expect(records().map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
      const errors = logged
        .map((l) => JSON.parse(l) as { msg: string; level: number; seq: number; err: string })
        .filter((l) => l.msg === 'audit: anchor not written');
      expect(errors.map((e) => [e.level, e.seq])).toEqual([
        [50, 2],
        [50, 4],
        [50, 5],
      ]);
      expect(errors[0]!.err).toContain('ENOSPC');
      expect(await verifyAuditFiles([file])).toMatchObject({ records: 5 });
    });

    it('refuses to open when the anchor file cannot be opened', () => {
      expect(() => openAuditLog({ file, maxBytes: 0, keep: 10, anchorFile: path.join(tmp.path, 'no', 'such', 'dir', 'a.jsonl') })).toThrow(/ENOENT/);
    });
  });
});
