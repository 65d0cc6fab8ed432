// `mcp-federate policy check`: decides one request against the configured policy and prints the decision.
import { parseCommand, usageError, type OutputSink } from './args.js';
import { compilePolicy, POLICY_ACTIONS, type PolicyAction } from '../access/policy.js';
import { loadConfig, type LoadConfigOptions } from '../config/load.js';
import { createUriCodec } from '../federation/uri.js';
import { createNameCodec, NAME_DELIMITER } from '../uri/names.js';

export type { OutputSink } from './args.js';

/** Usage of `mcp-federate policy`. */
export const POLICY_USAGE = `Usage:
  mcp-federate policy check [--config <file>] --principal <name> [--role <role>]... --action <action> <namespaced-uri>
  mcp-federate policy check [--config <file>] --principal <name> [--role <role>]... --action <action> --tool|--prompt <name> [--annotation <key>=<value>]...
      Decide one request against the configured policy and print "allow <rule>" or "deny <rule>"
      (<rule> is the deciding rule's id, "default" when no rule matched, or "invalid-uri").
      A URI template (with "{") is decided as a template listing. A tool or prompt is named as
      clients see it (github__create_issue); its annotations (readOnlyHint=true) are as its
      upstream declares them. Exit code: 0 allowed, 1 denied, 2 bad invocation or configuration.
Options:
  --config <file>     configuration file (default: searched as for serve)
  --principal <name>  the caller's principal (required)
  --role <role>       one of the caller's roles; repeat for several
  --action <action>   ${POLICY_ACTIONS.join('|')} (required)
  --tool <name>       decide on this tool (call, list) instead of a URI
  --prompt <name>     decide on this prompt (get, list, complete) instead of a URI
  --annotation <k=v>  one of the tool's annotations (true, false, a number or text); repeat for several
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
    {
      config: { type: 'string', short: 'c' },
      principal: { type: 'string' },
      role: { type: 'string', multiple: true },
      action: { type: 'string' },
      tool: { type: 'string' },
      prompt: { type: 'string' },
      annotation: { type: 'string', multiple: true },
    },
    POLICY_USAGE,
    out,
  );
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  const [command, uri, ...extra] = positionals;
  if (command !== 'check') return usage(`unknown command: policy ${positionals.join(' ')}`.trimEnd());
  const item =
    values.tool !== undefined
      ? { kind: 'tool' as const, clientName: values.tool }
      : values.prompt !== undefined
        ? { kind: 'prompt' as const, clientName: values.prompt }
        : undefined;
  if (item && values.tool !== undefined && values.prompt !== undefined) return usage('policy check: give --tool or --prompt, not both');
  if (item) {
    if (uri !== undefined) return usage(`policy check: a URI and a ${item.kind} name were both given`);
    return checkItem(values, item, out, options, usage);
  }
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

/** `policy check --tool|--prompt <name>`: decides the action on one tool or prompt, named as clients see it. */
async function checkItem(
  values: {
    config?: string | undefined;
    principal?: string | undefined;
    role?: string[] | undefined;
    action?: string | undefined;
    annotation?: string[] | undefined;
  },
  item: { kind: 'tool' | 'prompt'; clientName: string },
  out: OutputSink,
  options: Omit<LoadConfigOptions, 'file'>,
  usage: (reason: string) => number,
): Promise<number> {
  if (values.principal === undefined || values.principal === '') return usage('policy check: --principal is required');
  if (values.action === undefined || !isAction(values.action))
    return usage(`policy check: --action: expected one of ${POLICY_ACTIONS.join(', ')}, got "${values.action ?? ''}"`);
  const annotations: Record<string, unknown> = {};
  for (const a of values.annotation ?? []) {
    const eq = a.indexOf('=');
    if (eq <= 0) return usage(`policy check: --annotation: expected <key>=<value>, got "${a}"`);
    const raw = a.slice(eq + 1);
    annotations[a.slice(0, eq)] = raw === 'true' ? true : raw === 'false' ? false : raw !== '' && Number.isFinite(Number(raw)) ? Number(raw) : raw;
  }
  const loadOptions = { ...options, withoutSecrets: true };
  const { config, filepath } = await loadConfig(values.config === undefined ? loadOptions : { ...loadOptions, file: values.config });
  const ids = Object.keys(config.servers);
  const names = createNameCodec(
    ids,
    ids.find((id) => config.servers[id]?.prefix === false),
    config.tools.maxNameLength,
  );
  const server = names.serverOf(item.clientName);
  if (server === undefined)
    return usage(`policy check: "${item.clientName}" does not start with a configured server's prefix (<prefix>${NAME_DELIMITER}<name>)`);
  const at = item.clientName.indexOf(NAME_DELIMITER);
  const name = server === names.unprefixed || at < 0 ? item.clientName : item.clientName.slice(at + NAME_DELIMITER.length);
  const policy = compilePolicy(config.policy, new Set(ids));
  if (!policy.enforced) out.stderr(`mcp-federate: ${filepath} has no "policy" block: every request is allowed\n`);
  const decision = policy.decideItem({ principal: values.principal, roles: values.role ?? [] }, values.action, server, { ...item, name, annotations });
  out.stdout(`${decision.allow ? 'allow' : 'deny'} ${decision.rule}\n`);
  return decision.allow ? PolicyExit.ALLOWED : PolicyExit.DENIED;
}
