// `mcp-federate policy check`: decides one request against the configured policy and prints the decision.
import { parseCommand, usageError, type OutputSink } from './args.js';
import { compilePolicy, POLICY_ACTIONS, type PolicyAction } from '../access/policy.js';
import { loadConfig, type LoadConfigOptions } from '../config/load.js';
import { createUriCodec } from '../federation/uri.js';

export type { OutputSink } from './args.js';

/** Usage of `mcp-federate policy`. */
export const POLICY_USAGE = `Usage:
  mcp-federate policy check [--config <file>] --principal <name> [--role <role>]... --action <action> <namespaced-uri>
      Decide one request against the configured policy and print "allow <rule>" or "deny <rule>"
      (<rule> is the deciding rule's id, "default" when no rule matched, or "invalid-uri").
      A URI template (with "{") is decided as a template listing. Exit code: 0 allowed, 1 denied,
      2 bad invocation or configuration.
Options:
  --config <file>     configuration file (default: searched as for serve)
  --principal <name>  the caller's principal (required)
  --role <role>       one of the caller's roles; repeat for several
  --action <action>   ${POLICY_ACTIONS.join('|')} (required)
`;

/** Exit codes of {@link runPolicyCommand}. */
export const PolicyExit = { ALLOWED: 0, DENIED: 1, USAGE: 2 } as const;

/**
 * Runs `mcp-federate policy <argv...>`. Returns the exit code: 0 allowed, 1 denied, 2 a bad
 * invocation (message and usage on `out.stderr`). A configuration error is thrown as the loader's
 * `ProxyError(CONFIG_INVALID)`, which the CLI turns into exit code 2.
 *
 * @example await runPolicyCommand(['check', '--principal', 'alice', '--action', 'read', 'docs+file:///a.md'], sink)
 */
export async function runPolicyCommand(argv: readonly string[], out: OutputSink, options: Omit<LoadConfigOptions, 'file'> = {}): Promise<number> {
  const usage = (reason: string) => usageError(out, POLICY_USAGE, reason);
  const parsed = parseCommand(
    argv,
    { config: { type: 'string', short: 'c' }, principal: { type: 'string' }, role: { type: 'string', multiple: true }, action: { type: 'string' } },
    POLICY_USAGE,
    out,
  );
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  const [command, uri, ...extra] = positionals;
  if (command !== 'check') return usage(`unknown command: policy ${positionals.join(' ')}`.trimEnd());
  if (uri === undefined) return usage('policy check: a namespaced URI is required');
  if (extra.length > 0) return usage(`policy check: one URI only (also got ${extra.join(' ')})`);
  if (values.principal === undefined || values.principal === '') return usage('policy check: --principal is required');
  if (values.action === undefined) return usage('policy check: --action is required');
  if (!isAction(values.action)) return usage(`policy check: --action: expected one of ${POLICY_ACTIONS.join(', ')}, got "${values.action}"`);
  const roles = values.role ?? [];
  if (roles.includes('')) return usage('policy check: --role must not be empty');

  // Principals and roles come by name: the auth block and its secrets are never read.
  const loadOptions = { ...options, withoutSecrets: true };
  const { config, filepath } = await loadConfig(values.config === undefined ? loadOptions : { ...loadOptions, file: values.config });
  const ids = new Set(Object.keys(config.servers));
  const target = createUriCodec(
    ids,
    Object.keys(config.servers).find((id) => config.servers[id]?.prefix === false),
  ).decode(uri);
  if (target === undefined) {
    return usage(`policy check: "${uri}" is not namespaced with a configured server id (<server-id>+<uri>; configured: ${[...ids].join(', ')})`);
  }
  const policy = compilePolicy(config.policy, ids);
  if (!policy.enforced) out.stderr(`mcp-federate: ${filepath} has no "policy" block: every request is allowed\n`);
  const caller = { principal: values.principal, roles };
  const decision = uri.includes('{')
    ? policy.decideTemplate(caller, values.action, target.server, target.uri)
    : policy.decide(caller, values.action, target.server, target.uri);
  out.stdout(`${decision.allow ? 'allow' : 'deny'} ${decision.rule}\n`);
  return decision.allow ? PolicyExit.ALLOWED : PolicyExit.DENIED;
}

function isAction(value: string): value is PolicyAction {
  return (POLICY_ACTIONS as readonly string[]).includes(value);
}
