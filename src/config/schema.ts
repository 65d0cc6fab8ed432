// The configuration shape: the single zod schema, with every field's meaning and default. Pure.
import { z } from 'zod';
import { deriveServerId, isServerId, SERVER_ID_PATTERN } from './server-id.js';
import { patternServer, resourcePatternProblem } from '../access/resource-pattern.js';

const positiveInt = () => z.number().int().positive();

/** Fields every upstream accepts, whatever its transport. */
const commonServerFields = {
  /**
   * The server id: the namespace of this upstream's URIs (`<namespace>+<upstream-uri>`), matching
   * `^[a-z0-9][a-z0-9.-]{0,62}$`. Default: the server's key, lower-cased, with `_` turned into `-`.
   */
  namespace: z.string().regex(SERVER_ID_PATTERN, `must match ${SERVER_ID_PATTERN.source} ("+" and "_" are reserved)`).optional(),
  /** Set to false to keep the entry in the file but not connect it. Default: true. */
  enabled: z.boolean().default(true),
  /** Accepted for pasted client configs: `disabled: true` is `enabled: false`. */
  disabled: z.boolean().optional(),
  /** Per-request timeout towards this upstream, in milliseconds. Default: 30000. */
  timeoutMs: positiveInt().default(30_000),
  /** Most requests in flight to this upstream at once; the rest wait in its queue. Default: 16. */
  concurrency: positiveInt().max(1024).default(16),
  /** Free text for humans; ignored. */
  description: z.string().optional(),
  /**
   * The MCP revision spoken to this upstream: "2025-11-25" (initialize handshake), "2026-07-28"
   * (no handshake; the upstream must support it), or "auto" (ask with `server/discover`, fall back to
   * initialize). Decided per upstream, never from a client's revision. Default: "2025-11-25".
   */
  protocol: z.enum(['2025-11-25', '2026-07-28', 'auto']).default('2025-11-25'),
  /** Set to false to never cache this upstream's reads. Default: true. */
  cache: z.boolean().default(true),
  /**
   * How long a finished read of this upstream may be served again from the cache, in milliseconds,
   * overriding `cache.ttlMs`; 0 never reuses one (concurrent identical reads still share one call).
   * Default: `cache.ttlMs`.
   */
  cacheTtlMs: z.number().int().min(0).optional(),
  /**
   * Largest message this upstream may send, in bytes. A larger answer fails that request at once
   * ("too large", the limit in `data`) and is discarded without reading it into memory. Default: 32 MiB.
   */
  maxResponseBytes: positiveInt().default(32 * 1024 * 1024),
};

/** An upstream spawned as a child process speaking MCP over stdio. */
export const StdioServerSchema = z.strictObject({
  /** Accepted for pasted client configs; must be "stdio" when given. */
  type: z.literal('stdio').optional(),
  /** The executable to spawn (operator config only; never taken from a client). Required. */
  command: z.string().min(1),
  /** Arguments for the executable. Default: []. */
  args: z.array(z.string()).default([]),
  /** Extra environment variables, on top of the SDK's safe default set (PATH, HOME, ...). Default: {}. */
  env: z.record(z.string(), z.string()).default({}),
  /** Working directory of the child, relative to the config file's folder. Default: the proxy's cwd. */
  cwd: z.string().min(1).optional(),
  /**
   * A dotenv file (VS Code's `envFile`), relative to the config file's folder, read when the config
   * is loaded; its variables go under `env`, and `env` wins. A missing file is an error. Default: none.
   */
  envFile: z.string().min(1).optional(),
  /** VS Code's dev-mode block (`watch`, `debug`): accepted for pasted configs and ignored. */
  dev: z.record(z.string(), z.unknown()).optional(),
  ...commonServerFields,
});

/** An upstream reached over the network. */
export const RemoteServerSchema = z.strictObject({
  /** Accepted for pasted client configs: "http" or "streamable-http" selects Streamable HTTP, "sse" the legacy transport. */
  type: z.enum(['http', 'streamable-http', 'sse']).optional(),
  /** The server's MCP endpoint (http or https). Required. */
  url: z.url({ protocol: /^https?$/, error: 'Invalid URL' }),
  /** Headers sent with every request, e.g. `Authorization: Bearer ${TOKEN}`. Default: {}. */
  headers: z.record(z.string(), z.string()).default({}),
  /** "streamable-http" or "sse". Default: Streamable HTTP, falling back to SSE when the server only speaks SSE. */
  transport: z.enum(['streamable-http', 'sse']).optional(),
  ...commonServerFields,
});

/** One upstream: stdio when it has `command`, remote when it has `url`. */
export const ServerSchema = z.unknown().transform((value, ctx): ParsedServer => {
  const schema = isObject(value) && 'url' in value && !('command' in value) ? RemoteServerSchema : StdioServerSchema;
  if (!isObject(value) || (!('url' in value) && !('command' in value))) {
    ctx.addIssue({ code: 'custom', message: 'expected "command" (stdio upstream) or "url" (remote upstream)' });
    return z.NEVER;
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) ctx.addIssue(issue as Parameters<typeof ctx.addIssue>[0]);
    return z.NEVER;
  }
  return parsed.data;
});

