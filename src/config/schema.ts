// The configuration shape: the single zod schema, with every field's meaning and default. Pure.
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import os from 'node:os';
import { z } from 'zod';
import { deriveServerId, isServerId, SERVER_ID_PATTERN } from '../uri/server-id.js';
import { patternServer, resourcePatternProblem } from '../uri/resource-pattern.js';

const positiveInt = () => z.number().int().positive();

/** Fields every upstream accepts, whatever its transport. */
const commonServerFields = {
  /**
   * The server id: the namespace of this upstream's URIs (`<namespace>+<upstream-uri>`), matching
   * `^[a-z0-9][a-z0-9.-]{0,62}$`. Default: the server's key, lower-cased, with `_` turned into `-`.
   */
  namespace: z.string().regex(SERVER_ID_PATTERN, `must match ${SERVER_ID_PATTERN.source} ("+" and "_" are reserved)`).optional(),
  /**
   * Set to false to serve this upstream's URIs unchanged, without `<namespace>+`; a client URI that
   * does not start with another server's `<namespace>+` routes to it. At most one server may set it.
   * Default: true.
   */
  prefix: z.boolean().default(true),
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
   * initialize, on the same connection). Decided per upstream, never from a client's revision. Default: "auto".
   */
  protocol: z.enum(['2025-11-25', '2026-07-28', 'auto']).default('auto'),
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
   * Items in one downstream page, exactly: every page but the last holds this many of the items the
   * caller may see (an upstream page is split across downstream pages when needed), and there is
   * never an empty page. Also how far each upstream's walk reads ahead of the client. Default: 1000.
   */
  maxItemsPerPage: positiveInt().default(1000),
  /** Most pages walked per upstream in one list (guards servers that return cursors forever). Default: 1000. */
  maxPagesPerUpstream: positiveInt().default(1000),
  /**
   * How long one list request waits for upstreams still making their first connection, in
   * milliseconds. It then answers with the others and names the late ones in `_meta`
   * (`mcp-federate/incomplete`, reason `starting`); `list_changed` follows when they come up.
   * Default: 2000.
   */
  firstWaitMs: z.number().int().min(0).default(2000),
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
  /**
   * Most distinct URIs one principal may be subscribed to at once, across all its sessions and 2026
   * listens; one more is refused (`-32603 Too many subscriptions`, `data.retryAfterMs`), audited as
   * `error:LIMIT_EXCEEDED`. Default: 1000.
   */
  maxPerPrincipal: positiveInt().default(1000),
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
  /**
   * HTTP: most requests one principal may have in flight at once, across its sessions and
   * connections (2026 listens are bounded by `http.maxListensPerPrincipal` instead). One more gets
   * 429 with `Retry-After` and a JSON-RPC error with `data.retryAfterMs`; audited as `limited`.
   * Default: 64.
   */
  maxInFlightPerPrincipal: positiveInt().default(64),
  /**
   * HTTP: bound on the answer bytes queued for one principal that its clients have not read yet,
   * across all its responses and streams (kernel socket buffers excluded). A principal at it gets
   * 429 with `Retry-After` for new requests (backpressure); a response whose write takes it past the
   * bound is closed (its connection is not reading). Default: 64 MiB.
   */
  maxQueuedBytesPerPrincipal: positiveInt().default(64 * 1024 * 1024),
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

