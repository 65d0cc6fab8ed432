// An upstream's tool or prompt list changed: forget what is held of it, fetch it again, and tell only the sessions whose view of it changed.
import type { Logger } from '../logger.js';
import { META_UPSTREAM_NAME } from '../protocol.js';
import type { ItemCatalog, ItemKind } from './item-catalog.js';
import type { Session, SessionRegistry } from './sessions.js';

/**
 * Whether `session` may see one of `items` (tools or prompts of `server`, as a list shows them:
 * client name in `name`, the upstream's own in `_meta`), or, with `items` undefined, whether it
 * may know `server` at all.
 */
export type ItemAudience = (session: Session, kind: ItemKind, server: string, items: readonly Record<string, unknown>[] | undefined) => boolean;

/** Options of {@link ItemChanges}. */
export interface ItemChangesOptions {
  catalog: ItemCatalog;
  sessions: SessionRegistry;
  /** Decided by policy (the gate), for each session when the notice goes out. */
  mayHear: ItemAudience;
  logger: Logger;
}

type Items = ReadonlyMap<string, Record<string, unknown>>;

/**
 * The tool and prompt lists each upstream last announced, and the notices of their changes. A
 * change (the upstream's `list_changed`, or another replica's copy of it) first drops what the
 * catalog holds, so no call is routed on the old list; then the list is fetched again and compared
 * with the one last announced, item by item. Only a session that may see an item added, removed or
 * altered hears `notifications/<kind>/list_changed`: one whose policy denies every changed item
 * hears nothing, as if nothing had changed. A repeat of a change (every replica's copy of one
 * upstream notice) finds nothing new and tells no one, so each session hears a change once without
 * a time window. Changes of one list are handled in order, and a burst of them while one is being
 * handled is one more fetch.
 *
 * Without a list to compare with (the first change this process sees of that list, or a fetch that
 * failed), every session that may know the server is told.
 */
export class ItemChanges {
  private readonly announced = new Map<string, Items>();
  private readonly queue = new Map<string, Promise<void>>();
  private readonly waiting = new Set<string>();

  constructor(private readonly options: ItemChangesOptions) {}

  /** `server`'s `kind` list changed (`remote`: another replica said so). Never throws. */
  changed(server: string, kind: ItemKind, remote = false): void {
    const key = `${kind}\u0000${server}`;
    // One waits behind the one running, at most: a fetch that has not begun will see this change too (a flood costs two fetches).
    if (this.waiting.has(key)) return this.options.logger.debug({ server, list: kind, remote }, 'list change: folded into the fetch that waits');
    this.waiting.add(key);
    const before = this.queue.get(key) ?? Promise.resolve();
    const next = before.then(() => {
      this.waiting.delete(key);
      return this.handle(server, kind, remote);
    });
    this.queue.set(key, next);
    void next.finally(() => {
      if (this.queue.get(key) === next) this.queue.delete(key);
    });
  }

  private async handle(server: string, kind: ItemKind, remote: boolean): Promise<void> {
    const { catalog, sessions, mayHear, logger } = this.options;
    const key = `${kind}\u0000${server}`;
    const before = this.announced.get(key) ?? catalog.held(kind, server);
    catalog.invalidate(server, kind);
    let after: Items | undefined;
    try {
      after = (await catalog.current(kind, server)) ?? new Map<string, Record<string, unknown>>();
    } catch (err) {
      logger.warn({ server, list: kind, err: String(err) }, 'changed list not fetched: every session that may know the server is told');
    }
    if (after) this.announced.set(key, after);
    const changed = before && after ? changedItems(before, after) : undefined;
    if (changed?.length === 0) {
      logger.debug({ server, list: kind, remote }, 'list change: nothing new to announce');
      return;
    }
    logger.debug({ server, list: kind, remote, changed: changed?.length ?? 'unknown' }, 'list change announced');
    sessions.listChanged([kind], (session) => {
      try {
        return mayHear(session, kind, server, changed);
      } catch {
        return false; // fail closed: a notice nobody could decide is not sent
      }
    });
  }
}

/**
 * Items added, removed or altered between two lists of one upstream, as a list shows them (client
 * name, the upstream's own in `_meta`); an altered item is in it twice, as it was and as it is (a
 * policy may allow one and deny the other, e.g. on its annotations).
 */
export function changedItems(before: Items, after: Items): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const shown = (clientName: string, item: Record<string, unknown>) => ({
    ...item,
    name: clientName,
    _meta: { ...(item._meta as Record<string, unknown> | undefined), [META_UPSTREAM_NAME]: item.name },
  });
  for (const [name, item] of after) {
    const old = before.get(name);
    if (!old) out.push(shown(name, item));
    else if (JSON.stringify(old) !== JSON.stringify(item)) out.push(shown(name, old), shown(name, item));
  }
  for (const [name, item] of before) if (!after.has(name)) out.push(shown(name, item));
  return out;
}
