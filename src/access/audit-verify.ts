// Checks an audit log's hash chain across its files, oldest first, and names the first broken line.
import { open } from 'node:fs/promises';
import { canonicalize } from './jcs.js';
import { chainHash, GENESIS_HASH } from './audit-record.js';

/** Where and why the chain broke. */
export interface ChainBreak {
  /** The file as it was given. */
  file: string;
  /** 1-based line number within `file`. */
  line: number;
  reason: string;
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
  /** `seq` and `hash` of the last verified record, to compare with a copy kept elsewhere. */
  last?: { seq: number; hash: string };
  broken?: ChainBreak;
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
 * audit.jsonl`): every line must be a record whose `hash` is `sha256(prev + JCS(record without
 * hash))`, whose `prev` is the previous record's `hash`, and whose `seq` is one more than the
 * previous one's. The first record starts the chain: `prev` all zeros with `seq` 1, or any other
 * `prev` taken as the anchor (`anchored`). A last line without its line break (a torn write) is
 * reported as broken. Stops at the first broken line. All files are opened before any is read;
 * throws {@link AuditFileError} for one that cannot be opened or read, or is a directory.
 *
 * @example const { records, broken } = await verifyAuditFiles(['audit.jsonl.1', 'audit.jsonl']);
 */
export async function verifyAuditFiles(files: readonly string[]): Promise<VerifyResult> {
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
    const chain = new ChainVerifier();
    for (const [i, handle] of handles.entries()) {
      const file = files[i]!;
      const broken = await verifyLines(handle, file, chain);
      if (broken) return { ...chain.result(), broken };
    }
    return chain.result();
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
      const line = pendingBytes === 0 ? piece.toString('utf8') : Buffer.concat([...pending, piece]).toString('utf8');
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
  #last: { seq: number; hash: string; where: string } | undefined;

  /** Checks one line; the reason it breaks the chain, or undefined. */
  check(line: string, file: string, lineNo: number): string | undefined {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return line.trim() === '' ? 'empty line' : 'not JSON';
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
    const { hash, ...rest } = value as Record<string, unknown>;
    const { prev, seq } = rest;
    if (typeof hash !== 'string' || !HEX64.test(hash)) return 'no valid "hash"';
    if (typeof prev !== 'string' || !HEX64.test(prev)) return 'no valid "prev"';
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) return 'no valid "seq"';
    if (chainHash(prev, canonicalize(rest)) !== hash) return 'hash mismatch: the record was altered';
    const last = this.#last;
    if (last === undefined) {
      if (prev === GENESIS_HASH && seq !== 1) return `seq ${seq} on a record with the genesis "prev" (a chain starts at seq 1)`;
      this.#anchored = prev !== GENESIS_HASH;
      this.#firstSeq = seq;
    } else {
      if (prev !== last.hash) return `"prev" is not the hash of the record before it (${last.where}): a record was deleted, inserted or moved`;
      if (seq !== last.seq + 1) return `seq ${seq} does not follow seq ${last.seq}`;
    }
    this.#records += 1;
    this.#last = { seq, hash, where: `${file}:${lineNo}` };
    return undefined;
  }

  result(): VerifyResult {
    const result: VerifyResult = { records: this.#records, anchored: this.#anchored };
    if (this.#firstSeq !== undefined) result.firstSeq = this.#firstSeq;
    if (this.#last) result.last = { seq: this.#last.seq, hash: this.#last.hash };
    return result;
  }
}
