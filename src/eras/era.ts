// What the core asks of a client's protocol era at the session edge: how not-found is spelled, how a result is answered, how a Server is set up. Types only.
import type { ProtocolEra } from '@modelcontextprotocol/server';

/** The protocol era a peer speaks: 2025-11-25 (`legacy`) or 2026-07-28 (`modern`); the SDK's own type. */
export type Era = ProtocolEra;

/** One era's rules at the session edge, implemented by `rev2025.ts` and `rev2026.ts`; pick one with `edgeOf`. */
export interface EraEdge {
  /** The era these rules are for. */
  readonly era: Era;
  /** The JSON-RPC code of "Resource not found" to this era's clients: built once with it, sent as built. */
  readonly notFoundCode: number;
  /** `result` as this era's clients get it (2026-07-28: the proxy's cache hint as `ttlMs` / `cacheScope`). */
  answer<T extends object>(result: T): T;
  /** Sets up a facade Server (an SDK `Protocol`) for this era, once, before it connects. */
  prepare(server: object): void;
}