/** The Streamable HTTP endpoint (`serve --http`, or this block). */
export const HttpSchema = z.strictObject({
  /** Address to bind. A non-loopback address needs an `auth` block (or `--allow-unauthenticated`). Default: `127.0.0.1`. */
  host: z.string().min(1).default('127.0.0.1'),
  /** TCP port; 0 takes a free one (the bound URL is logged as `listening`). Default: 7330. */
  port: z.number().int().min(0).max(65535).default(7330),
  /** Path of the MCP endpoint. Default: `/mcp`. */
  path: z.string().regex(/^\/[A-Za-z0-9._~\/-]*$/, 'must start with "/" and hold only URL path characters').default('/mcp'),
  /** Exact origins (`https://app.example.com`) allowed besides same-host ones on loopback. Default: none. */
  allowedOrigins: z.array(z.string().min(1)).default([]),
  /** Extra `Host` values (`host:port`) accepted when bound to loopback, e.g. behind a reverse proxy. Default: none. */
  allowedHosts: z.array(z.string().min(1)).default([]),
  /** A 2025-11-25 session with no request and no open stream for this long expires, releasing its subscriptions. Default: 1800000 (30 min). */
  sessionIdleMs: positiveInt().default(30 * 60 * 1000),
  /** Most live 2025-11-25 sessions, and (separately) most open 2026-07-28 listen streams; one more gets 503. Default: 1000. */
  maxSessions: positiveInt().default(1000),
  /**
   * Most live 2025-11-25 sessions one principal may hold; one more gets 429 with `Retry-After`
   * (audited as `limited`). A refused initialize (401, 406, 415, 429) takes no session. Default: 100.
   */
  maxSessionsPerPrincipal: positiveInt().default(100),
  /** Most open 2026-07-28 listen streams one principal may hold; one more gets 429 with `Retry-After`. Default: 100. */
  maxListensPerPrincipal: positiveInt().default(100),
  /** Largest request body, in bytes; larger gets 413. Default: 4 MiB. */
  maxBodyBytes: positiveInt().default(4 * 1024 * 1024),
  /** Time to receive a request's headers (slowloris bound). Default: 10000. */
  headersTimeoutMs: positiveInt().default(10_000),
  /** Time to receive a whole request, body included. Default: 30000. */
  requestTimeoutMs: positiveInt().default(30_000),
  /** How long an idle keep-alive connection stays open. Default: 5000. */
  keepAliveTimeoutMs: positiveInt().default(5_000),
});

/** A bearer token as RFC 6750 lets it travel in `Authorization: Bearer <token>` (its `b64token`). */
export const BEARER_TOKEN_PATTERN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** Lowercase hex SHA-256 of a token's UTF-8 bytes: what `auth.tokens[].sha256` holds. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

const principalName = () => z.string().min(1, 'must not be empty');
const roleName = () => z.string().min(1, 'must not be empty');

/** One static bearer token: the principal it stands for and that principal's roles. Only its hash is kept. */
export const StaticTokenSchema = z
  .strictObject({
    /** The principal a request presenting this token acts as. Required. */
    principal: principalName(),
    /** Roles of that principal, for policy. Default: []. */
    roles: z.array(roleName()).default([]),
    /**
     * Lowercase hex SHA-256 of the token's UTF-8 bytes, as `mcp-federate token new` prints it.
     * Give this or `token`, not both. Default: none.
     */
    sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits (the SHA-256 of the token)').optional(),
    /**
     * The token itself, normally `${ENV_VAR}`: at least 16 characters of RFC 6750's token alphabet
     * (letters, digits, `-._~+/`, then `=` padding). Hashed when the config is loaded; the plain
     * token is not kept. Give this or `sha256`, not both. Default: none.
     */
    token: z
      .string()
      .min(16, 'too short: at least 16 characters')
      .regex(BEARER_TOKEN_PATTERN, 'not a bearer token: letters, digits and -._~+/ only, then "=" padding (no "Bearer " prefix)')
      .optional(),
  })
  .transform((t, ctx) => {
    if ((t.sha256 === undefined) === (t.token === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'give exactly one of "sha256" or "token"' });
      return z.NEVER;
    }
    return { principal: t.principal, roles: t.roles, sha256: t.sha256 ?? hashToken(t.token!) };
  });

/** JWS algorithms verified with a public key (`jwksUrl` or `publicKey`): the default for those. */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
/** JWS algorithms verified with a shared `secret`, with the least secret length each needs (RFC 7518 §3.2). */
export const HMAC_ALGORITHMS = { HS256: 32, HS384: 48, HS512: 64 } as const;
/** A JWS algorithm the verifier accepts in `auth.jwt.algorithms`. */
export type JwtAlgorithm = (typeof ASYMMETRIC_ALGORITHMS)[number] | keyof typeof HMAC_ALGORITHMS;

const isHmac = (alg: string): alg is keyof typeof HMAC_ALGORITHMS => Object.hasOwn(HMAC_ALGORITHMS, alg);
const isAsymmetric = (alg: string): boolean => (ASYMMETRIC_ALGORITHMS as readonly string[]).includes(alg);

