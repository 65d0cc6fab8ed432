// Checks an audit log's chain (bytes, hashes, MACs, anchors) across its files, oldest first, and names the first broken line.
import type { KeyObject } from 'node:crypto';
import { open, readFile } from 'node:fs/promises';
import { canonicalize } from './jcs.js';
import { parseAnchorLine, type AuditAnchor } from './anchor.js';
import { chainHash, chainMac, GENESIS_HASH, recordLine } from './record.js';

/** Where and why the chain broke. */
export interface ChainBreak {
  /** The file as it was given. */
  file: string;
  /** 1-based line number within `file`. */
  line: number;
  reason: string;
}

/** A line of the log, and the record's `seq` on it. */
export interface LogPosition {
  file: string;
  line: number;
  seq: number;
}

/** An anchor as read from an anchor file, with where it is. */
export interface ReadAnchor extends AuditAnchor {
  /** 1-based line number within the anchor file. */
  line: number;
}

/** What {@link verifyAuditFiles} checks beyond the plain chain. */
export interface VerifyOptions {
  /** The keyed chain's key: every record's `mac` is checked with it. */
  key?: KeyObject;
  /** Anchors (from {@link readAnchorFile}): each anchored `seq` in the files must have the anchored hash and MAC, and the log must reach the last one. */
  anchors?: { file: string; anchors: readonly ReadAnchor[] };
}

/** The outcome of {@link verifyAuditFiles}. */
export interface VerifyResult {
  /** Records that verified (all of them when `broken` is undefined; those before it otherwise). */
  records: number;
  /** `seq` of the first record; undefined when there was none. */
  firstSeq?: number;
  /**
   * True when the first record's `prev` is not the genesis hash (only later files of a rotated log
   * were given): its `prev` and `seq` were taken as given, as the anchor the rest is checked against.
   */
  anchored: boolean;
  /** `seq`, `hash` (and `mac`) of the last verified record, to compare with a copy kept elsewhere. */
  last?: { seq: number; hash: string; mac?: string };
  broken?: ChainBreak;
  /** With a key: MACs checked, and the leading records without one (written before the key was configured). */
  keyed?: { checked: number; unkeyed?: { from: number; to: number } };
  /** Without a key: how many records carry a `mac` that was not checked (absent when none). */
  uncheckedMacs?: number;
  /**
   * With anchors: how many were checked against a record, how many name a seq before the first
   * record given (older files not given: not checked), the last anchor, and the records after it
   * (`unanchored`: nothing proves they were not appended by someone else).
   */
  anchorCheck?: {
    checked: number;
    before: number;
    last?: { seq: number; line: number };
    unanchored?: { from: LogPosition; to: LogPosition; count: number };
  };
}

/** A file that could not be opened or read (not a broken chain: the CLI exits 2 for it). */
export class AuditFileError extends Error {
  override readonly name = 'AuditFileError';
  constructor(
    readonly file: string,
    cause: unknown,
  ) {
    const code = (cause as NodeJS.ErrnoException).code;
    super(`cannot read ${file} (${code ?? (cause as Error).message})`, { cause });
  }
}

/** A line longer than this is not a record of ours (records are bounded far below it). */
const MAX_LINE_BYTES = 1024 * 1024;
const HEX64 = /^[0-9a-f]{64}$/;

/**
 * Verifies the chain that runs through `files`, given oldest first (`audit.jsonl.2 audit.jsonl.1
 * audit.jsonl`): every line must be exactly the bytes the writer writes for the record it parses to
 * ({@link recordLine}: no duplicate keys, other spacing, other escapes, CR), its `hash` must be
 * `sha256(prev + JCS(record without hash and mac))`, its `prev` the previous record's `hash`, and
 * its `seq` one more than the previous one's. The first record starts the chain: `prev` all zeros
 * with `seq` 1, or any other `prev` taken as the anchor (`anchored`). A last line without its line
 * break (a torn write) is reported as broken.
 *
 * With `options.key`, each `mac` must be the HMAC of the previous record's `mac` (64 zeros after a
 * record without one) and the same JCS form; the first record's `mac` is taken as given when the
 * chain starts after genesis (later files only: the next record's MAC still binds it). Records
 * without `mac` are accepted only before the first keyed one (`keyed.unkeyed`); a log without any
 * fails. With `options.anchors`, a record at an anchored `seq` must have its hash (and MAC), and a
 * log that ends before the last anchored `seq` fails as truncated; records after the last anchor are
 * reported as `anchorCheck.unanchored`, not failed (the caller decides).
 *
 * Stops at the first broken line. All files are opened before any is read; throws
 * {@link AuditFileError} for one that cannot be opened or read, or is a directory.
 *
 * @example const { records, broken } = await verifyAuditFiles(['audit.jsonl.1', 'audit.jsonl']);
 */
