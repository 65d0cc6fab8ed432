// The audit log's writer: records sealed into the (optionally keyed) chain, appended synchronously, rotated, anchored.
import type { KeyObject } from 'node:crypto';
import fs from 'node:fs';
import { ErrorCodes, ProxyError } from '../errors.js';
import type { AuditConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';
import { fsyncAsync, openAnchorSink, type AnchorSink } from './anchor.js';
import { auditKeyFromEnv } from './key.js';
import { GENESIS_HASH, sealRecord, type AuditEntry } from './record.js';

export type { AuditCacheUse, AuditDecision, AuditEntry, AuditOutcome, AuditRecord } from './record.js';

/**
 * Where access decisions are recorded. `record` returns once the record's line has been handed to
 * the operating system (a synchronous `write`), so a response sent after it is never missing from
 * the log, even if the process is killed (`SIGKILL`) right after. It throws when the record could
 * not be written: the caller must then not send the response as if it had been audited.
 */
export interface AuditLog extends AsyncDisposable {
  /** Appends one record. Throws `ProxyError(CLOSED)` after `close()`, or the write's own error. */
  record(entry: AuditEntry): void;
  /**
   * Seals one record into the chain at once and appends it with the others sealed in the same
   * turn, in one `write` (a microtask after the first). Resolves once that write has been handed
   * to the operating system, and rejects with its error: await it before answering, and the
   * guarantee of {@link AuditLog.record} holds at a fraction of the cost under load.
   */
  recordBatched(entry: AuditEntry): Promise<void>;
  /** False once the log cannot take records (closed, torn, or its last write failed); for readiness. Absent: always writable. */
  readonly writable?: boolean;
  /**
   * Flushes the file to disk (`fsync`), writes the shutdown anchor, and closes it. Idempotent. Returns
   * a promise when an anchor was still being written (await it before exiting).
   */
  close(): void | Promise<void>;
  /** Same as `close()`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** The `audit` block as {@link openAuditLog} takes it: the anchor cadence may be left to its defaults (1000 records, 30 s). */
export type AuditLogConfig = Omit<AuditConfig, 'anchorEvery' | 'anchorSeconds' | 'arguments'> &
  Partial<Pick<AuditConfig, 'anchorEvery' | 'anchorSeconds' | 'arguments'>>;

/** Options of {@link openAuditLog} beside the config block. */
export interface AuditLogOptions {
  /** The clock, in epoch milliseconds (tests). Default: `Date.now`. */
  now?: () => number;
  /** Told about a torn last line removed at open; receives anchors when there is no `anchorFile`. Default: none. */
  logger?: Logger;
  /** Where `config.keyEnv` is looked up. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /**
   * Calls `fn` every `ms` milliseconds until the returned function is called (the `anchorSeconds`
   * timer; tests pass their own). Default: an unref'd `setInterval`.
   */
  every?: (fn: () => void, ms: number) => () => void;
  /** Scaled out: this replica's id (`redis.chain`), written as `chain` in every record. Default: none (no `chain` field). */
  chain?: string;
}

/** The audit log of an unconfigured `audit`: records nothing. */
export const noopAuditLog: AuditLog = Object.freeze({
  record: () => undefined,
  recordBatched: () => Promise.resolve(),
  close: () => undefined,
  [Symbol.asyncDispose]: async () => undefined,
});

/**
 * Opens the audit log `config` describes ({@link noopAuditLog} when it is undefined), continuing the
 * hash chain of the file (or of `<file>.1` when the file is empty or missing): the last line is read
 * from the end of the file. With `config.keyEnv`, records also carry the keyed chain's `mac`,
 * continuing from the last record's `mac` (from 64 zeros when it has none: a plain log whose key was
 * just configured); a missing or short key is a `ProxyError(CONFIG_INVALID)` naming the variable.
 * The head (`seq`, `hash`, `mac`) is anchored every `anchorEvery` records, every `anchorSeconds`
 * when records were written since, and at `close()`, to `config.anchorFile` or the logger. A torn
 * last line (a write cut short by a crash: it never completed, so its response was never sent) is
 * removed first, with a warning. `config.file` must already be
 * resolved (the config loader does it). Throws when the last complete line is not an audit record,
 * so a chain is never silently restarted.
 *
 * @example
 * await using audit = openAuditLog({ file: '/var/log/mcp-federate/audit.jsonl', maxBytes: 100 << 20, keep: 10 });
 * audit.record({ caller, method: 'resources/read', uri, decision: 'allow', rule: 'default', outcome: 'ok', durationMs: 1.2 });
 */
export function openAuditLog(config: AuditLogConfig | undefined, options: AuditLogOptions = {}): AuditLog {
  if (config === undefined) return noopAuditLog;
  const now = options.now ?? Date.now;
  const key = config.keyEnv === undefined ? undefined : auditKeyFromEnv(config.keyEnv, options.env ?? process.env, 'audit.keyEnv');
  let state: ChainState;
  let file: { path: string; maxBytes: number; keep: number } | undefined;
  if (config.file === 'stderr') {
    state = { fd: 2, size: 0, seq: 0, prev: GENESIS_HASH, mac: undefined };
  } else {
    const { maxBytes, keep } = config;
    let last = readLastRecord(config.file, options.logger);
    last ??= readLastRecord(`${config.file}.1`, options.logger, { readOnly: true });
    const fd = fs.openSync(config.file, 'a');
    state = { fd, size: fs.fstatSync(fd).size, seq: last?.seq ?? 0, prev: last?.hash ?? GENESIS_HASH, mac: last?.mac };
    file = { path: config.file, maxBytes, keep };
  }
  let sink: AnchorSink;
  try {
    sink = openAnchorSink(config.anchorFile, options.logger, now);
  } catch (err) {
    if (state.fd !== 2) fs.closeSync(state.fd);
    throw err;
  }
  const anchors = { sink, every: config.anchorEvery ?? 1000, seconds: config.anchorSeconds ?? 30, timer: options.every ?? everyUnref, logger: options.logger };
  return new ChainWriter(state, now, key, anchors, file, options.chain);
}

/** The default anchor timer: an interval that does not keep the process alive. */
function everyUnref(fn: () => void, ms: number): () => void {
  const t = setInterval(fn, ms);
  t.unref();
  return () => clearInterval(t);
}

/** What the writer anchors with. */
interface Anchoring {
  sink: AnchorSink;
  every: number;
  seconds: number;
  timer: (fn: () => void, ms: number) => () => void;
  logger: Logger | undefined;
}

/** Bytes read per step when looking for the last line from the end of a file. */
const TAIL_CHUNK = 16 * 1024;
/** A last line longer than this is not one of ours (records are bounded far below it). */
const MAX_TAIL = 1024 * 1024;
/** How long a write to a full pipe (`stderr`) is retried before it counts as failed. */
const EAGAIN_LIMIT_MS = 10_000;

interface ChainState {
  fd: number;
  /** Bytes in the current file. */
  size: number;
  seq: number;
  prev: string;
  /** The last record's `mac`; undefined when it has none (or there is none). */
  mac: string | undefined;
}

/** Appends sealed records to one file descriptor; with a path, rotates it by size. */
class ChainWriter implements AuditLog {
  #state: ChainState;
  #closed = false;
  /** Set when a write failed part-way: appending after a torn line would break the chain. */
  #failure: unknown;
  /** True while the last write failed (cleared by the next that succeeds). */
  #lastFailed = false;
  /** Records sealed but not written yet (one batch), with the chain position before the first. */
  /** Lines of the batch, encoded once, together, when it is written. */
  #pending: string[] = [];
  #pendingBytes = 0;
  #before: { seq: number; prev: string; mac: string | undefined } | undefined;
  /** `seq` of the last anchored head (at open: where the file ended, which this run does not vouch for). */
  #anchoredSeq: number;
  #stopTimer: () => void;
  /** The anchor being made durable (file anchors run their fsyncs off the event loop), one at a time. */
  #anchoring: Promise<void> | undefined;
  #closing: Promise<void> | undefined;
  #batch: { promise: Promise<void>; resolve: () => void; reject: (err: unknown) => void } | undefined;

  constructor(
    state: ChainState,
    private readonly now: () => number,
    private readonly key: KeyObject | undefined,
    private readonly anchors: Anchoring,
    private readonly file?: { path: string; maxBytes: number; keep: number },
    private readonly chain?: string,
  ) {
    this.#state = state;
    this.#anchoredSeq = state.seq;
    this.#stopTimer = anchors.timer(() => this.#anchorTick(), anchors.seconds * 1000);
  }

  /** Seals `entry` as the record after the chain's current head. */
  #seal(entry: AuditEntry): ReturnType<typeof sealRecord> {
    const state = this.#state;
    const keyed = this.key === undefined ? undefined : { key: this.key, prevMac: state.mac ?? GENESIS_HASH };
    return sealRecord(entry, { seq: state.seq + 1, prev: state.prev, time: this.now(), keyed, chain: this.chain });
  }

  get writable(): boolean {
    return !this.#closed && this.#failure === undefined && !this.#lastFailed;
  }

  recordBatched(entry: AuditEntry): Promise<void> {
    if (this.#closed) return Promise.reject(new ProxyError(ErrorCodes.CLOSED, 'audit log closed'));
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a caught value (from fs), passed on unchanged
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    const state = this.#state;
    const { record, line } = this.#seal(entry);
    const size = Buffer.byteLength(line, 'utf8');
    if (this.file && this.file.maxBytes > 0 && state.size + this.#pendingBytes + size > this.file.maxBytes) {
      // Rotation stays on the one-record path, after what is pending went out in order.
      try {
        this.#flush();
        this.record(entry);
        return Promise.resolve();
      } catch (err) {
        return Promise.reject(err);
      }
    }
    if (!this.#batch) {
      let resolve!: () => void;
      let reject!: (err: unknown) => void;
      const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
      promise.catch(() => undefined); // each caller observes it
      this.#batch = { promise, resolve, reject };
      this.#before = { seq: state.seq, prev: state.prev, mac: state.mac };
      queueMicrotask(() => this.#flush());
    }
    this.#pending.push(line);
    this.#pendingBytes += size;
    state.seq = record.seq; // the next record chains from this one, written or pending
    state.prev = record.hash;
    state.mac = record.mac;
    return this.#batch.promise;
  }

  /** Writes the pending batch in one `write`; on failure the chain goes back to before it (or, torn, refuses from now on). */
  #flush(): void {
    const batch = this.#batch;
    if (!batch) return;
    const bytes = Buffer.from(this.#pending.length === 1 ? this.#pending[0]! : this.#pending.join(''), 'utf8');
    const before = this.#before!;
    this.#batch = undefined;
    this.#before = undefined;
    this.#pending = [];
    this.#pendingBytes = 0;
    const { written, error } = writeAll(this.#state.fd, bytes);
    this.#lastFailed = error !== undefined;
    if (error !== undefined) {
      if (written > 0) this.#failure = error;
      this.#state.seq = before.seq;
      this.#state.prev = before.prev;
      this.#state.mac = before.mac;
      this.#state.size += written;
      batch.reject(error);
      return;
    }
    this.#state.size += bytes.length;
    batch.resolve();
    if (this.#state.seq - this.#anchoredSeq >= this.anchors.every) this.#anchor();
  }

  record(entry: AuditEntry): void {
    if (this.#closed) throw new ProxyError(ErrorCodes.CLOSED, 'audit log closed');
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- a caught value (from fs), passed on unchanged
    if (this.#failure !== undefined) throw this.#failure;
    this.#flush(); // anything batched goes first, in chain order
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition, @typescript-eslint/only-throw-error -- #flush() may have set #failure, a caught value
    if (this.#failure !== undefined) throw this.#failure;
    const state = this.#state;
    const { record, line } = this.#seal(entry);
    const bytes = Buffer.from(line, 'utf8');
    if (this.file && this.file.maxBytes > 0 && state.size > 0 && state.size + bytes.length > this.file.maxBytes) this.#rotate();
    const { written, error } = writeAll(state.fd, bytes);
    this.#lastFailed = error !== undefined;
    if (error !== undefined) {
      // Nothing written: the chain is intact and the next record may try again. Part of a line
      // written: anything appended after it would be glued to it, so the log refuses from now on.
      if (written > 0) this.#failure = error;
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- a caught value (from fs), passed on unchanged
      throw error;
    }
    state.size += bytes.length;
    state.seq = record.seq;
    state.prev = record.hash;
    state.mac = record.mac;
    if (state.seq - this.#anchoredSeq >= this.anchors.every) this.#anchor();
  }

  /** The `anchorSeconds` timer: anchors the head when records were written since the last anchor. */
  #anchorTick(): void {
    if (this.#closed || this.#failure !== undefined) return;
    this.#flush(); // normally empty: a batch is written a microtask after its first record
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- #flush() may have set #failure
    if (this.#failure === undefined && this.#state.seq !== this.#anchoredSeq) this.#anchor();
  }

  /**
   * Anchors the written head. To the logger: at once. To an anchor file: the audit file is fsynced
   * first, then the anchor is appended and fsynced, both fsyncs on the thread pool (a slow disk would
   * otherwise stall every request for its duration), so an anchor never names a record a crash could
   * still lose. One anchor is in flight at a time: while it is, the next one waits for a later record
   * or tick. A failure is logged at error, not thrown (the records are written, and answered); the
   * next anchor is due `anchorEvery` records or `anchorSeconds` later, as after a written one, so a
   * full disk costs one attempt and one log line per period, not per record.
   */
  #anchor(): void {
    if (this.#anchoring) return;
    const { seq, prev, mac, fd } = this.#state;
    const head = mac === undefined ? { seq, hash: prev } : { seq, hash: prev, mac };
    this.#anchoredSeq = seq;
    const { sink, logger } = this.anchors;
    const failed = (err: unknown) => logger?.error({ err: String(err), seq }, 'audit: anchor not written');
    if (!sink.durable) {
      try {
        sink.write(head);
      } catch (err) {
        failed(err);
      }
      return;
    }
    this.#anchoring = (fd === 2 ? Promise.resolve() : fsyncAsync(fd))
      .then(() => sink.append(head))
      .catch(failed)
      .finally(() => (this.#anchoring = undefined));
  }

  /** The shutdown anchor, synchronous: the audit file was just fsynced, so it vouches only for records on disk. */
  #finalAnchor(): void {
    const { seq, prev, mac } = this.#state;
    if (this.#failure !== undefined || seq === this.#anchoredSeq) return;
    this.#anchoredSeq = seq;
    try {
      this.anchors.sink.write(mac === undefined ? { seq, hash: prev } : { seq, hash: prev, mac });
    } catch (err) {
      this.anchors.logger?.error({ err: String(err), seq }, 'audit: anchor not written');
    }
  }

  /**
   * logrotate's numbering: `.keep-1` → `.keep` (replacing it), …, `.1` → `.2`, the file → `.1`, then
   * a fresh file. The current descriptor stays valid until the new one is open, so a failed rename
   * or open leaves the log writable and the chain in order (the record that asked is refused; the
   * next one tries again).
   */
  #rotate(): void {
    const { path, keep } = this.file!;
    for (let n = keep - 1; n >= 1; n--) renameIfExists(`${path}.${n}`, `${path}.${n + 1}`);
    // Already gone when an earlier rotation renamed it but could not open the new file: the records
    // since then went on in the renamed file, which stays the newest one in order, so just go on.
    renameIfExists(path, `${path}.1`);
    const fd = fs.openSync(path, 'a');
    const old = this.#state.fd;
    this.#state.fd = fd;
    this.#state.size = 0;
    // An anchor's fsync may still be running on the old descriptor: close it only after that.
    if (this.#anchoring) void this.#anchoring.then(() => closeQuietly(old));
    else fs.closeSync(old);
  }

  /**
   * Flushes, fsyncs, writes the shutdown anchor and closes. Synchronous unless an anchor is still
   * in flight, in which case the returned promise settles once it has and the rest is done.
   */
  close(): void | Promise<void> {
    if (this.#closing) return this.#closing;
    if (this.#closed) return;
    this.#flush();
    this.#closed = true;
    this.#stopTimer();
    const anchoring = this.#anchoring;
    if (anchoring) {
      this.#closing = anchoring.then(() => this.#finish());
      return this.#closing;
    }
    this.#finish();
  }

  #finish(): void {
    const { fd } = this.#state;
    try {
      if (fd !== 2) syncFile(fd);
      this.#finalAnchor();
    } finally {
      this.anchors.sink.close();
      if (fd !== 2) fs.closeSync(fd);
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** The chain position a file ends at. */
interface ChainEnd {
  seq: number;
  hash: string;
  mac?: string;
}

/**
 * The `seq` and `hash` of the last complete line of `file`, reading backwards from its end;
 * undefined when the file is missing or holds no complete line. A torn tail (bytes after the last
 * newline) is cut off, unless `readOnly` (a rotated file is never written to), where it is ignored.
 */
function readLastRecord(file: string, logger: Logger | undefined, opts: { readOnly?: boolean } = {}): ChainEnd | undefined {
  let fd: number;
  try {
    // Only a regular file holds a chain to continue (opening a FIFO to read it would block).
    if (!fs.statSync(file).isFile()) return undefined;
    fd = fs.openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let tail: { line: Buffer | undefined; end: number; size: number };
  try {
    tail = lastLine(fd);
  } finally {
    fs.closeSync(fd);
  }
  if (tail.end < tail.size) {
    logger?.warn(
      { file, offset: tail.end, bytes: tail.size - tail.end },
      'audit: ignoring a torn last line (a write cut short by a crash; its response was never sent)',
    );
    if (!opts.readOnly) fs.truncateSync(file, tail.end);
  }
  if (tail.line === undefined) return undefined;
  const end = parseChainEnd(tail.line.toString('utf8'));
  if (end === undefined) {
    throw new Error(
      `audit log ${file}: its last line is not an audit record, so its hash chain cannot be continued (run \`mcp-federate audit verify\`; move the file aside to start a new chain)`,
    );
  }
  return end;
}

/** The last newline-terminated line of an open file (without its newline) and the offset just after it. */
function lastLine(fd: number): { line: Buffer | undefined; end: number; size: number } {
  const size = fs.fstatSync(fd).size;
  let tail = Buffer.alloc(0);
  let pos = size;
  while (pos > 0 && tail.length <= MAX_TAIL) {
    const n = Math.min(TAIL_CHUNK, pos);
    pos -= n;
    const chunk = Buffer.alloc(n);
    for (let got = 0; got < n;) {
      const r = fs.readSync(fd, chunk, got, n - got, pos + got);
      if (r === 0) throw new Error('audit log changed while it was being opened');
      got += r;
    }
    tail = Buffer.concat([chunk, tail]);
    const nl = tail.lastIndexOf(0x0a);
    if (nl < 0) continue;
    const before = nl === 0 ? -1 : tail.lastIndexOf(0x0a, nl - 1);
    if (before >= 0 || pos === 0) return { line: tail.subarray(before + 1, nl), end: pos + nl + 1, size };
  }
  if (pos === 0) return { line: undefined, end: 0, size }; // no newline at all: only a torn line, or nothing
  throw new Error(`audit log: no line break in its last ${MAX_TAIL} bytes, so it is not an audit log`);
}

function parseChainEnd(line: string): ChainEnd | undefined {
  try {
    const r = JSON.parse(line) as { seq?: unknown; hash?: unknown; mac?: unknown };
    if (Number.isSafeInteger(r.seq) && (r.seq as number) > 0 && typeof r.hash === 'string' && /^[0-9a-f]{64}$/.test(r.hash)) {
      if (typeof r.mac === 'string' && /^[0-9a-f]{64}$/.test(r.mac)) return { seq: r.seq as number, hash: r.hash, mac: r.mac };
      return { seq: r.seq as number, hash: r.hash };
    }
  } catch {
    // not JSON: reported by the caller
  }
  return undefined;
}

/** Writes all of `bytes` at the end of `fd`: how many were written, and the error that stopped it short. */
function writeAll(fd: number, bytes: Buffer): { written: number; error?: unknown } {
  let written = 0;
  let waitedMs = 0;
  while (written < bytes.length) {
    try {
      written += fs.writeSync(fd, bytes, written, bytes.length - written);
    } catch (err) {
      // A non-blocking pipe (stderr) that is full: wait for its reader, as pino's sync mode does.
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN' && waitedMs < EAGAIN_LIMIT_MS) {
        Atomics.wait(PAUSE, 0, 0, 1);
        waitedMs += 1;
        continue;
      }
      return { written, error: err };
    }
  }
  return { written };
}

/** Closes a descriptor whose errors nobody is left to hear (an old audit file after a rotation). */
function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // already closed or invalid: nothing was pending on it
  }
}

/** fsync, where there is something to sync (EINVAL: a pipe or a terminal, as `stderr` may be). */
function syncFile(fd: number): void {
  try {
    fs.fsyncSync(fd);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EINVAL') throw err;
  }
}

const PAUSE = new Int32Array(new SharedArrayBuffer(4));

function renameIfExists(from: string, to: string): void {
  try {
    fs.renameSync(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
