// The `audit` block: the tamper-evident audit log. Pure.
import { z } from 'zod';
import { positiveInt } from './fields.js';

/** The tamper-evident audit log (one hash-chained JSON line per access decision). */
export const AuditSchema = z.strictObject({
  /**
   * Where records go: a file, relative to the config file's folder, appended to (created if
   * missing), or "stderr" (no rotation, and the chain starts afresh each run). Its own destination,
   * never the operational log's. Required.
   */
  file: z.string().min(1),
  /**
   * Rotate the file before a record would make it larger than this many bytes: `<file>` becomes
   * `<file>.1`, `.1` becomes `.2`, and so on (logrotate's numbering); the chain continues in the new
   * file. 0 never rotates. Default: 0.
   */
  maxBytes: z.number().int().min(0).default(0),
  /** Rotated files kept (`<file>.1` … `<file>.<keep>`); rotating past it deletes the oldest. Default: 10. */
  keep: positiveInt().max(1000).default(10),
  /**
   * The NAME of an environment variable holding the key of the keyed chain (never the key itself):
   * each record then carries `mac`, an HMAC-SHA256 over the previous record's `mac` and the record,
   * so a forged or re-sealed record fails `audit verify --key-env NAME`. The variable must be set
   * and hold at least 16 bytes at startup (else a config error naming it). Read once, at startup.
   * Default: none (plain hash chain only).
   */
  keyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name').optional(),
  /**
   * Where anchors (the chain's head: `seq`, `hash`, `mac`) go: a file, relative to the config
   * file's folder, appended one JSON line per anchor and fsynced (after the audit file itself), for
   * `audit verify --anchor <file>`. Default: none (anchors go to the operational log at info,
   * message "audit anchor").
   */
  anchorFile: z.string().min(1).optional(),
  /** Write an anchor after this many records since the last one. Default: 1000. */
  anchorEvery: positiveInt().default(1000),
  /** Write an anchor this many seconds after the last one when records were written since. Also one at shutdown. Default: 30. */
  anchorSeconds: positiveInt().max(86_400).default(30),
  /**
   * Record the arguments of each `tools/call` and `prompts/get` as they were sent (canonical JSON,
   * in `arguments`). Off, a record holds only their SHA-256 (`argumentsSha256`), which tells equal
   * arguments apart from different ones without keeping them. Default: false.
   */
  arguments: z.boolean().default(false),
});

/** The `audit` block after validation. */
export type AuditConfig = z.output<typeof AuditSchema>;
