// The `servers` block: each upstream, stdio or remote, and how the servers are keyed by id. Pure.
import { z } from 'zod';
import { deriveServerId, isServerId, SERVER_ID_PATTERN } from '../../uri/server-id.js';
import { Revisions } from '../../protocol.js';
import { positiveInt } from './fields.js';

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
  protocol: z.enum([Revisions.legacy, Revisions.modern, 'auto']).default('auto'),
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
  /** Whether the gateway is unready (`/readyz` 503, `ls` exit 1) while this upstream is not ready. Default: true. */
  required: z.boolean().default(true),
  /**
   * After this many milliseconds without a message from the upstream, it is pinged; 0 never pings.
   * Default: 30000.
   */
  pingIntervalMs: z.number().int().min(0).default(30_000),
  /**
   * Consecutive pings that go unanswered (each waits at most `timeoutMs` and at most `pingIntervalMs / pingFailures`) before the upstream is
   * taken for dead: its requests in flight fail and it is recycled (a stdio child restarted, a new
   * HTTP session opened). Default: 2.
   */
  pingFailures: positiveInt().default(2),
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
  /**
   * The Streamable HTTP client: "lean" (node:http with keep-alive sockets, answers parsed as they
   * arrive; about a tenth of the CPU per request) or "sdk" (the SDK's fetch-based transport, which
   * also follows same-origin redirects, decodes compressed bodies and resumes broken POST streams).
   * The legacy SSE transport always uses the SDK's. Default: "lean".
   */
  httpClient: z.enum(['lean', 'sdk']).default('lean'),
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
export const ServersSchema = z.record(z.string(), ServerSchema);

/** What every validated upstream carries besides its own fields. */
export interface ServerIdentity {
  /**
   * The server's key in the config file, as written (`Memory`, `brave_search`), for logs and `ls`.
   * Its id (URI namespace) is its key in `FederateConfig.servers`.
   */
  name: string;
}

/** One upstream as the schema reads it, before it is keyed by its id. */
export type ParsedServer = z.output<typeof StdioServerSchema> | z.output<typeof RemoteServerSchema>;
/** A stdio upstream after validation. */
export type StdioServerConfig = z.output<typeof StdioServerSchema> & ServerIdentity;
/** A remote upstream after validation. */
export type RemoteServerConfig = z.output<typeof RemoteServerSchema> & ServerIdentity;
/** Any upstream after validation. */
export type ServerConfig = StdioServerConfig | RemoteServerConfig;

/** True for a remote upstream. */
export function isRemote(server: ServerConfig): server is RemoteServerConfig {
  return 'url' in server;
}

/**
 * Keys the servers by id (`namespace`, or derived from the key), folds `disabled` into `enabled` and
 * `type: "sse"` into `transport`. Undefined after reporting an id that is invalid or used twice, or
 * a second server with `prefix: false`.
 */
export function normalise(block: string, servers: Record<string, ParsedServer>, ctx: z.RefinementCtx): Record<string, ServerConfig> | undefined {
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

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
