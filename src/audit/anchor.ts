// Audit anchors: the chain's head (seq, hash, mac) written off the log, to an anchor file or the operational log.
import fs from 'node:fs';
import type { Logger } from '../logger.js';

/** The chain's head at one moment: the last record's `seq`, `hash`, and `mac` when the chain is keyed. */
export interface ChainHead {
  readonly seq: number;
  readonly hash: string;
  readonly mac?: string;
}

/** One line of an anchor file, as written and as `audit verify --anchor` reads it. */
export interface AuditAnchor extends ChainHead {
  /** When the anchor was written: ISO 8601, UTC; absent on anchors taken from the operational log's `anchor` field. */
  readonly time?: string;
}

/** Where anchors go. */
export interface AnchorSink {
  /** Writes one anchor, durably before it returns; throws when it could not be written. */
  write(head: ChainHead): void;
  /**
   * Writes one anchor and resolves once it is durable (the `fsync` runs off the event loop);
   * rejects when it could not be written. The caller keeps one in flight at a time and awaits it
   * before `close()`.
   */
  append(head: ChainHead): Promise<void>;
  /** True when anchors go to a file: the audit file is then fsynced before each anchor. */
  readonly durable: boolean;
  /** Closes the anchor file. Idempotent. */
  close(): void;
}

/** The one line (with its newline) an anchor is written as: keys in a fixed order, so the file is easy to diff. */
export function anchorLine(head: ChainHead, time: number): string {
  const mac = head.mac === undefined ? '' : `,"mac":"${head.mac}"`;
  return `{"seq":${head.seq},"hash":"${head.hash}"${mac},"time":"${new Date(time).toISOString()}"}\n`;
}

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * Reads one anchor line back (`seq`, `hash`, optional `mac` and `time`; other fields are ignored, so
 * the `anchor` objects of the operational log's "audit anchor" lines, one per line, read too);
 * undefined when it is not one.
 */
export function parseAnchorLine(line: string): AuditAnchor | undefined {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const { seq, hash, mac, time } = v as Record<string, unknown>;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) return undefined;
  if (typeof hash !== 'string' || !HEX64.test(hash)) return undefined;
  if (mac !== undefined && (typeof mac !== 'string' || !HEX64.test(mac))) return undefined;
  if (time !== undefined && typeof time !== 'string') return undefined;
  return { seq, hash, ...(mac === undefined ? {} : { mac }), ...(time === undefined ? {} : { time }) };
}

/**
 * Opens where anchors go: `file` (appended, created if missing, each anchor fsynced), or, without a
 * file, the operational log at info (`{ anchor: { seq, hash, mac } }`, "audit anchor"). Throws when
 * the file cannot be opened, so a gateway never starts without the anchors it was told to write.
 */
export function openAnchorSink(file: string | undefined, logger: Logger | undefined, now: () => number): AnchorSink {
  if (file === undefined) {
    const log = (head: ChainHead): void => logger?.info({ anchor: { seq: head.seq, hash: head.hash, ...(head.mac ? { mac: head.mac } : {}) } }, 'audit anchor');
    return {
      durable: false,
      write: log,
      append: (head) => (log(head), Promise.resolve()),
      close: () => undefined,
    };
  }
  let fd: number | undefined = fs.openSync(file, 'a');
  const put = (head: ChainHead): number | undefined => {
    if (fd === undefined) return undefined;
    const bytes = Buffer.from(anchorLine(head, now()), 'utf8');
    for (let off = 0; off < bytes.length;) off += fs.writeSync(fd, bytes, off, bytes.length - off);
    return fd;
  };
  return {
    durable: true,
    write(head) {
      const f = put(head);
      if (f !== undefined) fs.fsyncSync(f);
    },
    append(head) {
      try {
        const f = put(head);
        return f === undefined ? Promise.resolve() : fsyncAsync(f);
      } catch (err) {
        return Promise.reject(err);
      }
    },
    close() {
      if (fd === undefined) return;
      const f = fd;
      fd = undefined;
      fs.closeSync(f);
    },
  };
}

/** `fsync` on the thread pool, so a slow disk does not stall the event loop; EINVAL (a pipe, a terminal: nothing to sync) is success. */
export function fsyncAsync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.fsync(fd, (err) => (err && err.code !== 'EINVAL' ? reject(err) : resolve()));
  });
}
