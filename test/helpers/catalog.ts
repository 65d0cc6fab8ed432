// What the catalog fixture (test/fixtures/catalog-server.mjs) serves, as a test expects it through the gateway: its contents, namespaced URIs, not-found, and lists walked to the end.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

export const META_INCOMPLETE = 'mcp-federate/incomplete';

/** A list walked to its end: every item and each page's size, `_meta` and cursor. */
export interface WalkedList {
  items: Record<string, unknown>[];
  pages: { size: number; meta: Record<string, unknown> | undefined; nextCursor: string | undefined }[];
}

/** Walks resources/list or resources/templates/list to the end (bounded). */
export async function listAll(client: Client, kind: 'resources' | 'templates' = 'resources', maxPages = 100): Promise<WalkedList> {
  const out: WalkedList = { items: [], pages: [] };
  let cursor: string | undefined;
  do {
    const params = cursor === undefined ? {} : { cursor };
    const page = kind === 'resources' ? await client.listResources(params) : await client.listResourceTemplates(params);
    const items = (kind === 'resources' ? page.resources : page.resourceTemplates) as Record<string, unknown>[];
    out.items.push(...items);
    cursor = page.nextCursor;
    out.pages.push({ size: items.length, meta: page._meta, nextCursor: cursor });
    if (out.pages.length > maxPages) throw new Error(`${kind} list did not end within ${maxPages} pages`);
  } while (cursor !== undefined);
  return out;
}

/** What the client sees for a "Resource not found" about `uri`. */
export const notFound = (uri: string) => ({ code: -32002, message: 'MCP error -32002: Resource not found', data: { uri } });

/** The text of catalog fixture resource `i` (see test/fixtures/catalog-server.mjs). */
export function fixtureText(i: number, size: number): string {
  const filler = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(Math.ceil(size / 36) + 1);
  return `resource ${i}: ${filler}`.slice(0, size);
}

/** The bytes of catalog fixture blob resource `i` (every tenth: 9, 19, ...). */
export function fixtureBlob(i: number, size: number): Buffer {
  const bytes = Buffer.alloc(size);
  for (let j = 0; j < size; j++) bytes[j] = (i * 31 + j) & 0xff;
  return bytes;
}

/** What reading catalog fixture resource `i` returns, with `uri` as given. */
export function fixtureContent(uri: string, i: number, size: number): Record<string, string> {
  return i % 10 === 9
    ? { uri, mimeType: 'application/octet-stream', blob: fixtureBlob(i, size).toString('base64') }
    : { uri, mimeType: 'text/plain', text: fixtureText(i, size) };
}

/** `uri` with the namespace of `server`. */
export const ns = (server: string, uri: string): string => `${server}+${uri}`;
