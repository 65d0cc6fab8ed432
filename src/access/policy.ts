// The access policy, compiled once from config: one pure decision for every list, read, subscribe, completion, tool call and prompt get.
import type { Caller } from '../caller.js';
import { normalizeListedUri, normalizeUri, normalizeUriPrefix, type NormalizedUri } from '../uri/normalize-uri.js';
import { compileResourcePattern, withoutQuery, type ResourcePattern } from '../uri/resource-pattern.js';
import { compileGlob, type Glob } from '../uri/glob.js';
import { POLICY_ACTIONS, POLICY_OUTCOMES, type PolicyAction, type PolicyConfig, type PolicyRuleConfig } from '../config/schema.js';

export { POLICY_ACTIONS, POLICY_OUTCOMES, type PolicyAction } from '../config/schema.js';

/** What a decision looks at of the caller. */
export type PolicySubject = Pick<Caller, 'principal' | 'roles'>;

/** The kinds of thing a rule can be about. */
export type PolicyKind = 'resource' | 'tool' | 'prompt';

/** A tool or prompt as policy sees it. */
export interface PolicyItem {
  kind: 'tool' | 'prompt';
  /** The upstream's own name. */
  name: string;
  /** The name clients see (`github__create_issue`). */
  clientName: string;
  /** The tool's annotations as its upstream declared them (`readOnlyHint`, ...). */
  annotations?: Record<string, unknown> | undefined;
}

/** A decision and what made it. */
export interface PolicyDecision {
  readonly allow: boolean;
  /** The id of the deciding rule, or `default`, `invalid-uri` or `error` (see `POLICY_OUTCOMES`). */
  readonly rule: string;
}

/**
 * How a URI is taken before rules are tried. `request` (the default): as a client sent it, in the
 * form `normalizeUri` gives, and denied with `invalid-uri` when that refuses it. `issued`: a URI an
 * upstream gave out itself (listed, in a read's contents, in an update), which is forwarded as it
 * is: decided on the form `normalizeListedUri` gives, or on its exact text when that refuses it.
 * `canonical`: already the form `normalizeUri` gives (the gate resolved it at the edge): taken as it is.
 */
export type UriForm = 'request' | 'issued' | 'canonical';

/** A policy compiled from config by {@link compilePolicy}. Immutable; its decisions are pure. */
export interface Policy {
  /**
   * False when the config has no `policy` block: every decision is an allow by `default`, URIs
   * are not even checked, and the caller should log a warning at start.
   */
  readonly enforced: boolean;
  /**
   * Decides whether `caller` may perform `action` on the upstream URI `uri` of `server` (the
   * upstream's own URI, not the namespaced one). A URI refused by `normalizeUri` is denied with
   * `invalid-uri`; otherwise any matching deny rule wins; else the first matching allow rule; else
   * the policy's `default`. A failure while deciding is a deny with `error`.
   *
   * @example policy.decide({ principal: 'alice', roles: ['eng'] }, 'read', 'docs', 'file:///handbook/a.md')
   * // { allow: true, rule: 'eng-docs' }
   */
  decide(caller: PolicySubject, action: PolicyAction, server: string, uri: string, form?: UriForm): PolicyDecision;
  /**
   * Decides whether a URI template of `server` is listed: only if an allow rule can match some URI
   * it produces and no deny rule matches all of them, judged on the template's literal prefix P
   * (up to its first `{`, in canonical form). An allow rule counts when one of its globs matches
   * some string starting with P; a deny rule blocks when one of its globs matches every string
   * starting with P, as far as `Glob.matchesEveryWithPrefix` can tell (it may miss some, never
   * over-block). A pattern that ignores queries (see `ResourcePattern.wholeUri`) is asked about
   * P's path, and exactly once P has reached its query (every expansion then has that path). With
   * no rule either way, the `default` applies. This approximates what a listing shows; every read
   * of an expanded URI is still decided by {@link Policy.decide}. A template with no `{` is decided
   * as the URI it is.
   */
  decideTemplate(caller: PolicySubject, action: PolicyAction, server: string, uriTemplate: string): PolicyDecision;
  /**
   * `decide` for one caller, action and server, with the rules about them picked once: the same
   * decisions, for the many URIs of one listing.
   */
  decider(caller: PolicySubject, action: PolicyAction, server: string, form?: UriForm): (uri: string) => PolicyDecision;
  /**
   * Whether `caller` may know that `server` exists (its name in `/readyz`, in a list's `_meta`):
   * true when the policy could allow it some action on some URI of that server. For each action, a
   * deny rule about it with no `resources` (or a pattern of `**` for any server or this one) rules
   * the action out; otherwise an allow rule about it whose resources (if any) include a pattern for
   * this server or for any server counts, and so does a `default: allow`. Pure.
   *
   * @example policy.visibleServer({ principal: 'bob', roles: [] }, 'secrets') // false when no rule lets bob near it
   */
  visibleServer(caller: PolicySubject, server: string): boolean;
  /**
   * Decides whether `caller` may perform `action` (`list`, `call`, `get`, `complete`) on a tool or
   * prompt of `server`: any matching deny rule wins; else the first matching allow rule; else the
   * `default`. A rule matches when it is about the item's kind (see `tools` in the config), one of
   * its name globs matches the upstream's or the client's name, and the item has every annotation
   * it requires. A failure while deciding is a deny with `error`.
   *
   * @example policy.decideItem(caller, 'call', 'github', { kind: 'tool', name: 'create_issue', clientName: 'github__create_issue' })
   */
  decideItem(caller: PolicySubject, action: PolicyAction, server: string, item: PolicyItem): PolicyDecision;
}