export async function verifyAuditFiles(files: readonly string[], options: VerifyOptions = {}): Promise<VerifyResult> {
  const handles: Awaited<ReturnType<typeof open>>[] = [];
  try {
    for (const file of files) {
      const handle = await open(file, 'r').catch((err: unknown) => {
        throw new AuditFileError(file, err);
      });
      handles.push(handle);
      const stat = await handle.stat();
      if (stat.isDirectory()) throw new AuditFileError(file, Object.assign(new Error(), { code: 'EISDIR' }));
    }
    const chain = new ChainVerifier(options);
    for (const [i, handle] of handles.entries()) {
      const file = files[i]!;
      const broken = await verifyLines(handle, file, chain);
      if (broken) return { ...chain.result(), broken };
    }
    const broken = chain.finish(files[files.length - 1] ?? '');
    return broken ? { ...chain.result(), broken } : chain.result();
  } finally {
    await Promise.all(handles.map((h) => h.close()));
  }
}

/** Feeds each line of one file to `chain`; the first break, if any. */
async function verifyLines(handle: Awaited<ReturnType<typeof open>>, file: string, chain: ChainVerifier): Promise<ChainBreak | undefined> {
  const buffer = Buffer.alloc(64 * 1024);
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let lineNo = 0;
  for (;;) {
    let n: number;
    try {
      ({ bytesRead: n } = await handle.read(buffer, 0, buffer.length, null));
    } catch (err) {
      throw new AuditFileError(file, err);
    }
    if (n === 0) break;
    const data = buffer.subarray(0, n);
    let start = 0;
    for (let nl = data.indexOf(0x0a); nl >= 0; nl = data.indexOf(0x0a, start)) {
      lineNo += 1;
      const piece = data.subarray(start, nl);
      const tooLong = pendingBytes + piece.length > MAX_LINE_BYTES;
      const line = pendingBytes === 0 ? piece : Buffer.concat([...pending, piece]);
      pending = [];
      pendingBytes = 0;
      start = nl + 1;
      const reason = tooLong ? 'line too long to be an audit record' : chain.check(line, file, lineNo);
      if (reason !== undefined) return { file, line: lineNo, reason };
    }
    if (start < n) {
      pending.push(Buffer.from(data.subarray(start)));
      pendingBytes += n - start;
      if (pendingBytes > MAX_LINE_BYTES) return { file, line: lineNo + 1, reason: 'line too long to be an audit record' };
    }
  }
  if (pendingBytes > 0) return { file, line: lineNo + 1, reason: 'torn last line: no line break at its end (a write cut short)' };
  return undefined;
}

/** The chain's state as lines are fed to it, in order. */
class ChainVerifier {
  #records = 0;
  #firstSeq: number | undefined;
  #anchored = false;
  #last: { seq: number; hash: string; mac: string | undefined; file: string; line: number; chain: unknown } | undefined;
  readonly #key: KeyObject | undefined;
  #macsChecked = 0;
  #keyedSeen = false;
  #unkeyed: { from: number; to: number } | undefined;
  #uncheckedMacs = 0;
  readonly #anchors: { file: string; bySeq: Map<number, ReadAnchor[]>; last: ReadAnchor | undefined } | undefined;
  #anchorsChecked = 0;
  #unanchored: { from: LogPosition; to: LogPosition; count: number } | undefined;

