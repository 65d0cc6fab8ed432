// The `policy` block: the access rules, and the checks that need the configured server ids. Pure.
import { z } from 'zod';
import { patternServer, resourcePatternProblem } from '../../uri/resource-pattern.js';
import { names } from './fields.js';
import { globProblem } from '../../uri/glob.js';

/** A tool or prompt name glob that does not compile is a config error. */
function nameGlobCheck(pattern: string, ctx: z.RefinementCtx): void {
  const problem = pattern.length === 0 ? 'must not be empty' : globProblem(pattern);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(pattern)}: ${problem}` });
}

/**
 * What a policy rule can be about: listing (resources, templates, tools, prompts), reading or
 * subscribing to a resource, completing a template's or a prompt's argument, calling a tool
 * (`tools/call`), getting a prompt (`prompts/get`).
 */
export const POLICY_ACTIONS = ['list', 'read', 'subscribe', 'complete', 'call', 'get'] as const;
/** One of {@link POLICY_ACTIONS}. */
export type PolicyAction = (typeof POLICY_ACTIONS)[number];

/** Names a decision gives as its rule when no configured rule decided it; a rule may not use them as its id. */
export const POLICY_OUTCOMES = {
  /** No rule matched: the policy's `default` applied. */
  default: 'default',
  /** The URI was refused before any rule was tried (see `normalizeUri`). */
  invalidUri: 'invalid-uri',
  /** Evaluating the policy failed: a deny. */
  error: 'error',
  /** The caller's credential was removed or expired while its request was in flight: a deny. */
  revoked: 'revoked',
} as const;

/** Rule ids: printable, no spaces, so `policy check` and audit records show them as they are. */
export const POLICY_RULE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** One rule of the access policy. Every match field is optional: absent matches any. */
export const PolicyRuleSchema = z.strictObject({
  /**
   * Unique name of the rule, given with every decision it makes (audit, `policy check`). Matches
   * `^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`; `default`, `invalid-uri`, `error` and `revoked` are reserved. Required.
   */
  id: z
    .string()
    .regex(POLICY_RULE_ID_PATTERN, `must match ${POLICY_RULE_ID_PATTERN.source}`)
    .refine((id) => !Object.values(POLICY_OUTCOMES).includes(id as never), { error: (i) => `"${String(i.input)}" is reserved` }),
  /** "allow" or "deny". A deny that matches overrides every allow. Required. */
  effect: z.enum(['allow', 'deny'], { error: 'must be "allow" or "deny"' }),
  /** Principals (exact, case-sensitive) the rule is about. Default: any. */
  principals: names('principals').optional(),
  /** Roles the rule is about; a caller with any one of them matches. Default: any. */
  roles: names('roles').optional(),
  /** Server ids the rule is about; each must be configured. Default: any. */
  servers: names('servers').optional(),
  /**
   * Globs over the upstream's own URI, in canonical form (see the README, "Access policy"): `*`
   * within a segment, `**` across segments, `?` one character. One that starts with
   * `<server-id>+` matches only that server's URIs. Default: any.
   */
  resources: z
    .array(
      z.string().superRefine((pattern, ctx) => {
        const problem = resourcePatternProblem(pattern);
        if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(pattern)}: ${problem}` });
      }),
    )
    .min(1, 'must not be empty (leave "resources" out to match any)')
    .optional(),
  /**
   * Globs over tool names, each matched against the upstream's own name and the name clients see
   * (`github__create_*`); `*` and `?` as in `resources`. A rule that names `resources`, `tools`,
   * `prompts` or `annotations` is about those kinds only; one that names none is about every kind.
   * Default: any tool, when the rule names no kind.
   */
  tools: z
    .array(z.string().superRefine((pattern, ctx) => nameGlobCheck(pattern, ctx)))
    .min(1, 'must not be empty (leave "tools" out to match any)')
    .optional(),
  /** Globs over prompt names, as `tools`. Default: any prompt, when the rule names no kind. */
  prompts: z
    .array(z.string().superRefine((pattern, ctx) => nameGlobCheck(pattern, ctx)))
    .min(1, 'must not be empty (leave "prompts" out to match any)')
    .optional(),
  /**
   * Tool annotations the rule requires, e.g. `{ readOnlyHint: true }`: a tool matches when its
   * upstream declares each of them with exactly this value (an annotation left out does not match).
   * Makes the rule about tools. Default: any.
   */
  annotations: z.record(z.string(), z.union([z.boolean(), z.string(), z.number()])).optional(),
  /** Actions the rule is about, from `list`, `read`, `subscribe`, `complete`, `call`, `get`. Default: any. */
  actions: z.array(z.enum(POLICY_ACTIONS)).min(1, 'must not be empty (leave "actions" out to match any)').optional(),
  /** Free text for humans; ignored. */
  description: z.string().optional(),
});

/** The access policy. Without a `policy` block every request is allowed. */
export const PolicySchema = z
  .strictObject({
    /** The decision when no rule matches: "allow" or "deny". Default: "deny". */
    default: z.enum(['allow', 'deny']).default('deny'),
    /** The rules, each with a unique `id`. Order does not matter: any matching deny wins. Default: []. */
    rules: z.array(PolicyRuleSchema).default([]),
  })
  .superRefine((policy, ctx) => {
    const seen = new Set<string>();
    policy.rules.forEach((rule, i) => {
      if (seen.has(rule.id)) ctx.addIssue({ code: 'custom', path: ['rules', i, 'id'], message: `"${rule.id}" is the id of an earlier rule; ids must be unique` });
      seen.add(rule.id);
    });
  });

/** The validated `policy` block. */
export type PolicyConfig = z.output<typeof PolicySchema>;
/** One validated policy rule. */
export type PolicyRuleConfig = z.output<typeof PolicyRuleSchema>;

/**
 * Checks what needs the server ids: every id in a rule's `servers` is configured, and a namespaced
 * pattern (`docs+…`) names a server its rule's `servers` includes. False after reporting a problem.
 */
export function checkPolicyServers(policy: z.output<typeof PolicySchema>, ids: ReadonlySet<string>, ctx: z.RefinementCtx): boolean {
  let ok = true;
  const known = [...ids].join(', ');
  policy.rules.forEach((rule, i) => {
    rule.servers?.forEach((id, j) => {
      if (ids.has(id)) return;
      ctx.addIssue({ code: 'custom', path: ['policy', 'rules', i, 'servers', j], message: `"${id}" is not a configured server id (configured: ${known})` });
      ok = false;
    });
    rule.resources?.forEach((pattern, j) => {
      const server = patternServer(pattern, ids);
      if (server === undefined || !rule.servers || rule.servers.includes(server)) return;
      ctx.addIssue({
        code: 'custom',
        path: ['policy', 'rules', i, 'resources', j],
        message: `${JSON.stringify(pattern)} is limited to server "${server}", which this rule's "servers" leaves out, so it never matches`,
      });
      ok = false;
    });
  });
  return ok;
}