interface CompiledRule {
  readonly id: string;
  readonly principals: ReadonlySet<string> | undefined;
  readonly roles: ReadonlySet<string> | undefined;
  readonly servers: ReadonlySet<string> | undefined;
  readonly actions: ReadonlySet<string> | undefined;
  readonly resources: readonly ResourcePattern[] | undefined;
  /** The kinds the rule is about (undefined: every kind). */
  readonly kinds: ReadonlySet<PolicyKind> | undefined;
  readonly tools: readonly Glob[] | undefined;
  readonly prompts: readonly Glob[] | undefined;
  readonly annotations: Readonly<Record<string, unknown>> | undefined;
}

/** The kind an action is taken on, for the actions that concern one kind only. */
const KINDS_OF: Record<PolicyAction, readonly PolicyKind[]> = {
  list: ['resource', 'tool', 'prompt'],
  read: ['resource'],
  subscribe: ['resource'],
  complete: ['resource', 'prompt'],
  call: ['tool'],
  get: ['prompt'],
};

const ALLOW_UNENFORCED: PolicyDecision = Object.freeze({ allow: true, rule: POLICY_OUTCOMES.default });
const DENY_INVALID_URI: PolicyDecision = Object.freeze({ allow: false, rule: POLICY_OUTCOMES.invalidUri });
const DENY_ERROR: PolicyDecision = Object.freeze({ allow: false, rule: POLICY_OUTCOMES.error });

/**
 * Compiles the config's `policy` block (undefined: no policy, everything allowed). `serverIds` are
 * the configured server ids, which tell a namespaced resource pattern (`docs+file:///**`) from an
 * upstream URI whose scheme has a `+` (`git+ssh://**`). Expects a validated block (see
 * `PolicySchema`); throws `GlobSyntaxError` on a glob that is not one.
 *
 * @example const policy = compilePolicy(config.policy, new Set(Object.keys(config.servers)));
 */
