// `mcp-federate token new`: a fresh random bearer token, and the config entry that holds only its hash.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { StaticTokenSchema, hashToken } from '../config/schema.js';

/** The usage text of the `token` command. */
export const TOKEN_USAGE = `Usage:
  mcp-federate token new --principal <name> [--role <role>]...
      Print a new random bearer token (32 random bytes, base64url) on one line and, on the next,
      the "auth.tokens" entry for it, which holds only the token's SHA-256.
`;

/** Where a command writes: `out` for its result, `err` for problems; one line per call, no newline. */
export interface CommandIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

/**
 * Runs `token <argv...>`. Returns the exit code: 0 after printing, 2 (with the problem and the
 * usage on `err`) for a bad invocation: no `new`, a missing or empty `--principal`, an empty
 * `--role`, an unknown flag or a stray argument. `random` is the byte source (tests).
 *
 * @example
 * const lines: string[] = [];
 * runTokenCommand(['new', '--principal', 'alice', '--role', 'eng'], { out: (l) => lines.push(l), err: (l) => lines.push(l) });
 * // 7wB...Q (the token)
 * // {"principal":"alice","roles":["eng"],"sha256":"5f1..."}
 */
export function runTokenCommand(argv: readonly string[], io: CommandIo, random: (size: number) => Buffer = randomBytes): number {
  const usage = (problem: string): number => {
    io.err(`mcp-federate: token: ${problem}`);
    io.err('');
    for (const line of TOKEN_USAGE.trimEnd().split('\n')) io.err(line);
    return 2;
  };
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: { principal: { type: 'string' }, role: { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (err) {
    return usage((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    for (const line of TOKEN_USAGE.trimEnd().split('\n')) io.out(line);
    return 0;
  }
  if (positionals[0] !== 'new') return usage(positionals.length === 0 ? 'missing subcommand "new"' : `unknown subcommand "${positionals[0]}"`);
  if (positionals.length > 1) return usage(`unexpected argument "${positionals[1]}"`);
  if (values.principal === undefined) return usage('--principal <name> is required');
  const token = random(32).toString('base64url');
  const entry = StaticTokenSchema.safeParse({ principal: values.principal, roles: values.role ?? [], sha256: hashToken(token) });
  if (!entry.success) {
    const issue = entry.error.issues[0]!;
    return usage(`${issue.path[0] === 'roles' ? '--role' : '--principal'}: ${issue.message}`);
  }
  io.out(token);
  io.out(JSON.stringify(entry.data));
  return 0;
}
