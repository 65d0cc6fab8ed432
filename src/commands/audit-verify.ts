// `mcp-federate audit verify <file>...`: checks an audit log's chain (bytes, hashes, MACs, anchors) and prints the verdict.
import { parseArgs } from 'node:util';
import { auditKeyFromEnv } from '../audit/key.js';
import { AuditFileError, readAnchorFile, verifyAuditFiles, type VerifyOptions } from '../audit/verify.js';
import { ProxyError } from '../errors.js';

/** Where a command writes; the CLI passes stdout and stderr. */
export interface CommandOutput {
  /** The command's result. */
  out(text: string): void;
  /** Problems with the invocation or the files. */
  err(text: string): void;
}

/** The usage of the `audit` command, as printed by `--help` and after a bad invocation. */
export const AUDIT_USAGE = `Usage:
  mcp-federate audit verify [--key-env <NAME>] [--anchor <file>] [--strict] [--config <file>] <file>...
      Check the audit log's chain across the files, oldest first
      (audit.jsonl.2 audit.jsonl.1 audit.jsonl): each line must be exactly the canonical form of
      its record, and each hash chain to the one before. Prints the records verified and exits 0,
      or the first broken line (file:line: reason) and exits 1; exits 2 when a file cannot be read.
Options:
  --key-env <NAME>   check every record's MAC with the key held by environment variable NAME
                     (default: audit.keyEnv of --config)
  --anchor <file>    check the log against an anchor file: an anchored record that differs, or a
                     log that ends before the last anchor (truncated), fails; records after the
                     last anchor are reported as unanchored (default: audit.anchorFile of --config)
  --strict           also exit 1 on a warning: unanchored records, MACs not checked for want of a
                     key, records without a MAC before the keyed ones
  --config <file>    take the --key-env and --anchor defaults from this configuration's audit block
`;

/**
 * Runs `audit <argv>` (the arguments after `audit`) and resolves with the exit code: 0 when the
 * chain verifies, 1 at the first broken line (or, with `--strict`, on a warning), 2 for a bad
 * invocation, an unreadable file or anchor file, a key variable that is unset or short, or a bad
 * `--config`.
 *
 * Output on success: `verified N records`, or `verified N records (chain starts at seq S)` when the
 * first file does not start the chain (its first `prev` is taken as the anchor), then the last
 * record's `seq` and `hash` (and `mac`) for comparison with a copy kept elsewhere; then, with a key,
 * `keyed: N MACs verified ...`, with anchors, `anchors: N matched ...`, and one `warning: ...` line
 * per warning (unanchored records, unchecked MACs, leading records without a MAC).
 *
 * @example await auditCommand(['verify', 'audit.jsonl.1', 'audit.jsonl'], { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) })
 */
export async function auditCommand(argv: readonly string[], output: CommandOutput): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        'key-env': { type: 'string' },
        anchor: { type: 'string' },
        strict: { type: 'boolean' },
        config: { type: 'string', short: 'c' },
      },
    });
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

  let keyEnv = parsed.values['key-env'];
  let anchorFile = parsed.values.anchor;
  const options: VerifyOptions = {};
  let result;
  try {
    if (parsed.values.config !== undefined) {
      const { loadConfig } = await import('../config/load.js');
      const { config } = await loadConfig({ file: parsed.values.config });
      keyEnv ??= config.audit?.keyEnv;
      anchorFile ??= config.audit?.anchorFile;
    }
    if (keyEnv !== undefined) options.key = auditKeyFromEnv(keyEnv, process.env, parsed.values['key-env'] === undefined ? 'audit.keyEnv' : '--key-env');
    if (anchorFile !== undefined) {
      const { anchors, torn } = await readAnchorFile(anchorFile);
      if (torn) output.out(`warning: ${anchorFile}:${anchors.length + 1}: torn last anchor ignored (a write cut short)\n`);
      options.anchors = { file: anchorFile, anchors };
    }
    result = await verifyAuditFiles(files, options);
  } catch (err) {
    if (err instanceof AuditFileError || err instanceof ProxyError) {
      output.err(`mcp-federate: audit verify: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const { records, broken, anchored, firstSeq, last, keyed, uncheckedMacs, anchorCheck } = result;
  if (broken) {
    output.out(`${broken.file}:${broken.line}: ${broken.reason}\n`);
    output.out(`chain broken after ${records} verified record${plural(records)}\n`);
    return 1;
  }
  const start = anchored ? ` (chain starts at seq ${firstSeq})` : '';
  output.out(`verified ${records} record${plural(records)}${start}\n`);
  if (last) output.out(`last: seq ${last.seq} hash ${last.hash}${last.mac === undefined ? '' : ` mac ${last.mac}`}\n`);
  const warnings: string[] = [];
  if (keyed) {
    output.out(
      `keyed: ${keyed.checked} MAC${plural(keyed.checked)} verified with the key from ${keyEnv}${anchored ? " (the first record's MAC is taken as given)" : ''}\n`,
    );
    if (keyed.unkeyed)
      warnings.push(
        `seq ${keyed.unkeyed.from}-${keyed.unkeyed.to} carry no MAC (written before audit.keyEnv was set): only the plain chain and the first keyed record vouch for them`,
      );
  }
  if (uncheckedMacs !== undefined)
    warnings.push(`${uncheckedMacs} record${plural(uncheckedMacs)} carry a MAC that was not checked (no key given: --key-env <NAME>)`);
  if (anchorCheck) {
    const lastAnchor = anchorCheck.last ? `, the last at seq ${anchorCheck.last.seq} (${anchorFile}:${anchorCheck.last.line})` : '';
    const older = anchorCheck.before > 0 ? `; ${anchorCheck.before} name older records, not given` : '';
    output.out(`anchors: ${anchorCheck.checked} matched${lastAnchor}${older}\n`);
    const u = anchorCheck.unanchored;
    if (u) {
      const after = anchorCheck.last ? `after the last anchor (seq ${anchorCheck.last.seq})` : 'and the anchor file holds no anchor';
      warnings.push(
        `${u.from.file}:${u.from.line}: seq ${u.from.seq}-${u.to.seq} (${u.count} record${plural(u.count)}, to ${u.to.file}:${u.to.line}) come ${after}: unanchored, nothing proves they were not appended`,
      );
    }
  }
  for (const w of warnings) output.out(`warning: ${w}\n`);
  if (parsed.values.strict && warnings.length > 0) {
    output.out(`strict: failing on ${warnings.length} warning${plural(warnings.length)}\n`);
    return 1;
  }
  return 0;
}

function plural(n: number): string {
  return n === 1 ? '' : 's';
}

function usageError(reason: string, output: CommandOutput): number {
  output.err(`mcp-federate: ${reason}\n\n${AUDIT_USAGE}`);
  return 2;
}
