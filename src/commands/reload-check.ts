// `mcp-federate reload --check <file>`: what a reload to <file> would change, and whether it would be refused.
import { loadConfig, type LoadConfigOptions } from '../config/load.js';
import { HttpSchema } from '../config/schema.js';
import { planReload } from '../config/reload-diff.js';
import { isLoopback } from '../serve/origin-host.js';
import { parseCommand, usageError, type OutputSink } from './args.js';

/** Usage of `mcp-federate reload`. */
export const RELOAD_USAGE = `Usage:
  mcp-federate reload --check [--config <file>] [--host <host>] [--allow-unauthenticated] <file>
      Compare <file> with the running configuration (--config, or the one serve would find) and
      print what a reload (SIGHUP, --watch) to <file> would change, or why it would be refused.
      Nothing is applied. Exit code: 0 the reload would apply (or change nothing), 1 it would be
      refused, 2 bad invocation or a file that does not load (its path and problem on stderr).
Options:
  --config <file>          the running configuration file (default: searched as for serve)
  --host <host>            the address serve was started with (default: the running file's http.host)
  --allow-unauthenticated  serve was started with --allow-unauthenticated
`;

/** Exit codes of {@link runReloadCommand}. */
export const ReloadExit = { APPLIES: 0, REFUSED: 1, USAGE: 2 } as const;

/**
 * Runs `mcp-federate reload <argv...>`. Returns the exit code; a configuration that does not load is
 * thrown as the loader's `ProxyError(CONFIG_INVALID)` (naming file, path and problem), which the CLI
 * turns into exit code 2.
 *
 * @example await runReloadCommand(['--check', 'next.json', '--config', 'running.json'], sink)
 */
export async function runReloadCommand(argv: readonly string[], out: OutputSink, options: Omit<LoadConfigOptions, 'file'> = {}): Promise<number> {
  const usage = (reason: string) => usageError(out, RELOAD_USAGE, reason);
  const parsed = parseCommand(
    argv,
    { check: { type: 'boolean' }, config: { type: 'string', short: 'c' }, host: { type: 'string' }, 'allow-unauthenticated': { type: 'boolean' } },
    RELOAD_USAGE,
    out,
  );
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  if (!values.check) return usage('reload: only --check is supported (a running server reloads on SIGHUP or with --watch)');
  if (positionals.length !== 1) return usage('reload --check: exactly one candidate file is required');

  const running = await loadConfig(values.config === undefined ? options : { ...options, file: values.config });
  const candidate = await loadConfig({ ...options, file: positionals[0]! });
  const host = values.host ?? (running.config.http ? HttpSchema.parse(running.config.http).host : undefined);
  const requireAuth = host !== undefined && !isLoopback(host) && !values['allow-unauthenticated'];
  const plan = planReload(running, candidate, { requireAuth });

  out.stdout(`running: ${running.filepath}\ncandidate: ${candidate.filepath}\n`);
  if (plan.refused.length > 0) {
    out.stdout(`refused (the running configuration would stay):\n${plan.refused.map((r) => `  ${r.block}: ${r.reason}\n`).join('')}`);
    return ReloadExit.REFUSED;
  }
  if (plan.changed.length === 0) {
    out.stdout('no change\n');
    return ReloadExit.APPLIES;
  }
  out.stdout(`would apply: ${plan.changed.join(', ')}\n`);
  if (plan.restartNeeded.length > 0) out.stdout(`at the next start only: ${plan.restartNeeded.join(', ')}\n`);
  return ReloadExit.APPLIES;
}
