// `mcp-federate ls`: walks the merged lists once into a catalog, rendered as text or JSON.
import type { FederateConfig } from './config/schema.js';
import type { ListKind } from './federation/cursor.js';
import type { Proxy } from './proxy.js';
import type { UpstreamStatus } from './upstream/upstream.js';

/** Most downstream pages `ls` walks per list. */
const MAX_PAGES = 10_000;

/** One configured server as `ls` reports it. */
export interface CatalogServer {
  /** Server id: the namespace of its URIs. */
  id: string;
  /** Its key in the config file, as written. */
  name: string;
  /** Its upstream's status, or "disabled" for `enabled: false` / `disabled: true`. */
  status: UpstreamStatus | 'disabled';
  /** Why it is unavailable (its start error); only when enabled and not ready. */
  reason?: string;
  /** The last lines its child wrote to stderr before it failed; only with `reason`, when there are any. */
  stderr?: readonly string[];
  /** The MCP revision negotiated with it; only when ready. */
  protocol?: string;
  /** Resources and templates it contributes; null unless ready. */
  resources: number | null;
  templates: number | null;
}

/** What `ls` prints: every configured server in config order, then the merged lists as clients see them. */
export interface Catalog {
  servers: CatalogServer[];
  resources: Record<string, unknown>[];
  templates: Record<string, unknown>[];
}

/** Walks both merged lists and pairs them with each configured server's status (disabled ones too). */
export async function collectCatalog(proxy: Proxy, config: FederateConfig): Promise<Catalog> {
  const resources = await walk(proxy, 'resources');
  const templates = await walk(proxy, 'templates');
  const count = (items: Record<string, unknown>[], field: string) => {
    const counts = new Map<string, number>();
    for (const item of items) {
      const server = proxy.uris.decode(String(item[field]))?.server ?? '?';
      counts.set(server, (counts.get(server) ?? 0) + 1);
    }
    return counts;
  };
  const r = count(resources, 'uri');
  const t = count(templates, 'uriTemplate');
  const servers = Object.entries(config.servers).map(([id, server]): CatalogServer => {
    const upstream = proxy.pool.get(id);
    if (!server.enabled || !upstream) return { id, name: server.name, status: 'disabled', resources: null, templates: null };
    if (upstream.status === 'ready') {
      const protocol = upstream.protocolVersion;
      return { id, name: server.name, status: 'ready', ...(protocol ? { protocol } : {}), resources: r.get(id) ?? 0, templates: t.get(id) ?? 0 };
    }
    const failure = upstream.failure;
    return {
      id,
      name: server.name,
      status: upstream.status,
      reason: failure?.reason ?? upstream.status,
      ...(failure && failure.stderr.length > 0 ? { stderr: failure.stderr } : {}),
      resources: null,
      templates: null,
    };
  });
  return { servers, resources, templates };
}

/**
 * The text form: status and counts per server (with a NAME column when some config key differs
 * from its id), then every namespaced resource URI and template.
 */
export function renderCatalog(catalog: Catalog): string {
  const named = catalog.servers.some((s) => s.name !== s.id);
  const rows = catalog.servers.map((s) => [
    s.id,
    s.status,
    s.resources === null ? '-' : String(s.resources),
    s.templates === null ? '-' : String(s.templates),
    s.protocol ?? '-',
    ...(named ? [s.name] : []),
  ]);
  const table = [['SERVER', 'STATUS', 'RESOURCES', 'TEMPLATES', 'PROTOCOL', ...(named ? ['NAME'] : [])], ...rows];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  const lines = table.map((row) =>
    row
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  );
  const uris = (items: Record<string, unknown>[], field: string) => items.map((item) => `  ${String(item[field])}`);
  return [...lines, '', 'Resources:', ...uris(catalog.resources, 'uri'), '', 'Templates:', ...uris(catalog.templates, 'uriTemplate'), ''].join('\n');
}

/** One paragraph per enabled server that is not ready: its reason, then its child's last stderr lines. */
export function renderUnavailable(catalog: Catalog): string {
  return catalog.servers
    .filter((s) => s.reason !== undefined)
    .map((s) => {
      const head = `mcp-federate: ${s.id}${s.name === s.id ? '' : ` (${s.name})`} is ${s.status}: ${s.reason}\n`;
      return s.stderr ? `${head}  its last stderr lines:\n${s.stderr.map((line) => `    ${line}\n`).join('')}` : head;
    })
    .join('');
}

async function walk(proxy: Proxy, kind: ListKind): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await proxy.resources.list(kind, cursor);
    for (const item of (kind === 'resources' ? page.resources : page.resourceTemplates) as Record<string, unknown>[]) out.push(item);
    cursor = page.nextCursor;
    if (cursor === undefined) break;
  }
  return out;
}
