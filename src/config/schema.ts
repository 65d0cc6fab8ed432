// The configuration shape: the single zod schema, with every field's meaning and default, assembled from its blocks (`schema/`). Pure.
import { z } from 'zod';
import { normalise, ServersSchema } from './schema/servers.js';
import { ListSchema, CacheSchema, SubscriptionsSchema, WireSchema, ReconnectSchema, ListChangedSchema } from './schema/core.js';
import { HttpSchema } from './schema/http.js';
import { AuthSchema, StdioCallerSchema } from './schema/auth.js';
import { AuditSchema } from './schema/audit.js';
import { checkPolicyServers, PolicySchema } from './schema/policy.js';
import { LimitsSchema } from './schema/limits.js';
import { TimeoutsSchema, ToolsSchema } from './schema/tools.js';
import { prefixCollisions } from '../uri/names.js';
import { BridgeSchema } from './schema/bridge.js';
import { MetricsSchema } from './schema/observe.js';
import { RedisSchema } from './schema/redis.js';

export {
  StdioServerSchema,
  RemoteServerSchema,
  ServerSchema,
  isRemote,
  type StdioServerConfig,
  type RemoteServerConfig,
  type ServerConfig,
} from './schema/servers.js';
export { ListSchema, CacheSchema, SubscriptionsSchema, WireSchema, ReconnectSchema, ListChangedSchema } from './schema/core.js';
export { HttpSchema, type HttpConfig } from './schema/http.js';
export {
  BEARER_TOKEN_PATTERN,
  hashToken,
  StaticTokenSchema,
  ASYMMETRIC_ALGORITHMS,
  HMAC_ALGORITHMS,
  type JwtAlgorithm,
  JwtSchema,
  AuthSchema,
  defaultStdioPrincipal,
  StdioCallerSchema,
  type AuthConfig,
  type StaticTokenConfig,
  type JwtConfig,
  type StdioCallerConfig,
} from './schema/auth.js';
export { AuditSchema, type AuditConfig } from './schema/audit.js';
export {
  POLICY_ACTIONS,
  type PolicyAction,
  POLICY_OUTCOMES,
  POLICY_RULE_ID_PATTERN,
  PolicyRuleSchema,
  PolicySchema,
  type PolicyConfig,
  type PolicyRuleConfig,
} from './schema/policy.js';
export {
  RateLimitSchema,
  CompletionLimitSchema,
  CallLimitSchema,
  LimitsSchema,
  type RateLimitConfig,
  type CompletionLimitConfig,
  type CallLimitConfig,
  type LimitsConfig,
} from './schema/limits.js';
export { ToolsSchema, TimeoutsSchema, type ToolsConfig, type TimeoutsConfig } from './schema/tools.js';
export { BridgeSchema, type BridgeConfig } from './schema/bridge.js';
export { MetricsSchema, type MetricsConfig } from './schema/observe.js';
export { RedisSchema, type RedisConfig } from './schema/redis.js';

/** `false` written for a block means the block is off: validated as if it were left out (a reload tells the two apart). */
const offAsAbsent = <T>(v: T | false | undefined): T | undefined => (v === false ? undefined : v);

