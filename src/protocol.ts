// MCP revision specifics the core relies on (2025-11-25): method names, result shapes we touch, _meta keys, the revisions' names.
import { z } from 'zod';

/** The two MCP revisions the proxy speaks, by the SDK's era names: the only place (with `eras/`) that spells them. */
export const Revisions = {
  legacy: '2025-11-25',
  modern: '2026-07-28',
} as const;

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
  listTools: 'tools/list',
  callTool: 'tools/call',
  listPrompts: 'prompts/list',
  getPrompt: 'prompts/get',
  toolsListChanged: 'notifications/tools/list_changed',
  promptsListChanged: 'notifications/prompts/list_changed',
  progress: 'notifications/progress',
  message: 'notifications/message',
} as const;

/**
 * Upstream results are checked only as deep as the proxy reads them (the URI fields it rewrites),
 * with predicates that neither copy nor strip: every other field passes through untouched, and the
 * downstream client validates the whole message anyway. A full zod parse of every upstream result
 * would double the per-message work on the read path.
 */
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const allHave = (v: unknown, key: string): boolean => Array.isArray(v) && v.every((item) => isObject(item) && typeof item[key] === 'string');
const optionalString = (v: unknown): boolean => v === undefined || typeof v === 'string';

type WithUri = Record<string, unknown> & { uri: string };
type WithTemplate = Record<string, unknown> & { uriTemplate: string };

/** `resources/list` result as the proxy reads it. */
export const ListResourcesResult = z.custom<{ resources: WithUri[]; nextCursor?: string }>(
  (v) => isObject(v) && allHave(v.resources, 'uri') && optionalString(v.nextCursor),
  'invalid resources/list result',
);

/** `resources/templates/list` result as the proxy reads it. */
export const ListTemplatesResult = z.custom<{ resourceTemplates: WithTemplate[]; nextCursor?: string }>(
  (v) => isObject(v) && allHave(v.resourceTemplates, 'uriTemplate') && optionalString(v.nextCursor),
  'invalid resources/templates/list result',
);

/** `resources/read` result as the proxy reads it. */
export const ReadResult = z.custom<Record<string, unknown> & { contents: WithUri[] }>(
  (v) => isObject(v) && allHave(v.contents, 'uri'),
  'invalid resources/read result',
);

/** `completion/complete` result as the proxy reads it. */
export const CompleteResult = z.custom<Record<string, unknown> & { completion: { values: string[]; total?: number; hasMore?: boolean } }>(
  (v) => isObject(v) && isObject(v.completion) && Array.isArray(v.completion.values),
  'invalid completion/complete result',
);

type WithName = Record<string, unknown> & { name: string };

/** `tools/list` result as the proxy reads it. */
export const ListToolsResult = z.custom<{ tools: WithName[]; nextCursor?: string }>(
  (v) => isObject(v) && allHave(v.tools, 'name') && optionalString(v.nextCursor),
  'invalid tools/list result',
);

/** `prompts/list` result as the proxy reads it. */
export const ListPromptsResult = z.custom<{ prompts: WithName[]; nextCursor?: string }>(
  (v) => isObject(v) && allHave(v.prompts, 'name') && optionalString(v.nextCursor),
  'invalid prompts/list result',
);

/** `tools/call` result as the proxy reads it: an object (its `content` is rewritten when it is an array). */
export const CallToolResult = z.custom<Record<string, unknown>>(isObject, 'invalid tools/call result');

/** `prompts/get` result as the proxy reads it. */
export const GetPromptResult = z.custom<Record<string, unknown> & { messages: Record<string, unknown>[] }>(
  (v) => isObject(v) && Array.isArray(v.messages) && v.messages.every(isObject),
  'invalid prompts/get result',
);

/** The longest tool or prompt name a client may send (UTF-16 units); a longer one is refused as invalid params. */
export const MAX_ITEM_NAME = 1024;