/** Hosts a `jwksUrl` may be fetched from over plain http (anything else needs https). */
const PLAIN_HTTP_JWKS_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** JWT bearer tokens, verified locally against one key source. */
export const JwtSchema = z
  .strictObject({
    /**
     * URL of the issuer's JSON Web Key Set (https; plain http only for localhost). Keys are cached
     * and refetched when a token names a key id the cached set lacks. One key source is required:
     * `jwksUrl`, `publicKey` or `secret`.
     */
    jwksUrl: z
      .url({ protocol: /^https?$/, error: 'Invalid URL' })
      .refine((u) => {
        if (!URL.canParse(u)) return true; // refinements run even when the URL check failed
        const url = new URL(u);
        return url.protocol === 'https:' || PLAIN_HTTP_JWKS_HOSTS.has(url.hostname);
      }, 'must be https (plain http only for localhost, 127.0.0.1 or [::1])')
      .optional(),
    /** The issuer's public key as PEM (`-----BEGIN PUBLIC KEY-----`, SPKI). Never a private key. */
    publicKey: z.string().min(1).optional(),
    /** A shared HMAC secret (normally `${ENV_VAR}`): at least 32 bytes for HS256, 48 for HS384, 64 for HS512. */
    secret: z.string().min(1).optional(),
    /** The required `iss` claim; also the authorization server in the protected resource metadata. Default: not checked. */
    issuer: z.string().min(1).optional(),
    /** The `aud` claim a token must carry (one of these, when a list). Required. */
    audience: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
    /** Claim holding the principal; it must be a non-empty string. Default: "sub". */
    principalClaim: z.string().min(1).default('sub'),
    /**
     * Claim holding the roles: an array of strings or one space-separated string; absent means no
     * roles, anything else refuses the token. A claim name, not a path. Default: "roles".
     */
    rolesClaim: z.string().min(1).default('roles'),
    /**
     * Accepted `alg` values. Default: RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384,
     * ES512 and EdDSA with `jwksUrl` or `publicKey`; HS256 with `secret`. `none` is always refused,
     * HS* only with `secret`, the others only with a public key.
     */
    algorithms: z.array(z.string()).min(1).optional(),
  })
  .transform((j, ctx) => {
    const sources = (['jwksUrl', 'publicKey', 'secret'] as const).filter((k) => j[k] !== undefined);
    if (sources.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        message: sources.length === 0 ? 'give one key source: "jwksUrl", "publicKey" or "secret"' : `give one key source, not ${sources.map((s) => `"${s}"`).join(' and ')}`,
      });
      return z.NEVER;
    }
    const withSecret = j.secret !== undefined;
    if (j.publicKey !== undefined && !isPublicKeyPem(j.publicKey, ctx)) return z.NEVER;
    const algorithms = (j.algorithms ?? (withSecret ? ['HS256'] : [...ASYMMETRIC_ALGORITHMS])) as JwtAlgorithm[];
    let ok = true;
    algorithms.forEach((alg, i) => {
      const problem =
        alg.toLowerCase() === 'none'
          ? '"none" is refused: unsigned tokens are never accepted'
          : !isHmac(alg) && !isAsymmetric(alg)
            ? `unknown algorithm "${alg}" (expected one of ${[...Object.keys(HMAC_ALGORITHMS), ...ASYMMETRIC_ALGORITHMS].join(', ')})`
            : isHmac(alg) && !withSecret
              ? `${alg} needs a shared "secret"; with a public key anyone holding that key could sign tokens`
              : !isHmac(alg) && withSecret
                ? `${alg} needs "jwksUrl" or "publicKey", not a "secret"`
                : isHmac(alg) && Buffer.byteLength(j.secret!, 'utf8') < HMAC_ALGORITHMS[alg]
                  ? `${alg} needs a secret of at least ${HMAC_ALGORITHMS[alg]} bytes`
                  : undefined;
      if (problem !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['algorithms', i], message: problem });
        ok = false;
      }
    });
    if (!ok) return z.NEVER;
    const { algorithms: _given, ...rest } = j;
    return { ...rest, algorithms: [...new Set(algorithms)] };
  });

/** True when `pem` is a public key Node can read; otherwise reports why under `publicKey`. */
function isPublicKeyPem(pem: string, ctx: z.RefinementCtx): boolean {
  if (/PRIVATE KEY-----/.test(pem)) {
    ctx.addIssue({ code: 'custom', path: ['publicKey'], message: 'is a private key: give the public key (-----BEGIN PUBLIC KEY-----)' });
    return false;
  }
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch {
    ctx.addIssue({ code: 'custom', path: ['publicKey'], message: 'not a PEM public key (-----BEGIN PUBLIC KEY-----)' });
    return false;
  }
  return key.type === 'public';
}

