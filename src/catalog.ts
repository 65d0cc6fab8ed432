// `mcp-federate ls`: walks the merged lists once and renders the catalog as text.
import type { ListKind } from './cursor.js';
import type { Proxy } from './proxy.js';
import { decodeUri } from './uri.js';

/** Most downstream pages `ls` walks per list. */
const MAX_PAGES = 10_000;

/** Renders status and counts per server, then every namespaced resource URI and template. */
export async function printCatalog(proxy: Proxy): Promise<string> {
  const resources = await walk(proxy, 'resources');
  const templates = await walk(proxy, 'templates');
  const count = (uris: string[]) => {
    const counts = new Map<string, number>();
    for (const u of uris) {
      const server = decodeUri(u, proxy.pool.ids)?.server ?? '?';
      counts.set(server, (counts.get(server) ?? 0) + 1);
    }
    return counts;
  };
  const r = count(resources);
  const t = count(templates);
  const rows = proxy.pool.upstreams.map((u) => {
    const ready = u.status === 'ready';
    return [u.id, u.status, ready ? String(r.get(u.id) ?? 0) : '-', ready ? String(t.get(u.id) ?? 0) : '-'];
  });
  const table = [['SERVER', 'STATUS', 'RESOURCES', 'TEMPLATES'], ...rows];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  const lines = table.map((row) => row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd());
  return [...lines, '', 'Resources:', ...resources.map((u) => `  ${u}`), '', 'Templates:', ...templates.map((u) => `  ${u}`), ''].join('\n');
}

async function walk(proxy: Proxy, kind: ListKind): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await proxy.resources.list(kind, cursor);
    const items = (kind === 'resources' ? page.resources : page.resourceTemplates) as Record<string, string>[];
    for (const item of items) out.push(kind === 'resources' ? item.uri! : item.uriTemplate!);
    cursor = page.nextCursor;
    if (cursor === undefined) break;
  }
  return out;
}
