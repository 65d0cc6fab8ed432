// The one scriptable upstream (SDK v1 low-level Server): in-process tests build it directly, and the spawned catalog fixture wraps it in a CLI.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CompleteRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { counter } from './counter.mjs';

const NOT_FOUND = -32002;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

/** A read result of one text content. */
export const textContents = (uri, text) => ({ contents: [{ uri, mimeType: 'text/plain', text }] });

/** The error an upstream answers for a URI it does not have. */
export const resourceNotFound = (uri) => new McpError(NOT_FOUND, 'Resource not found', { uri });

/** Cursors `<client name>:<offset>`, so a test can see which cursors came back verbatim. */
export const clientNameCursors = {
  encode: (offset, server) => `${server.getClientVersion()?.name}:${offset}`,
  decode: (cursor) => Number(cursor.slice(cursor.indexOf(':') + 1)),
};

/** Opaque cursors (base64url of `o:<offset>`); anything else is refused with -32602. */
export const opaqueCursors = {
  encode: (offset) => Buffer.from(`o:${offset}`).toString('base64url'),
  decode: (cursor) => {
    const m = /^o:(\d+)$/.exec(Buffer.from(String(cursor), 'base64url').toString());
    if (!m) throw new McpError(INVALID_PARAMS, 'Invalid cursor', { cursor });
    return Number(m[1]);
  },
};

/** A resource with full metadata, for metadata-preservation checks. */
export function richResource(uri, extra = {}) {
  return {
    uri,
    name: `name:${uri}`,
    title: `Title ${uri}`,
    description: `About ${uri}`,
    mimeType: 'text/plain',
    size: 42,
    annotations: { audience: ['user'], priority: 0.5, lastModified: '2025-01-01T00:00:00Z' },
    icons: [{ src: 'https://example.com/i.png', mimeType: 'image/png' }],
    _meta: { 'x/tag': uri },
    ...extra,
  };
}

/** Fresh counters, to share between the Servers of one upstream (its restarts, or its HTTP sessions). */
export function newStats() {
  return {
    initializes: 0,
    reads: new Map(),
    cursorsSeen: [],
    subscribes: [],
    unsubscribes: [],
    subscriptionCalls: counter(),
    listCalls: 0,
    templateListCalls: 0,
    completions: 0,
  };
}

/** Builds a fresh upstream Server (call once per connection: it is what a process restart gives). */
export function createUpstreamServer(spec, stats = newStats()) {
  const server = new Server(
    { name: spec.name ?? 'test-upstream', version: '1.0.0' },
    {
      capabilities: {
        resources: { listChanged: true, ...(spec.subscribe ? { subscribe: true } : {}) },
        ...(spec.complete ? { completions: {} } : {}),
        ...spec.capabilities,
      },
    },
  );
  const subscribed = new Set();
  const cursors = spec.cursors ?? clientNameCursors;
  const resources = typeof spec.resources === 'function' ? spec.resources : () => spec.resources ?? [];
  server.oninitialized = () => {
    stats.initializes++;
  };
  const page = (items, cursor) => {
    if (cursor !== undefined) stats.cursorsSeen.push(cursor);
    if (spec.failList) throw new McpError(INTERNAL_ERROR, 'upstream list exploded: secret detail');
    const size = spec.pageSize ?? (items.length || 1);
    const start = cursor === undefined ? 0 : cursors.decode(cursor);
    const next = start + size < items.length ? cursors.encode(start + size, server) : undefined;
    return { items: items.slice(start, start + size), ...(next ? { nextCursor: next } : {}) };
  };
  const endlessPage = (cursor) => {
    if (cursor !== undefined) stats.cursorsSeen.push(cursor);
    const n = cursor === undefined ? 0 : cursors.decode(cursor);
    return { resources: [{ uri: `fixture://endless/${n}`, name: `endless-${n}` }], nextCursor: cursors.encode(n + 1, server) };
  };
  server.setRequestHandler(ListResourcesRequestSchema, (req) => {
    stats.listCalls++;
    if (spec.endlessCursor && !spec.failList) return endlessPage(req.params?.cursor);
    const p = page(resources(), req.params?.cursor);
    return { resources: p.items, ...(p.nextCursor ? { nextCursor: p.nextCursor } : {}) };
  });
  if (!spec.noTemplates) {
    server.setRequestHandler(ListResourceTemplatesRequestSchema, (req) => {
      stats.templateListCalls++;
      const p = page(spec.templates ?? [], req.params?.cursor);
      return { resourceTemplates: p.items, ...(p.nextCursor ? { nextCursor: p.nextCursor } : {}) };
    });
  }
  server.setRequestHandler(ReadResourceRequestSchema, async (req, extra) => {
    const uri = req.params.uri;
    stats.reads.set(uri, (stats.reads.get(uri) ?? 0) + 1);
    if (spec.read) return spec.read(uri, extra.signal, server);
    if (!resources().some((r) => r.uri === uri)) throw resourceNotFound(uri);
    return textContents(uri, `content of ${uri}`);
  });
  if (spec.complete) {
    const complete = spec.complete;
    server.setRequestHandler(CompleteRequestSchema, (req) => {
      stats.completions++;
      const values = complete(req.params);
      return { completion: { values, total: values.length, hasMore: false } };
    });
  }
  if (spec.subscribe) {
    server.setRequestHandler(SubscribeRequestSchema, (req) => {
      stats.subscribes.push(req.params.uri);
      subscribed.add(req.params.uri);
      stats.subscriptionCalls.hit();
      return {};
    });
    server.setRequestHandler(UnsubscribeRequestSchema, (req) => {
      stats.unsubscribes.push(req.params.uri);
      subscribed.delete(req.params.uri);
      stats.subscriptionCalls.hit();
      return {};
    });
  }
  spec.extend?.(server);
  return { server, stats, subscribed };
}