/** Who may call the HTTP endpoint: static bearer tokens, JWTs, or both (either one authenticates). */
export const AuthSchema = z
  .strictObject({
    /** Static bearer tokens, each with its principal and roles. Default: []. */
    tokens: z.array(StaticTokenSchema).default([]),
    /** JWT bearer tokens. Default: none. */
    jwt: JwtSchema.optional(),
  })
  .superRefine((a, ctx) => {
    if (a.tokens.length === 0 && a.jwt === undefined) {
      ctx.addIssue({ code: 'custom', message: 'give "tokens", "jwt" or both' });
    }
    const first = new Map<string, number>();
    a.tokens.forEach((t, i) => {
      const j = first.get(t.sha256);
      if (j !== undefined) ctx.addIssue({ code: 'custom', path: ['tokens', i], message: `the same token as auth.tokens[${j}]` });
      else first.set(t.sha256, i);
    });
  });

/** The principal of the stdio session when none is configured: the OS user name, else "stdio". */
export function defaultStdioPrincipal(): string {
  try {
    const name = os.userInfo().username;
    return name === '' ? 'stdio' : name;
  } catch {
    return 'stdio'; // no passwd entry (containers with an arbitrary uid)
  }
}

/** Who the stdio session is: there is no token on stdio, so the caller comes from here. */
export const StdioCallerSchema = z.strictObject({
  /** The principal of the stdio session. Default: the OS user name (`os.userInfo()`), or "stdio" when there is none. */
  principal: principalName().default(defaultStdioPrincipal),
  /** Roles of that principal. Default: []. */
  roles: z.array(roleName()).default([]),
});

