// A scriptable upstream built on the SDK's low-level Server, for in-process tests.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CompleteRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type Resource,
  type ResourceTemplate,
} from '@modelcontextprotocol/sdk/types.js';
import { counter } from './gate.js';

/** What a test can script about an upstream. */
export interface UpstreamSpec {
  resources?: Resource[];
  templates?: ResourceTemplate[];
  /** Page size of resources/list and resources/templates/list. Default: everything in one page. */
  pageSize?: number;
  /** Read handler; default: text "content of <uri>" for listed URIs, -32002 otherwise. */
  read?: (uri: string, signal: AbortSignal) => unknown;
  /** Completion handler; when absent the capability is not declared. */
  complete?: (params: { ref: { uri?: string }; argument: { name: string; value: string } }) => string[];
  /** Throw this from list calls. */
  failList?: boolean;
  /** Never end pagination. */
  endlessCursor?: boolean;
  /** Declare and handle subscriptions. */
  subscribe?: boolean;
  /** Omit templates/list (method not found). */
  noTemplates?: boolean;
}

/** Counters and the server, for assertions. */
export interface UpstreamHandle {
  server: Server;
  stats: {
    initializes: number;
    reads: Map<string, number>;
    cursorsSeen: string[];
    subscribes: string[];
    unsubscribes: string[];
    /** Hit on every subscribe and unsubscribe the upstream receives. */
    subscriptionCalls: ReturnType<typeof counter>;
  };
}

/** A resource with full metadata, for metadata-preservation checks. */
export function richResource(uri: string, extra: Partial<Resource> = {}): Resource {
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

/** Builds a fresh upstream Server (call once per connection: it is what a process restart gives). */
export function createUpstreamServer(spec: UpstreamSpec, stats: UpstreamHandle['stats'] = newStats()): UpstreamHandle {
  const server = new Server(
    { name: 'test-upstream', version: '1.0.0' },
    {
      capabilities: {
        resources: { listChanged: true, ...(spec.subscribe ? { subscribe: true } : {}) },
        ...(spec.complete ? { completions: {} } : {}),
      },
    },
  );
  server.oninitialized = () => {
    stats.initializes++;
  };
  const page = <T>(items: T[], cursor: string | undefined) => {
    if (cursor !== undefined) stats.cursorsSeen.push(cursor);
    if (spec.failList) throw new McpError(-32603, 'upstream list exploded: secret detail');
    if (spec.endlessCursor) {
      const n = cursor === undefined ? 0 : Number(cursor.split(':')[1]);
      return { items: [{ uri: `endless://${n}`, name: `e${n}` }] as T[], nextCursor: `endless:${n + 1}` };
    }
    const size = spec.pageSize ?? (items.length || 1);
    const start = cursor === undefined ? 0 : Number(cursor.slice(cursor.indexOf(':') + 1));
    const next = start + size < items.length ? `${server.getClientVersion()?.name}:${start + size}` : undefined;
    return { items: items.slice(start, start + size), ...(next ? { nextCursor: next } : {}) };
  };
  server.setRequestHandler(ListResourcesRequestSchema, (req) => {
    const p = page(spec.resources ?? [], req.params?.cursor);
    return { resources: p.items, ...(p.nextCursor ? { nextCursor: p.nextCursor } : {}) };
  });
  if (!spec.noTemplates) {
    server.setRequestHandler(ListResourceTemplatesRequestSchema, (req) => {
      const p = page(spec.templates ?? [], req.params?.cursor);
      return { resourceTemplates: p.items, ...(p.nextCursor ? { nextCursor: p.nextCursor } : {}) };
    });
  }
  server.setRequestHandler(ReadResourceRequestSchema, async (req, extra) => {
    const uri = req.params.uri;
    stats.reads.set(uri, (stats.reads.get(uri) ?? 0) + 1);
    if (spec.read) return (await spec.read(uri, extra.signal)) as never;
    if (!(spec.resources ?? []).some((r) => r.uri === uri)) throw new McpError(-32002, 'Resource not found', { uri });
    return { contents: [{ uri, mimeType: 'text/plain', text: `content of ${uri}` }] };
  });
  if (spec.complete) {
    const complete = spec.complete;
    server.setRequestHandler(CompleteRequestSchema, (req) => {
      const values = complete(req.params as never);
      return { completion: { values, total: values.length, hasMore: false } };
    });
  }
  if (spec.subscribe) {
    server.setRequestHandler(SubscribeRequestSchema, (req) => {
      stats.subscribes.push(req.params.uri);
      stats.subscriptionCalls.hit();
      return {};
    });
    server.setRequestHandler(UnsubscribeRequestSchema, (req) => {
      stats.unsubscribes.push(req.params.uri);
      stats.subscriptionCalls.hit();
      return {};
    });
  }
  return { server, stats };
}

export function newStats(): UpstreamHandle['stats'] {
  return { initializes: 0, reads: new Map(), cursorsSeen: [], subscribes: [], unsubscribes: [], subscriptionCalls: counter() };
}