/** `_meta` key of a listed tool or prompt holding the name its upstream gave it. */
export const META_UPSTREAM_NAME = 'mcp-federate/upstreamName';

/** An empty result (subscribe / unsubscribe): any object. */
export const EmptyResult = z.custom<Record<string, unknown>>(isObject, 'invalid result');

/**
 * Which queued notifications to a client replace each other while unsent (the newest is kept):
 * one `resources/updated` per URI, one `list_changed`. A slow client thus gets the latest state of
 * each, never a backlog of duplicates.
 */
export function notificationCoalesceKey(sent: object): string | undefined {
  const message = sent as { method?: unknown; params?: unknown };
  if (message.method === Methods.listChanged || message.method === Methods.toolsListChanged || message.method === Methods.promptsListChanged) {
    return message.method;
  }
  if (message.method !== Methods.updated) return undefined;
  const uri = (message.params as { uri?: unknown } | undefined)?.uri;
  return typeof uri === 'string' ? `u:${uri}` : undefined;
}

/** The `_meta` keys of one hop (reserved for the protocol, e.g. the upstream's serverInfo). */
const RESERVED_META_PREFIX = 'io.modelcontextprotocol/';

/**
 * A copy of an upstream result without what belongs to that upstream's own hop: its cache hints
 * (`ttlMs`, `cacheScope`: the proxy's cache consumes them, and answers carry the proxy's own),
 * `resultType`, and reserved `io.modelcontextprotocol/*` `_meta` keys (e.g. its serverInfo). Other
 * fields pass through. Returns `result` itself when there is nothing to drop.
 */
export function withoutHopFields<T extends Record<string, unknown>>(result: T): T {
  const meta = result._meta;
  const metaHop = isReservedMeta(meta);
  // The result fields that describe one hop of the 2026-07-28 protocol (the upstream's own), not the resource.
  if (!metaHop && !('ttlMs' in result) && !('cacheScope' in result) && !('resultType' in result)) return result;
  // Built key by key, never with `delete`: a deleted key turns a V8 object into a slow dictionary,
  // which every later step (the copies for the client, JSON.stringify) then pays for.
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(result)) {
    if (key === 'ttlMs' || key === 'cacheScope' || key === 'resultType') continue;
    if (key === '_meta' && metaHop) {
      const rest = withoutReservedKeys(meta as Record<string, unknown>);
      if (rest !== undefined) copy._meta = rest;
      continue;
    }
    setOwn(copy, key, result[key]);
  }
  for (const symbol of Object.getOwnPropertySymbols(result)) {
    if (Object.prototype.propertyIsEnumerable.call(result, symbol)) (copy as Record<symbol, unknown>)[symbol] = (result as Record<symbol, unknown>)[symbol];
  }
  return copy as T;
}

/** Whether `meta` is an object with a reserved `io.modelcontextprotocol/*` key. */
function isReservedMeta(meta: unknown): boolean {
  if (typeof meta !== 'object' || meta === null) return false;
  for (const key of Object.keys(meta)) if (key.startsWith(RESERVED_META_PREFIX)) return true;
  return false;
}

/** `meta` without its reserved keys, or undefined when nothing else is left. */
function withoutReservedKeys(meta: Record<string, unknown>): Record<string, unknown> | undefined {
  let rest: Record<string, unknown> | undefined;
  for (const key of Object.keys(meta)) if (!key.startsWith(RESERVED_META_PREFIX)) setOwn((rest ??= {}), key, meta[key]);
  return rest;
}

/** `target[key] = value` as an own data property, also for `"__proto__"` (which assignment would treat as the prototype). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** `_meta` key listing upstreams whose part of a list is missing or cut short, and why. */
export const META_INCOMPLETE = 'mcp-federate/incomplete';

export type ReadResultT = z.output<typeof ReadResult>;
export type CompleteResultT = z.output<typeof CompleteResult>;
export type CallToolResultT = z.output<typeof CallToolResult>;
export type GetPromptResultT = z.output<typeof GetPromptResult>;