/** The tamper-evident audit log (one hash-chained JSON line per access decision). */
export const AuditSchema = z.strictObject({
  /**
   * Where records go: a file, relative to the config file's folder, appended to (created if
   * missing), or "stderr" (no rotation, and the chain starts afresh each run). Its own destination,
   * never the operational log's. Required.
   */
  file: z.string().min(1),
  /**
   * Rotate the file before a record would make it larger than this many bytes: `<file>` becomes
   * `<file>.1`, `.1` becomes `.2`, and so on (logrotate's numbering); the chain continues in the new
   * file. 0 never rotates. Default: 0.
   */
  maxBytes: z.number().int().min(0).default(0),
  /** Rotated files kept (`<file>.1` … `<file>.<keep>`); rotating past it deletes the oldest. Default: 10. */
  keep: positiveInt().max(1000).default(10),
  /**
   * The NAME of an environment variable holding the key of the keyed chain (never the key itself):
   * each record then carries `mac`, an HMAC-SHA256 over the previous record's `mac` and the record,
   * so a forged or re-sealed record fails `audit verify --key-env NAME`. The variable must be set
   * and hold at least 16 bytes at startup (else a config error naming it). Read once, at startup.
   * Default: none (plain hash chain only).
   */
  keyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name').optional(),
  /**
   * Where anchors (the chain's head: `seq`, `hash`, `mac`) go: a file, relative to the config
   * file's folder, appended one JSON line per anchor and fsynced (after the audit file itself), for
   * `audit verify --anchor <file>`. Default: none (anchors go to the operational log at info,
   * message "audit anchor").
   */
  anchorFile: z.string().min(1).optional(),
  /** Write an anchor after this many records since the last one. Default: 1000. */
  anchorEvery: positiveInt().default(1000),
  /** Write an anchor this many seconds after the last one when records were written since. Also one at shutdown. Default: 30. */
  anchorSeconds: positiveInt().max(86_400).default(30),
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
  /** The caller's credential was removed or expired while its request was in flight: a deny. */
  revoked: 'revoked',
} as const;

/** Rule ids: printable, no spaces, so `policy check` and audit records show them as they are. */
export const POLICY_RULE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

const names = (what: string) => z.array(z.string().min(1)).min(1, `must not be empty (leave "${what}" out to match any)`);

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

/** A completion limit: who it applies to, and how fast they may ask for completions. */
export const CompletionLimitSchema = z
  .strictObject({
    /** Principals this limit applies to. Default: any. */
    principals: names('principals').optional(),
    /** Roles this limit applies to; a caller with any one of them matches. Default: any. */
    roles: names('roles').optional(),
    /** Sustained `completion/complete` requests per minute allowed to one principal (across all its sessions). Required. */
    completionsPerMinute: positiveInt(),
    /** Completions one principal may ask for at once after being idle. Default: 10 seconds' worth, at least 1. */
    burst: positiveInt().optional(),
  })
  .transform((limit) => ({ ...limit, burst: limit.burst ?? Math.max(1, Math.ceil(limit.completionsPerMinute / 6)) }));

/**
 * Rate limits per principal. Written as a list, it is the read limits (`reads`). Reads caused by a
 * principal's polled subscriptions and listens count against its read limit too.
 */
const LimitsObjectSchema = z.strictObject({
  /** Read limits; the first entry that matches a caller applies, none: unlimited. Default: []. */
  reads: z.array(RateLimitSchema).default([]),
  /**
   * `completion/complete` limits, same shape with `completionsPerMinute`; the first entry that
   * matches applies, none: unlimited. Over it: `-32000 Rate limit exceeded`, `data.retryAfterMs`. Default: [].
   */
  completions: z.array(CompletionLimitSchema).default([]),
});
const ReadLimitsSchema = z.array(RateLimitSchema);
export const LimitsSchema = z.unknown().transform((value, ctx): z.output<typeof LimitsObjectSchema> => {
  const parsed = Array.isArray(value) ? ReadLimitsSchema.safeParse(value) : LimitsObjectSchema.safeParse(value);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) ctx.addIssue(issue as Parameters<typeof ctx.addIssue>[0]);
    return z.NEVER;
  }
  return Array.isArray(parsed.data) ? { reads: parsed.data, completions: [] } : (parsed.data as z.output<typeof LimitsObjectSchema>);
});

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
     * Who may list, read, subscribe to and complete which resources. Default: none (everything
     * allowed). A reload may not drop a `policy` block in force: allowing everything on purpose is
     * written `policy: { default: allow }`.
     */
    policy: PolicySchema.optional(),
    /**
     * Rate limits per principal: `{ reads, completions }`, or a list (the read limits alone). In
     * each, the first entry that matches a caller applies, none: unlimited. `false` says "no
     * limits" explicitly (the same as `[]`); a reload may only drop limits in force when the new
     * file says `limits: false` or `limits: []`. Default: none.
     */
    limits: z.preprocess((v: unknown) => (v === false ? [] : v), LimitsSchema.default({ reads: [], completions: [] })),
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
/** The `http` block after defaults. */
export type HttpConfig = z.output<typeof HttpSchema>;
/** The validated `auth` block: static tokens reduced to their hashes, JWT algorithms filled in. */
export type AuthConfig = z.output<typeof AuthSchema>;
/** One validated static token entry. */
export type StaticTokenConfig = z.output<typeof StaticTokenSchema>;
/** The validated `auth.jwt` block. */
export type JwtConfig = z.output<typeof JwtSchema>;
/** The validated `stdio` block. */
export type StdioCallerConfig = z.output<typeof StdioCallerSchema>;
/** The `audit` block after validation. */
export type AuditConfig = z.output<typeof AuditSchema>;
/** The validated `policy` block. */
export type PolicyConfig = z.output<typeof PolicySchema>;
/** One validated policy rule. */
export type PolicyRuleConfig = z.output<typeof PolicyRuleSchema>;
/** One validated read limit (`limits.reads` entry), `burst` filled in. */
export type RateLimitConfig = z.output<typeof RateLimitSchema>;
/** One validated `limits.completions` entry, `burst` filled in. */
export type CompletionLimitConfig = z.output<typeof CompletionLimitSchema>;
/** The validated `limits` block. */
export type LimitsConfig = z.output<typeof LimitsSchema>;
/** The configuration as written in a file (defaults optional). */
export type FederateConfigInput = z.input<typeof ConfigSchema>;

/** True for a remote upstream. */
export function isRemote(server: ServerConfig): server is RemoteServerConfig {
  return 'url' in server;
}

/**
 * Keys the servers by id (`namespace`, or derived from the key), folds `disabled` into `enabled` and
 * `type: "sse"` into `transport`. Undefined after reporting an id that is invalid or used twice, or
 * a second server with `prefix: false`.
 */
function normalise(block: string, servers: Record<string, ParsedServer>, ctx: z.RefinementCtx): Record<string, ServerConfig> | undefined {
  const out: Record<string, ServerConfig> = {};
  const keyOf = new Map<string, string>();
  let unprefixed: string | undefined;
  let ok = true;
  for (const [name, s] of Object.entries(servers)) {
    if (!s.prefix) {
      if (unprefixed !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [block, name, 'prefix'],
          message: `${block}.${unprefixed} already sets "prefix": false; at most one server may serve its URIs unprefixed`,
        });
        ok = false;
      }
      unprefixed ??= name;
    }
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