  constructor(options: VerifyOptions) {
    this.#key = options.key;
    if (options.anchors) {
      const bySeq = new Map<number, ReadAnchor[]>();
      let last: ReadAnchor | undefined;
      for (const a of options.anchors.anchors) {
        bySeq.set(a.seq, [...(bySeq.get(a.seq) ?? []), a]);
        if (last === undefined || a.seq >= last.seq) last = a;
      }
      this.#anchors = { file: options.anchors.file, bySeq, last };
    }
  }

  /** Checks one line (its bytes, without the newline); the reason it breaks the chain, or undefined. */
  check(raw: Buffer, file: string, lineNo: number): string | undefined {
    let value: unknown;
    const line = raw.toString('utf8');
    try {
      value = JSON.parse(line);
    } catch {
      return line.trim() === '' ? 'empty line' : 'not JSON';
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
    const { hash, mac, ...rest } = value as Record<string, unknown>;
    const { prev, seq } = rest;
    if (typeof hash !== 'string' || !HEX64.test(hash)) return 'no valid "hash"';
    if (mac !== undefined && (typeof mac !== 'string' || !HEX64.test(mac))) return 'no valid "mac"';
    if (typeof prev !== 'string' || !HEX64.test(prev)) return 'no valid "prev"';
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) return 'no valid "seq"';
    let body: string;
    try {
      body = canonicalize(rest);
    } catch {
      return 'not a JSON object';
    }
    // The bytes read must be the bytes the writer writes for this record: a line JSON.parse reads
    // the same way but that is spelled otherwise (a duplicate key in front, other spacing or
    // escapes) would carry content the hash does not cover.
    if (!raw.equals(Buffer.from(recordLine(body, hash, mac), 'utf8'))) {
      return 'not the canonical form of its record (duplicate keys, other spacing or escapes): its bytes are not the ones hashed';
    }
    if (chainHash(prev, body) !== hash) return 'hash mismatch: the record was altered';
    const last = this.#last;
    if (last === undefined) {
      if (prev === GENESIS_HASH && seq !== 1) return `seq ${seq} on a record with the genesis "prev" (a chain starts at seq 1)`;
      this.#anchored = prev !== GENESIS_HASH;
      this.#firstSeq = seq;
    } else {
      if (prev !== last.hash) return `"prev" is not the hash of the record before it (${last.file}:${last.line}): a record was deleted, inserted or moved`;
      if (seq !== last.seq + 1) return `seq ${seq} does not follow seq ${last.seq}`;
      if (rest.chain !== undefined && last.chain !== undefined && rest.chain !== last.chain)
        return `chain ${JSON.stringify(rest.chain)} follows chain ${JSON.stringify(last.chain)}: a record of another replica's chain`;
    }
    const key = this.#key;
    if (key) {
      if (mac === undefined) {
        if (this.#keyedSeen) return 'no "mac" after keyed records: written without the key, or its MAC was stripped';
        this.#unkeyed = { from: this.#unkeyed?.from ?? seq, to: seq };
      } else {
        // The MAC before the first keyed record is 64 zeros; a chain given from a later file has no
        // MAC before its first record, which is then taken as given (the next MAC binds its hash).
        const prevMac = last === undefined ? (prev === GENESIS_HASH ? GENESIS_HASH : undefined) : (last.mac ?? GENESIS_HASH);
        if (prevMac !== undefined) {
          if (chainMac(key, prevMac, body) !== mac) return 'MAC mismatch: the record was forged or re-sealed, or the key is wrong';
          this.#macsChecked += 1;
        }
        this.#keyedSeen = true;
      }
    } else if (mac !== undefined) {
      this.#uncheckedMacs += 1;
    }
    const anchors = this.#anchors;
    if (anchors) {
      for (const a of anchors.bySeq.get(seq) ?? []) {
        if (a.hash !== hash || (a.mac !== undefined && a.mac !== mac)) {
          return `seq ${seq} is not the record anchored at ${anchors.file}:${a.line}: it was changed and the chain after it re-sealed, or the anchor is of another chain`;
        }
        this.#anchorsChecked += 1;
      }
      if (anchors.last === undefined || seq > anchors.last.seq) {
        const at = { file, line: lineNo, seq };
        this.#unanchored = { from: this.#unanchored?.from ?? at, to: at, count: (this.#unanchored?.count ?? 0) + 1 };
      }
    }
    this.#records += 1;
    this.#last = { seq, hash, mac, file, line: lineNo, chain: rest.chain };
    return undefined;
  }

  /** After the last line of `lastFile`: the break that only the whole log shows (truncation, no MAC at all), or undefined. */
  finish(lastFile: string): ChainBreak | undefined {
    const last = this.#last;
    if (this.#key && last !== undefined && !this.#keyedSeen) {
      return { file: last.file, line: last.line, reason: 'no record carries a "mac": the log was written without audit.keyEnv, or its MACs were stripped' };
    }
    const anchor = this.#anchors?.last;
    if (anchor !== undefined && (last === undefined || last.seq < anchor.seq)) {
      const where = last === undefined ? { file: lastFile, line: 1 } : { file: last.file, line: last.line };
      const ends = last === undefined ? 'the log holds no record' : `the log ends at seq ${last.seq}`;
      return {
        ...where,
        reason: `${ends}, before seq ${anchor.seq} anchored at ${this.#anchors!.file}:${anchor.line}: records after this line were cut off (truncated)`,
      };
    }
    return undefined;
  }

  result(): VerifyResult {
    const result: VerifyResult = { records: this.#records, anchored: this.#anchored };
    if (this.#firstSeq !== undefined) result.firstSeq = this.#firstSeq;
    if (this.#last) result.last = { seq: this.#last.seq, hash: this.#last.hash, ...(this.#last.mac === undefined ? {} : { mac: this.#last.mac }) };
    if (this.#key) result.keyed = { checked: this.#macsChecked, ...(this.#unkeyed ? { unkeyed: this.#unkeyed } : {}) };
    if (this.#uncheckedMacs > 0) result.uncheckedMacs = this.#uncheckedMacs;
    const anchors = this.#anchors;
    if (anchors) {
      let before = 0;
      const first = this.#firstSeq ?? Number.POSITIVE_INFINITY;
      for (const list of anchors.bySeq.values()) for (const a of list) if (a.seq < first) before += 1;
      result.anchorCheck = {
        checked: this.#anchorsChecked,
        before,
        ...(anchors.last ? { last: { seq: anchors.last.seq, line: anchors.last.line } } : {}),
        ...(this.#unanchored ? { unanchored: this.#unanchored } : {}),
      };
    }
    return result;
  }
}

/**
 * Reads an anchor file (one JSON line per anchor, as the writer appends them). A last line without
 * its line break (a write cut short) is left out and reported as `torn`. Throws
 * {@link AuditFileError} when the file cannot be read or a complete line is not an anchor.
 */
export async function readAnchorFile(file: string): Promise<{ anchors: ReadAnchor[]; torn: boolean }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new AuditFileError(file, err);
  }
  const lines = text.split('\n');
  const tail = lines.pop()!;
  const anchors: ReadAnchor[] = [];
  for (const [i, line] of lines.entries()) {
    const anchor = parseAnchorLine(line);
    if (anchor === undefined) throw new AuditFileError(file, new Error(`line ${i + 1} is not an anchor`));
    anchors.push({ ...anchor, line: i + 1 });
  }
  return { anchors, torn: tail !== '' };
}

/**
 * The `chain` (replica id) of the first record of `file`; undefined when it has none (a single
 * gateway's log), is empty, or does not start with a record (the verifier says why).
 */
export async function chainOfFile(file: string): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (err) {
    throw new AuditFileError(file, err);
  }
  try {
    const buffer = Buffer.alloc(64 * 1024);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const text = buffer.subarray(0, bytesRead).toString('utf8');
    const first = text.slice(0, !text.includes('\n') ? text.length : text.indexOf('\n'));
    const chain = (JSON.parse(first) as { chain?: unknown }).chain;
    return typeof chain === 'string' ? chain : undefined;
  } catch (err) {
    if (err instanceof SyntaxError) return undefined;
    throw new AuditFileError(file, err);
  } finally {
    await handle.close();
  }
}
