// `mcp-federate audit verify <file>...`: checks an audit log's chain (bytes, hashes, MACs, anchors) and prints the verdict.
import { parseArgs } from 'node:util';
import { auditKeyFromEnv } from '../audit/key.js';
import { AuditFileError, chainOfFile, readAnchorFile, verifyAuditFiles, type VerifyOptions, type VerifyResult } from '../audit/verify.js';
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
      Files of several replicas (scale-out: their records name their chain) are grouped by chain,
      each verified through its own files in the order given; exits 1 when any chain is broken.
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
    // Several replicas' files (scale-out: one chain per replica, named in every record): each chain on its own.
    const chains = files.length > 1 ? await groupByChain(files) : undefined;
    if (chains && chains.size > 1) {
      if (anchorFile !== undefined) return usageError("audit verify: --anchor checks one chain; give one replica's files with its anchor file", output);
      return await verifyChains(chains, options, output, parsed.values.strict === true);
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

/** Files by the `chain` of their first record, each chain's files in the order given. */
async function groupByChain(files: readonly string[]): Promise<Map<string | undefined, string[]>> {
  const groups = new Map<string | undefined, string[]>();
  for (const file of files) {
    const chain = await chainOfFile(file);
    const group = groups.get(chain);
    if (group) group.push(file);
    else groups.set(chain, [file]);
  }
  return groups;
}

/**
 * Verifies each replica's chain through its own files: one line per chain (`chain r1: verified N
 * records, last seq S hash H`, or where it broke), then a total. Exits 1 when any chain is broken
 * (or, with `strict`, carries a warning), else 0.
 */
async function verifyChains(chains: Map<string | undefined, string[]>, options: VerifyOptions, output: CommandOutput, strict: boolean): Promise<number> {
  let broken = 0;
  let warned = 0;
  let total = 0;
  const results = await Promise.all([...chains].map(async ([chain, files]) => [chain, files, await verifyAuditFiles(files, options)] as const));
  for (const [chain, files, r] of results) {
    const name = chain ?? '(no chain id)';
    total += r.records;
    if (r.broken) {
      broken++;
      output.out(`chain ${name}: ${r.broken.file}:${r.broken.line}: ${r.broken.reason}\n`);
      output.out(`chain ${name}: broken after ${r.records} verified record${plural(r.records)}\n`);
      continue;
    }
    const start = r.anchored ? ` (starts at seq ${r.firstSeq})` : '';
    const last = r.last ? `, last seq ${r.last.seq} hash ${r.last.hash}` : '';
    output.out(`chain ${name}: verified ${r.records} record${plural(r.records)} in ${files.length} file${plural(files.length)}${start}${last}\n`);
    if (chainWarnings(r).length > 0) warned++;
    for (const w of chainWarnings(r)) output.out(`chain ${name}: warning: ${w}\n`);
  }
  output.out(`${chains.size} chains: ${chains.size - broken} verified, ${broken} broken, ${total} records\n`);
  if (broken > 0) return 1;
  return strict && warned > 0 ? 1 : 0;
}

/** The warnings of one chain verified without anchors. */
function chainWarnings(r: VerifyResult): string[] {
  const w: string[] = [];
  if (r.keyed?.unkeyed) w.push(`seq ${r.keyed.unkeyed.from}-${r.keyed.unkeyed.to} carry no MAC`);
  if (r.uncheckedMacs !== undefined)
    w.push(`${r.uncheckedMacs} record${plural(r.uncheckedMacs)} carry a MAC that was not checked (no key given: --key-env <NAME>)`);
  return w;
}

function plural(n: number): string {
  return n === 1 ? '' : 's';
}

function usageError(reason: string, output: CommandOutput): number {
  output.err(`mcp-federate: ${reason}\n\n${AUDIT_USAGE}`);
  return 2;
}