/** Upstreams by key as written; each key stands for a server id (see `namespace`). */
const ServersSchema = z.record(z.string(), ServerSchema);

/** Listing limits. */
export const ListSchema = z.strictObject({
  /**
   * Items in one downstream page, rounded up to whole upstream pages; also how far each upstream's
   * walk reads ahead of the client. Default: 1000.
   */
  maxItemsPerPage: positiveInt().default(1000),
  /** Most pages walked per upstream in one list (guards servers that return cursors forever). Default: 1000. */
  maxPagesPerUpstream: positiveInt().default(1000),
});

/** The shared read cache. */
export const CacheSchema = z.strictObject({
  /** Set to false to turn the read cache off for every upstream. Default: true. */
  enabled: z.boolean().default(true),
  /** Bound on the total size of cached contents (text characters + base64 blob characters). Default: 64 MiB. */
  maxBytes: positiveInt().default(64 * 1024 * 1024),
  /**
   * How long a finished read may be served again without asking its upstream, in milliseconds.
   * 0 (the default) keeps the proxy transparent: concurrent identical reads share one upstream call,
   * but every later read goes upstream, unless the upstream's own result carries a `ttlMs` hint.
   * Default: 0.
   */
  ttlMs: z.number().int().min(0).default(0),
  /** Larger results are served but not stored. Default: 1 MiB. */
  maxEntryBytes: positiveInt().default(1024 * 1024),
  /**
   * For upstreams that support `resources/subscribe`: hold an upstream subscription for up to this
   * many stored entries at once (taken before the read, released with the entry or when the read is
   * not stored), so those entries are invalidated exactly when they change rather than only when
   * their TTL runs out. 0 turns it off. Default: 1000.
   */
  coherentUris: z.number().int().min(0).default(1000),
});

/** The subscription relay. */
export const SubscriptionsSchema = z.strictObject({
  /** For upstreams without `resources/subscribe`: how often a subscribed URI is re-read to detect changes. Default: 5000. */
  pollIntervalMs: positiveInt().default(5000),
  /** Updates of one URI to one session within this window become one notification (plus the last one). Default: 50. */
  coalesceMs: z.number().int().min(0).default(50),
  /** Most URIs one session may be subscribed to at once; one more is refused (`-32603 Too many subscriptions`). Default: 10000. */
  maxPerSession: positiveInt().default(10_000),
});

/** Bounds on the JSON-RPC messages the proxy accepts and queues. */
export const WireSchema = z.strictObject({
  /** Deepest nesting of objects and arrays accepted in a message from a client or an upstream. Default: 1000. */
  maxDepth: z.number().int().min(8).max(10_000).default(1000),
  /**
   * Most requests one client may have in flight; past it the proxy stops reading that client's
   * input until half of them are answered (backpressure, nothing is refused). Default: 1000.
   */
  maxInFlight: positiveInt().default(1000),
  /** Largest message (one line on stdio) a client may send, in bytes. Default: 16 MiB. */
  maxMessageBytes: positiveInt().default(16 * 1024 * 1024),
  /**
   * Bound on one session's output that the client has not read yet, in bytes. Past it, pending
   * `resources/updated` notifications are coalesced per URI; if answers alone exceed it, the session
   * is closed with an error log. Default: 64 MiB.
   */
  maxQueuedBytes: positiveInt().default(64 * 1024 * 1024),
});

/** Reconnecting upstreams that went away. */
export const ReconnectSchema = z.strictObject({
  /** First delay before reconnecting, doubled each failed attempt (with jitter). Default: 500. */
  initialDelayMs: positiveInt().default(500),
  /** Upper bound of the delay. Default: 30000. */
  maxDelayMs: positiveInt().default(30_000),
});

/** `notifications/resources/list_changed` towards clients. */
export const ListChangedSchema = z.strictObject({
  /** Changes within this window become one notification. Default: 100. */
  coalesceMs: z.number().int().min(0).default(100),
});

/** What a policy rule can be about: listing, reading, subscribing to, or completing a resource. */
export const POLICY_ACTIONS = ['list', 'read', 'subscribe', 'complete'] as const;
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
} as const;

/** Rule ids: printable, no spaces, so `policy check` and audit records show them as they are. */
export const POLICY_RULE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

const names = (what: string) => z.array(z.string().min(1)).min(1, `must not be empty (leave "${what}" out to match any)`);