export function compilePolicy(config: PolicyConfig | undefined, serverIds: ReadonlySet<string>): Policy {
  if (config === undefined) {
    return {
      enforced: false,
      decide: () => ALLOW_UNENFORCED,
      decideTemplate: () => ALLOW_UNENFORCED,
      decider: () => () => ALLOW_UNENFORCED,
      visibleServer: () => true,
      decideItem: () => ALLOW_UNENFORCED,
    };
  }
  const compile = (rule: PolicyRuleConfig): CompiledRule => ({
    id: rule.id,
    principals: setOf(rule.principals),
    roles: setOf(rule.roles),
    servers: setOf(rule.servers),
    actions: setOf(rule.actions),
    resources: rule.resources?.map((pattern) => compileResourcePattern(pattern, serverIds)),
    kinds: kindsOf(rule),
    tools: rule.tools?.map((pattern) => compileGlob(pattern)),
    prompts: rule.prompts?.map((pattern) => compileGlob(pattern)),
    annotations: rule.annotations,
  });
  const denies = config.rules.filter((r) => r.effect === 'deny').map(compile);
  const allows = config.rules.filter((r) => r.effect === 'allow').map(compile);
  const fallback: PolicyDecision = Object.freeze({ allow: config.default === 'allow', rule: POLICY_OUTCOMES.default });

  /** Deny rules first (any one wins), then the first allow rule, then the default; among rules already about the request. */
  const evaluateAmong = (
    server: string,
    denying: readonly CompiledRule[],
    allowing: readonly CompiledRule[],
    denyMatches: (p: ResourcePattern) => boolean,
    allowMatches: (p: ResourcePattern) => boolean,
  ): PolicyDecision => {
    for (const rule of denying) if (resourcesMatch(rule, server, denyMatches)) return { allow: false, rule: rule.id };
    for (const rule of allowing) if (resourcesMatch(rule, server, allowMatches)) return { allow: true, rule: rule.id };
    return fallback;
  };
  const about = (caller: PolicySubject, action: PolicyAction, server: string, kind: PolicyKind = 'resource') => ({
    denying: denies.filter((rule) => isAbout(rule, caller, action, server, kind)),
    allowing: allows.filter((rule) => isAbout(rule, caller, action, server, kind)),
  });
  const evaluate = (
    caller: PolicySubject,
    action: PolicyAction,
    server: string,
    denyMatches: (p: ResourcePattern) => boolean,
    allowMatches: (p: ResourcePattern) => boolean,
  ): PolicyDecision => {
    const { denying, allowing } = about(caller, action, server);
    return evaluateAmong(server, denying, allowing, denyMatches, allowMatches);
  };

  /** Decides `uri` among rules already picked for its caller, action and server. */
  const decideAmong = (server: string, denying: readonly CompiledRule[], allowing: readonly CompiledRule[], uri: string, form: UriForm): PolicyDecision => {
    try {
      let canonical: NormalizedUri = form === 'canonical' ? { ok: true, uri } : form === 'issued' ? normalizeListedUri(uri) : normalizeUri(uri);
      if (!canonical.ok) {
        if (form !== 'issued') return DENY_INVALID_URI;
        canonical = { ok: true, uri }; // the upstream's own spelling, forwarded as it is: decided as it is
      }
      const path = withoutQuery(canonical.uri);
      const matches = (p: ResourcePattern) => p.glob.matches(p.wholeUri ? canonical.uri : path);
      return evaluateAmong(server, denying, allowing, matches, matches);
    } catch {
      return DENY_ERROR;
    }
  };

  const decide = (caller: PolicySubject, action: PolicyAction, server: string, uri: string, form: UriForm = 'request'): PolicyDecision => {
    try {
      const { denying, allowing } = about(caller, action, server);
      return decideAmong(server, denying, allowing, uri, form);
    } catch {
      return DENY_ERROR;
    }
  };

  /** True when `rule` has no `resources` or one for `server` (or any server) that `which` accepts. */
  const reaches = (rule: CompiledRule, server: string, which: (p: ResourcePattern) => boolean) =>
    !rule.resources || rule.resources.some((p) => (p.server === undefined || p.server === server) && which(p));
  /** True when `rule` covers every item of `kind` of `server` (no narrowing field for that kind). */
  const coversAll = (rule: CompiledRule, server: string, kind: PolicyKind): boolean =>
    kind === 'resource' ? reaches(rule, server, isEverything) : kind === 'tool' ? !rule.annotations && everyName(rule.tools) : everyName(rule.prompts);
  const visibleServer = (caller: PolicySubject, server: string): boolean => {
    try {
      return POLICY_ACTIONS.some((action) =>
        KINDS_OF[action].some((kind) => {
          const { denying, allowing } = about(caller, action, server, kind);
          if (denying.some((rule) => coversAll(rule, server, kind))) return false;
          return fallback.allow || allowing.some((rule) => kind !== 'resource' || reaches(rule, server, () => true));
        }),
      );
    } catch {
      return false;
    }
  };
  const decideItem = (caller: PolicySubject, action: PolicyAction, server: string, item: PolicyItem): PolicyDecision => {
    try {
      const { denying, allowing } = about(caller, action, server, item.kind);
      for (const rule of denying) if (itemMatches(rule, item)) return { allow: false, rule: rule.id };
      for (const rule of allowing) if (itemMatches(rule, item)) return { allow: true, rule: rule.id };
      return fallback;
    } catch {
      return DENY_ERROR;
    }
  };

  return {
    enforced: true,
    visibleServer,
    decideItem,
    decide,
    decider(caller, action, server, form = 'request') {
      try {
        const { denying, allowing } = about(caller, action, server);
        return (uri) => decideAmong(server, denying, allowing, uri, form);
      } catch {
        return () => DENY_ERROR;
      }
    },
    decideTemplate(caller, action, server, uriTemplate) {
      try {
        const brace = uriTemplate.indexOf('{');
        if (brace < 0) return decide(caller, action, server, uriTemplate, 'issued');
        const prefix = normalizeUriPrefix(uriTemplate.slice(0, brace));
        if (!prefix.ok) return DENY_INVALID_URI;
        const path = withoutQuery(prefix.uri);
        // Once the prefix reaches its query or fragment, every expansion has this very path.
        const pathIsFixed = path.length < prefix.uri.length;
        const every = (p: ResourcePattern) =>
          p.wholeUri ? p.glob.matchesEveryWithPrefix(prefix.uri) : pathIsFixed ? p.glob.matches(path) : p.glob.matchesEveryWithPrefix(path);
        const some = (p: ResourcePattern) =>
          p.wholeUri ? p.glob.matchesSomeWithPrefix(prefix.uri) : pathIsFixed ? p.glob.matches(path) : p.glob.matchesSomeWithPrefix(path);
        return evaluate(caller, action, server, every, some);
      } catch {
        return DENY_ERROR;
      }
    },
  };
}

