// MCP revision specifics the core relies on (2025-11-25): method names, result shapes we touch, _meta keys.
import { z } from 'zod';

/** Methods the proxy sends upstream or answers downstream. */
export const Methods = {
  listResources: 'resources/list',
  listTemplates: 'resources/templates/list',
  read: 'resources/read',
  complete: 'completion/complete',
  subscribe: 'resources/subscribe',
  unsubscribe: 'resources/unsubscribe',
  updated: 'notifications/resources/updated',
  listChanged: 'notifications/resources/list_changed',
} as const;

/**
 * Upstream results are validated only as deep as the proxy reads them (the URI fields it rewrites);
 * every other field passes through untouched. Full validation of every message would double the
 * per-message work on the read path for no safety the downstream client does not already have.
 */
const uriItem = z.looseObject({ uri: z.string() });
const templateItem = z.looseObject({ uriTemplate: z.string() });

/** `resources/list` result as the proxy reads it. */
export const ListResourcesResult = z.looseObject({
  resources: z.array(uriItem),
  nextCursor: z.string().optional(),
});

/** `resources/templates/list` result as the proxy reads it. */
export const ListTemplatesResult = z.looseObject({
  resourceTemplates: z.array(templateItem),
  nextCursor: z.string().optional(),
});

/** `resources/read` result as the proxy reads it. */
export const ReadResult = z.looseObject({ contents: z.array(uriItem) });

/** `completion/complete` result as the proxy reads it. */
export const CompleteResult = z.looseObject({
  completion: z.looseObject({ values: z.array(z.string()) }),
});

/** An empty result (subscribe / unsubscribe). */
export const EmptyResult = z.looseObject({});

/** `_meta` key listing upstreams whose part of a list is missing or cut short, and why. */
export const META_INCOMPLETE = 'mcp-federate/incomplete';

export type ReadResultT = z.output<typeof ReadResult>;
export type CompleteResultT = z.output<typeof CompleteResult>;
