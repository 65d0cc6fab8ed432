// `mcp-federate audit verify <file>...`: checks an audit log's hash chain and prints the verdict.
import { parseArgs } from 'node:util';
import { AuditFileError, verifyAuditFiles } from '../access/audit-verify.js';

/** Where a command writes; the CLI passes stdout and stderr. */
export interface CommandOutput {
  /** The command's result. */
  out(text: string): void;
  /** Problems with the invocation or the files. */
  err(text: string): void;
}

/** The usage of the `audit` command, as printed by `--help` and after a bad invocation. */
export const AUDIT_USAGE = `Usage:
  mcp-federate audit verify <file>...
      Check the audit log's hash chain across the files, oldest first
      (audit.jsonl.2 audit.jsonl.1 audit.jsonl). Prints the records verified and exits 0,
      or the first broken line (file:line: reason) and exits 1; exits 2 when a file cannot be read.
`;

/**
 * Runs `audit <argv>` (the arguments after `audit`) and resolves with the exit code: 0 when the
 * chain verifies, 1 at the first broken line, 2 for a bad invocation or an unreadable file.
 *
 * Output on success: `verified N records`, or `verified N records (chain starts at seq S)` when the
 * first file does not start the chain (its first `prev` is taken as the anchor), then the last
 * record's `seq` and `hash` for comparison with a copy kept elsewhere.
 *
 * @example await auditCommand(['verify', 'audit.jsonl.1', 'audit.jsonl'], { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) })
 */
export async function auditCommand(argv: readonly string[], output: CommandOutput): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } });
  } catch (err) {
    return usageError((err as Error).message, output);
  }
  if (parsed.values.help) {
    output.out(AUDIT_USAGE);
    return 0;
  }
  const [sub, ...files] = parsed.positionals;
  if (sub !== 'verify') return usageError(sub === undefined ? 'audit: expected a subcommand' : `audit: unknown subcommand: ${sub}`, output);
  if (files.length === 0) return usageError('audit verify: expected at least one file', output);

  let result;
  try {
    result = await verifyAuditFiles(files);
  } catch (err) {
    if (!(err instanceof AuditFileError)) throw err;
    output.err(`mcp-federate: audit verify: ${err.message}\n`);
    return 2;
  }
  const { records, broken, anchored, firstSeq, last } = result;
  if (broken) {
    output.out(`${broken.file}:${broken.line}: ${broken.reason}\n`);
    output.out(`chain broken after ${records} verified record${records === 1 ? '' : 's'}\n`);
    return 1;
  }
  const start = anchored ? ` (chain starts at seq ${firstSeq})` : '';
  output.out(`verified ${records} record${records === 1 ? '' : 's'}${start}\n`);
  if (last) output.out(`last: seq ${last.seq} hash ${last.hash}\n`);
  return 0;
}

function usageError(reason: string, output: CommandOutput): number {
  output.err(`mcp-federate: ${reason}\n\n${AUDIT_USAGE}`);
  return 2;
}