/** True when name globs are absent or one of them matches every name (`**`). */
function everyName(globs: readonly Glob[] | undefined): boolean {
  return !globs || globs.some((g) => g.matchesEveryWithPrefix(''));
}

/** True for a pattern that matches every URI (`**`, optionally namespaced). */
function isEverything(pattern: ResourcePattern): boolean {
  return pattern.glob.matchesEveryWithPrefix('');
}

/** The kinds a rule names (`annotations` is about tools), or undefined when it names none: every kind. */
function kindsOf(rule: PolicyRuleConfig): ReadonlySet<PolicyKind> | undefined {
  const kinds = new Set<PolicyKind>();
  if (rule.resources) kinds.add('resource');
  if (rule.tools || rule.annotations) kinds.add('tool');
  if (rule.prompts) kinds.add('prompt');
  return kinds.size === 0 ? undefined : kinds;
}

/** True when `rule` (already about the item's kind) matches the item's names and annotations. */
function itemMatches(rule: CompiledRule, item: PolicyItem): boolean {
  const globs = item.kind === 'tool' ? rule.tools : rule.prompts;
  if (globs && !globs.some((g) => g.matches(item.name) || g.matches(item.clientName))) return false;
  if (item.kind === 'tool' && rule.annotations) {
    for (const [key, value] of Object.entries(rule.annotations)) if (item.annotations?.[key] !== value) return false;
  }
  return true;
}

/** True when every match field of `rule` other than its targets admits the request on a thing of `kind`. */
function isAbout(rule: CompiledRule, caller: PolicySubject, action: PolicyAction, server: string, kind: PolicyKind): boolean {
  if (rule.kinds && !rule.kinds.has(kind)) return false;
  if (rule.actions && !rule.actions.has(action)) return false;
  if (rule.servers && !rule.servers.has(server)) return false;
  if (rule.principals && !rule.principals.has(caller.principal)) return false;
  if (rule.roles && !caller.roles.some((role) => rule.roles!.has(role))) return false;
  return true;
}

/** True when `rule` has no `resources`, or one of them is for `server` and `matches`. */
function resourcesMatch(rule: CompiledRule, server: string, matches: (p: ResourcePattern) => boolean): boolean {
  if (!rule.resources) return true;
  return rule.resources.some((p) => (p.server === undefined || p.server === server) && matches(p));
}

function setOf(values: readonly string[] | undefined): ReadonlySet<string> | undefined {
  return values === undefined ? undefined : new Set(values);
}
