// What the core asks of a client's protocol era at the session edge: how not-found is spelled, how a result is answered, how a session opens and is served.
import type { ProtocolEra, Server, Transport } from '@modelcontextprotocol/server';
import type { ClassifiedHandler, Send, Wrapper } from '../wire/compose.js';
import type { ListenCounter, ListenHolds } from './listen-tap.js';

/** The protocol era a peer speaks: 2025-11-25 (`legacy`) or 2026-07-28 (`modern`); the SDK's own type. */
export type Era = ProtocolEra;

/** The 2025-11-25 era (sessions opened by `initialize`). */
export const LEGACY: Era = 'legacy';
/** The 2026-07-28 era (stateless requests carrying the `_meta` envelope). */
export const MODERN: Era = 'modern';

/** What serving a stdio connection in one era needs from the session (see {@link EraEdge.stdio}). */
export interface StdioHooks {
  /** A facade Server for this session, in `era`. */
  createServer(era: Era): Server;
  /** The federation's side of a 2026 `subscriptions/listen` (unused by 2025). */
  listen: ListenHolds;
  /** Told as 2026 listens open and end (the session's gauge of open listens); none: not counted. */
  listens?: ListenCounter;
  /** Errors of what serves the connection. */
  onerror(err: Error): void;
}

/** One era's rules at the session edge, implemented by `rev2025.ts` and `rev2026.ts`; pick one with `edgeOf`. */
export interface EraEdge {
  /** The era these rules are for. */
  readonly era: Era;
  /** The protocol revision this era speaks (`2025-11-25` or `2026-07-28`), as metrics label it. */
  readonly revision: string;
  /** The JSON-RPC code of "Resource not found" to this era's clients: built once with it, sent as built. */
  readonly notFoundCode: number;
  /** `result` as this era's clients get it (2026-07-28: the proxy's cache hint as `ttlMs` / `cacheScope`). */
  answer<T extends object>(result: T): T;
  /**
   * Whether a stdio connection of this era may take the edge fast lane (`serve/fast-lane.ts`): its
   * requests are plain JSON-RPC whose answers go out as the facade builds them (2025-11-25). 2026-07-28
   * requests carry their envelope in `_meta` and are served by the SDK's entry.
   */
  readonly fastLane: boolean;
  /** Sets up a facade Server (an SDK `Protocol`) for this era, once, before it connects. */
  prepare(server: object): void;
  /** Calls `then` with the revision once `server`'s session is open (2025: after `initialize`; 2026: at once). */
  opened(server: Server, then: (revision: string | undefined) => void): void;
  /** How a stdio connection whose first message was of this era is served. */
  stdio(hooks: StdioHooks): StdioServing;
}

/** One era's part of a stdio connection: its wrappers, and what serves the connection behind them. */
export interface StdioServing {
  /** This era's inbound wrapper, in front of what serves the connection (2026: the listen tap). */
  receive?: Wrapper<ClassifiedHandler>;
  /**
   * This era's answers at the edge, ahead of {@link receive}: given the connection's outbound, a
   * wrapper that answers itself what what serves the connection would drop unanswered (2026: a
   * request whose `_meta` is not an object). None: every message goes on.
   */
  refuse?: (send: Send) => Wrapper<ClassifiedHandler>;
  /** This era's outbound wrapper, between what serves the connection and the connection's own. */
  send?: Wrapper<Send>;
  /** Serves the connection on `tail` (started already; messages reach it once this resolves); resolves to how to close it. */
  serve(tail: Transport): Promise<() => Promise<void>>;
}
