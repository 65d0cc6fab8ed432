// The protocol eras on the upstream side: how a server's `protocol` setting negotiates, and how a 2026-07-28 upstream is asked for changes (a listen stream, not resources/subscribe).
import type { Client } from '@modelcontextprotocol/client';
import { Methods, Revisions } from '../protocol.js';
import { ListenFilter } from './listen-filter.js';

/** A server's `protocol` setting: one revision, or `auto`. */
export type ProtocolSetting = (typeof Revisions)[keyof typeof Revisions] | 'auto';

/**
 * The SDK's version negotiation for a server's `protocol` setting: `auto` asks with
 * `server/discover` and falls back to `initialize`; 2026-07-28 is pinned (no handshake); 2025-11-25
 * is the `initialize` handshake alone.
 */
export function negotiationMode(protocol: ProtocolSetting): 'legacy' | 'auto' | { pin: typeof Revisions.modern } {
  if (protocol === 'auto') return 'auto';
  return protocol === Revisions.modern ? { pin: Revisions.modern } : 'legacy';
}

/** What {@link upstreamListen} reports to the upstream's listeners. */
export interface UpstreamListenOptions {
  /** Bound on opening one stream, in milliseconds (the upstream's `timeoutMs`). */
  timeoutMs: number;
  /** The upstream declared `resources.listChanged`: its list changes arrive on the stream, so one is held from the start. */
  listChanged: boolean;
  /** The upstream declared `tools.listChanged` (as `listChanged`, for its tool list). */
  toolsChanged?: boolean;
  /** The upstream declared `prompts.listChanged` (as `listChanged`, for its prompt list). */
  promptsChanged?: boolean;
  /** Where the changes a reopened stream may have missed are reported, as the notifications a 2025 upstream would send. */
  notify(notification: { method: string; params?: Record<string, unknown> }): void;
}

/**
 * How a connected upstream is asked to notify changes of URIs: undefined for a 2025-11-25 upstream
 * (it takes `resources/subscribe`), else this connection's listen filter (2026-07-28 has no
 * resources/subscribe: a `subscriptions/listen` stream whose filter is the set held, reopened as it
 * changes). A stream the upstream ended is reopened; what may have changed meanwhile is reported
 * as updated, and as a list change when the upstream declares them.
 */
export function upstreamListen(client: Client, options: UpstreamListenOptions): ListenFilter | undefined {
  if (client.getNegotiatedProtocolVersion() !== Revisions.modern) return undefined;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- plain option callbacks, not methods of a class
  const { listChanged, notify, timeoutMs, toolsChanged = false, promptsChanged = false } = options;
  const reopened = (uris: string[]) => {
    for (const uri of uris) notify({ method: Methods.updated, params: { uri } });
    if (listChanged) notify({ method: Methods.listChanged });
    if (toolsChanged) notify({ method: Methods.toolsListChanged });
    if (promptsChanged) notify({ method: Methods.promptsListChanged });
  };
  const filter = (uris: string[]) => ({
    ...(uris.length > 0 ? { resourceSubscriptions: uris } : {}),
    ...(listChanged ? { resourcesListChanged: true } : {}),
    ...(toolsChanged ? { toolsListChanged: true } : {}),
    ...(promptsChanged ? { promptsListChanged: true } : {}),
  });
  return new ListenFilter((uris) => client.listen(filter(uris), { timeout: timeoutMs }), {
    onReopened: reopened,
    always: listChanged || toolsChanged || promptsChanged,
  });
}
