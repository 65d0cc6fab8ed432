// What a reload would change, and whether it would weaken security without saying so (then it is refused). Pure.
import type { FederateConfig, ServerConfig } from './schema.js';

/** One side of a reload: a validated configuration and the top-level keys its file writes out. */
export interface ReloadSide {
  config: FederateConfig;
  /** Our top-level keys the file writes (see `LoadedConfig.written`); absent keys are "left out". */
  written: readonly string[];
}

/** Facts about the running process a reload cannot change. */
export interface ReloadContext {
  /**
   * True when an HTTP endpoint is bound to a non-loopback address and `--allow-unauthenticated` was
   * not given: a configuration without `auth` is then refused, however it is written. Default: false.
   */
  requireAuth?: boolean;
}

/** A block whose loss would weaken security. */
export type GuardedBlock = 'policy' | 'auth' | 'audit' | 'limits';

/** Why a reload is refused: the block, and what to write to mean it. */
export interface ReloadRefusal {
  block: GuardedBlock;
  reason: string;
}

/** How the upstreams change: each enabled server id in exactly one list, in config order. */
export interface ServerChanges {
  /** Enabled in the new file only: started. */
  added: string[];
  /** Enabled in the running configuration only: closed. */
  removed: string[];
  /** Enabled in both with a different entry: closed and started again. */
  restarted: string[];
  /** Enabled in both with the same entry: not touched. */
  unchanged: string[];
}

/** What a reload would do. */
export interface ReloadPlan {
  /**
   * What changes, for the log: top-level blocks (`policy`, `auth`, `limits`, …) and one entry per
   * touched server (`servers.docs(restarted)`, `servers.mem(added)`, `servers.old(removed)`).
   * Empty when the new file means the same as the running one.
   */
  changed: string[];
  /** Non-empty: the reload is refused and the running configuration stays. */
  refused: ReloadRefusal[];
  /** The upstream changes a reload applies. */
  servers: ServerChanges;
  /**
   * Blocks that differ but take effect only at the next start (`http`, `wire`, `cache`, `list`,
   * `subscriptions`, `reconnect`, `listChanged`, `stdio`, `audit`): the reload goes ahead without them.
   */
  restartNeeded: string[];
}

/** Blocks a reload applies in place (besides `servers`). */
const APPLIED = new Set(['policy', 'limits', 'auth']);

/**
 * Compares the running configuration with a candidate. A candidate is refused when it would weaken
 * security without spelling it out:
 * - it leaves out the `policy` block in force (allowing everything on purpose is `policy: { default: allow }`);
 * - it leaves out the `auth` block in force (`auth: false` says so), or has no `auth` at all while
 *   `context.requireAuth` (a non-loopback bind without `--allow-unauthenticated`);
 * - it leaves out the `audit` block in force (`audit: false` says so);
 * - it leaves out the `limits` in force (`limits: false` or `limits: []` says so).
 *
 * @example
 * planReload(running, { config: withoutPolicy, written: ['servers'] }, {}).refused
 * // [{ block: 'policy', reason: 'the file leaves out the "policy" block in force ...' }]
 */
export function planReload(running: ReloadSide, candidate: ReloadSide, context: ReloadContext = {}): ReloadPlan {
  const before = running.config;
  const after = candidate.config;
  const says = (key: string) => candidate.written.includes(key);
  const refused: ReloadRefusal[] = [];

  if (before.policy !== undefined && after.policy === undefined) {
    refused.push({
      block: 'policy',
      reason: 'the file leaves out the "policy" block in force, which would allow every caller everything; write policy: { default: allow } to mean that',
    });
  }
  if (after.auth === undefined && context.requireAuth) {
    refused.push({
      block: 'auth',
      reason:
        'the HTTP endpoint is bound to a non-loopback address and the file has no "auth" block: anonymous callers would be served (restart with --allow-unauthenticated to mean that)',
    });
  } else if (before.auth !== undefined && after.auth === undefined && !says('auth')) {
    refused.push({ block: 'auth', reason: 'the file leaves out the "auth" block in force; write auth: false to serve every caller as "anonymous"' });
  }
  if (before.audit !== undefined && after.audit === undefined && !says('audit')) {
    refused.push({ block: 'audit', reason: 'the file leaves out the "audit" block in force; write audit: false to stop auditing' });
  }
  if (limitsInForce(before) && !limitsInForce(after) && !says('limits')) {
    refused.push({ block: 'limits', reason: 'the file leaves out the "limits" in force; write limits: false to remove every rate limit' });
  }

  const servers = diffServers(before.servers, after.servers);
  const changed: string[] = [];
  const restartNeeded: string[] = [];
  const blocks = new Set([...Object.keys(before), ...Object.keys(after)]);
  blocks.delete('servers');
  for (const block of [...blocks].sort()) {
    if (stableJson((before as Record<string, unknown>)[block]) === stableJson((after as Record<string, unknown>)[block])) continue;
    changed.push(block);
    if (!APPLIED.has(block)) restartNeeded.push(block);
  }
  for (const id of servers.added) changed.push(`servers.${id}(added)`);
  for (const id of servers.removed) changed.push(`servers.${id}(removed)`);
  for (const id of servers.restarted) changed.push(`servers.${id}(restarted)`);
  return { changed, refused, servers, restartNeeded };
}

/**
 * Splits the enabled servers of two configurations into added, removed, restarted and unchanged.
 * An entry is unchanged when every field (after defaults) is equal, whatever the key order.
 */
export function diffServers(before: Readonly<Record<string, ServerConfig>>, after: Readonly<Record<string, ServerConfig>>): ServerChanges {
  const enabled = (servers: Readonly<Record<string, ServerConfig>>) => new Map(Object.entries(servers).filter(([, s]) => s.enabled));
  const old = enabled(before);
  const next = enabled(after);
  const out: ServerChanges = { added: [], removed: [], restarted: [], unchanged: [] };
  for (const [id, server] of next) {
    const was = old.get(id);
    if (was === undefined) out.added.push(id);
    else if (stableJson(was) === stableJson(server)) out.unchanged.push(id);
    else out.restarted.push(id);
  }
  for (const id of old.keys()) if (!next.has(id)) out.removed.push(id);
  return out;
}

/** True when some rate limit applies to someone. */
function limitsInForce(config: FederateConfig): boolean {
  const limits: unknown = config.limits;
  if (Array.isArray(limits)) return limits.length > 0;
  if (typeof limits !== 'object' || limits === null) return false;
  // { reads, completions }: in force when either list holds an entry.
  return Object.values(limits).some((list) => Array.isArray(list) && list.length > 0);
}

/** JSON with object keys sorted at every level, so two equal values compare equal as strings. */
export function stableJson(value: unknown): string {
  return (
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- JSON.stringify(undefined) is undefined, whatever its type says
    JSON.stringify(value, (_key, v: unknown) =>
      typeof v === 'object' && v !== null && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : v,
    ) ?? 'undefined'
  );
}