/** The whole configuration file. */
export const ConfigSchema = z
  .strictObject({
    /**
     * Upstreams by name, in the order their lists are merged. A name is any string (`Memory`,
     * `brave_search`); it stands for the server id `namespace`, by default derived from it.
     */
    servers: ServersSchema.optional(),
    /** Alias of `servers`, so an existing client's `mcpServers` block pastes in. */
    mcpServers: ServersSchema.optional(),
    /** Listing limits. Default: see {@link ListSchema}. */
    list: ListSchema.default({ maxItemsPerPage: 1000, maxPagesPerUpstream: 1000, firstWaitMs: 2000 }),
    /** Read cache. Default: see {@link CacheSchema}. */
    cache: CacheSchema.default(CacheSchema.parse({})),
    /** Subscription relay. Default: see {@link SubscriptionsSchema}. */
    subscriptions: SubscriptionsSchema.default(SubscriptionsSchema.parse({})),
    /** Message bounds. Default: see {@link WireSchema}. */
    wire: WireSchema.default(WireSchema.parse({})),
    /** Upstream reconnects. Default: see {@link ReconnectSchema}. */
    reconnect: ReconnectSchema.default(ReconnectSchema.parse({})),
    /** list_changed relay. Default: see {@link ListChangedSchema}. */
    listChanged: ListChangedSchema.default(ListChangedSchema.parse({})),
    /** Streamable HTTP endpoint; when present, `serve` serves HTTP instead of stdio. Default: absent. */
    http: HttpSchema.optional(),
    /**
     * Authentication of HTTP callers. `false` says "no authentication" explicitly: the same as
     * leaving the block out, except that a reload may only drop an `auth` block in force when the
     * new file says `auth: false` (see docs/security/reload.md). Default: none (see {@link AuthSchema}).
     */
    auth: z.preprocess(offAsAbsent<z.input<typeof AuthSchema>>, AuthSchema.optional()),
    /** The caller of the stdio session. Default: the OS user name with no roles (see {@link StdioCallerSchema}). */
    stdio: StdioCallerSchema.default(() => StdioCallerSchema.parse({})),
    /**
     * The audit log. `false` says "no audit log" explicitly: the same as leaving the block out,
     * except that a reload may only drop an `audit` block in force when the new file says
     * `audit: false`. Default: none (nothing is recorded).
     */
    audit: z.preprocess(offAsAbsent<z.input<typeof AuditSchema>>, AuditSchema.optional()),
    /**
     * Who may list, read, subscribe to and complete which resources, call which tools and get which prompts. Default: none (everything
     * allowed). A reload may not drop a `policy` block in force: allowing everything on purpose is
     * written `policy: { default: allow }`.
     */
    policy: PolicySchema.optional(),
    /**
     * Rate limits per principal: `{ reads, completions, calls }`, or a list (the read limits alone). In
     * each, the first entry that matches a caller applies, none: unlimited. `false` says "no
     * limits" explicitly (the same as `[]`); a reload may only drop limits in force when the new
     * file says `limits: false` or `limits: []`. Default: none.
     */
    limits: z.preprocess((v: unknown) => (v === false ? [] : v), LimitsSchema.default({ reads: [], completions: [], calls: [] })),
    /** Federated tools and prompts: their client names. Default: see {@link ToolsSchema}. */
    tools: ToolsSchema.default(ToolsSchema.parse({})),
    /** Tool call and prompt get timeouts. Default: see {@link TimeoutsSchema}. */
    timeouts: TimeoutsSchema.default(TimeoutsSchema.parse({})),
    /** Bounds on requests an upstream makes back to the user, bridged across eras. Default: see {@link BridgeSchema}. */
    bridge: BridgeSchema.default(BridgeSchema.parse({})),
    /** Prometheus metrics and the `/metrics` endpoint. `false` turns metrics off. Default: on (see {@link MetricsSchema}). */
    metrics: z.preprocess(
      (v: unknown) => (v === false ? { enabled: false } : v),
      MetricsSchema.default(() => MetricsSchema.parse({})),
    ),
    /** One info line per request (method, server, outcome, duration, principal, session; never contents or tokens). Default: true. */
    accessLog: z.boolean().default(true),
    /**
     * Scale-out: replicas sharing rate limits, change events and reloads through Redis (see
     * docs/scale-out.md). Default: none (one process, nothing shared, nothing of Redis loaded).
     */
    redis: RedisSchema.optional(),
  })
  .transform((c, ctx) => {
    if (c.servers && c.mcpServers) {
      ctx.addIssue({ code: 'custom', path: ['mcpServers'], message: 'give either "servers" or "mcpServers", not both' });
      return z.NEVER;
    }
    const block = c.servers ? 'servers' : 'mcpServers';
    const servers = c.servers ?? c.mcpServers;
    if (!servers || Object.keys(servers).length === 0) {
      ctx.addIssue({ code: 'custom', path: ['servers'], message: 'at least one server is required' });
      return z.NEVER;
    }
    const byId = normalise(block, servers, ctx);
    if (!byId) return z.NEVER;
    for (const [a, b] of prefixCollisions(Object.keys(byId), c.tools.maxNameLength)) {
      ctx.addIssue({
        code: 'custom',
        path: [block],
        message: `server ids "${a}" and "${b}" give tool names the same prefix ("." is "-" there); set "namespace" on one`,
      });
    }
    if (prefixCollisions(Object.keys(byId), c.tools.maxNameLength).length > 0) return z.NEVER;
    if (c.policy && !checkPolicyServers(c.policy, new Set(Object.keys(byId)), ctx)) return z.NEVER;
    const { mcpServers: _alias, servers: _servers, ...rest } = c;
    return {
      ...rest,
      /** Upstreams by server id (their URI namespace), in config order; each keeps its key as `name`. */
      servers: byId,
    };
  });

/**
 * The validated configuration, with defaults filled in. `servers` is keyed by server id (the URI
 * namespace, derived from each key or given as `namespace`), in config order.
 */
export type FederateConfig = z.output<typeof ConfigSchema>;
/** The configuration as written in a file (defaults optional). */
export type FederateConfigInput = z.input<typeof ConfigSchema>;