/** One rule of the access policy. Every match field is optional: absent matches any. */
export const PolicyRuleSchema = z.strictObject({
  /**
   * Unique name of the rule, given with every decision it makes (audit, `policy check`). Matches
   * `^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`; `default`, `invalid-uri` and `error` are reserved. Required.
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
  /** Actions the rule is about, from `list`, `read`, `subscribe`, `complete`. Default: any. */
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

/** One rate limit: who it applies to, and how fast they may read. */
export const RateLimitSchema = z
  .strictObject({
    /** Principals this limit applies to. Default: any. */
    principals: names('principals').optional(),
    /** Roles this limit applies to; a caller with any one of them matches. Default: any. */
    roles: names('roles').optional(),
    /** Sustained reads per minute allowed to one principal (across all its sessions). Required. */
    readsPerMinute: positiveInt(),
    /** Reads one principal may make at once after being idle. Default: 10 seconds' worth of `readsPerMinute`, at least 1. */
    burst: positiveInt().optional(),
  })
  .transform((limit) => ({ ...limit, burst: limit.burst ?? Math.max(1, Math.ceil(limit.readsPerMinute / 6)) }));

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
    list: ListSchema.default({ maxItemsPerPage: 1000, maxPagesPerUpstream: 1000 }),
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
    /** Who may list, read, subscribe to and complete which resources. Default: none (everything allowed). */
    policy: PolicySchema.optional(),
    /** Read rate limits per principal; the first entry that matches a caller applies, none: unlimited. Default: []. */
    limits: z.array(RateLimitSchema).default([]),
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
    if (c.policy && !checkPolicyServers(c.policy, new Set(Object.keys(byId)), ctx)) return z.NEVER;
    const { mcpServers: _alias, servers: _servers, ...rest } = c;
    return {
      ...rest,
      /** Upstreams by server id (their URI namespace), in config order; each keeps its key as `name`. */
      servers: byId,
    };
  });

/** What every validated upstream carries besides its own fields. */
interface ServerIdentity {
  /**
   * The server's key in the config file, as written (`Memory`, `brave_search`), for logs and `ls`.
   * Its id (URI namespace) is its key in `FederateConfig.servers`.
   */
  name: string;
}

/** One upstream as the schema reads it, before it is keyed by its id. */
type ParsedServer = z.output<typeof StdioServerSchema> | z.output<typeof RemoteServerSchema>;
/** A stdio upstream after validation. */
export type StdioServerConfig = z.output<typeof StdioServerSchema> & ServerIdentity;
/** A remote upstream after validation. */
export type RemoteServerConfig = z.output<typeof RemoteServerSchema> & ServerIdentity;
/** Any upstream after validation. */
export type ServerConfig = StdioServerConfig | RemoteServerConfig;
/**
 * The validated configuration, with defaults filled in. `servers` is keyed by server id (the URI
 * namespace, derived from each key or given as `namespace`), in config order.
 */
export type FederateConfig = z.output<typeof ConfigSchema>;
/** The validated `policy` block. */
export type PolicyConfig = z.output<typeof PolicySchema>;
/** One validated policy rule. */
export type PolicyRuleConfig = z.output<typeof PolicyRuleSchema>;
/** One validated `limits` entry, `burst` filled in. */
export type RateLimitConfig = z.output<typeof RateLimitSchema>;
/** The configuration as written in a file (defaults optional). */
export type FederateConfigInput = z.input<typeof ConfigSchema>;

/** True for a remote upstream. */
export function isRemote(server: ServerConfig): server is RemoteServerConfig {
  return 'url' in server;
}

/**
 * Keys the servers by id (`namespace`, or derived from the key), folds `disabled` into `enabled` and
 * `type: "sse"` into `transport`. Undefined after reporting an id that is invalid or used twice.
 */
function normalise(block: string, servers: Record<string, ParsedServer>, ctx: z.RefinementCtx): Record<string, ServerConfig> | undefined {
  const out: Record<string, ServerConfig> = {};
  const keyOf = new Map<string, string>();
  let ok = true;
  for (const [name, s] of Object.entries(servers)) {
    const id = s.namespace ?? deriveServerId(name);
    if (!isServerId(id)) {
      ctx.addIssue({
        code: 'custom',
        path: [block, name],
        message: `the namespace derived from this name, "${id}", does not match ${SERVER_ID_PATTERN.source}; set "namespace" to one that does`,
      });
      ok = false;
      continue;
    }
    const other = keyOf.get(id);
    if (other !== undefined) {
      ctx.addIssue({ code: 'custom', path: [], message: `${block}.${other} and ${block}.${name} both use namespace "${id}"; set "namespace" on one` });
      ok = false;
      continue;
    }
    keyOf.set(id, name);
    const { namespace: _namespace, ...fields } = s;
    const enabled = s.enabled && s.disabled !== true;
    out[id] =
      'url' in fields && fields.type === 'sse' && !fields.transport
        ? { ...fields, enabled, transport: 'sse', name }
        : { ...fields, enabled, name };
  }
  return ok ? out : undefined;
}

/**
 * Checks what needs the server ids: every id in a rule's `servers` is configured, and a namespaced
 * pattern (`docs+…`) names a server its rule's `servers` includes. False after reporting a problem.
 */
function checkPolicyServers(policy: z.output<typeof PolicySchema>, ids: ReadonlySet<string>, ctx: z.RefinementCtx): boolean {
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

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
