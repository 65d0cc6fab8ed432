// A subcommand's arguments: parsed with node:util's parseArgs, `--help` printed, a bad invocation answered with its reason and the usage (exit 2).
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Where a command writes; the CLI passes process.stdout and process.stderr. */
export interface OutputSink {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** The exit code of a bad invocation. */
export const USAGE_EXIT = 2;

type Options = NonNullable<ParseArgsConfig['options']>;
type Parsed<O extends Options> = ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: O }>>;

/** One reason line and the usage on stderr; returns {@link USAGE_EXIT}. */
export function usageError(out: OutputSink, usage: string, reason: string): number {
  out.stderr(`mcp-federate: ${reason}\n\n${usage}`);
  return USAGE_EXIT;
}

/**
 * Parses `argv` against `options` (plus `--help`/`-h`). Returns the parsed values and positionals,
 * or the exit code when the command is already answered: 0 after printing `usage` for `--help`,
 * {@link USAGE_EXIT} after a bad invocation.
 *
 * @example const args = parseCommand(argv, { config: { type: 'string' } }, USAGE, out); if (typeof args === 'number') return args;
 */
export function parseCommand<O extends Options>(argv: readonly string[], options: O, usage: string, out: OutputSink): Parsed<O> | number {
  let parsed: Parsed<O>;
  try {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- parseArgs cannot infer Parsed<O> from a generic O
    parsed = parseArgs({ args: [...argv], allowPositionals: true, options: { ...options, help: { type: 'boolean', short: 'h' } } }) as Parsed<O>;
  } catch (err) {
    return usageError(out, usage, (err as Error).message);
  }
  if ((parsed.values as { help?: boolean }).help) {
    out.stdout(usage);
    return 0;
  }
  return parsed;
}
