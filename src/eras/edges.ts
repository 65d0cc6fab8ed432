// The rules of each protocol era at the session edge, by era: the one place the core picks them.
import type { Era, EraEdge } from './era.js';
import { rev2025 } from './rev2025.js';
import { rev2026 } from './rev2026.js';

/**
 * The session-edge rules for a client of `era` (2025-11-25 when none is given).
 *
 * @example edgeOf(server.era).notFoundCode // -32002 for a 2025-11-25 client
 */
export function edgeOf(era: Era | undefined): EraEdge {
  return era === rev2026.era ? rev2026 : rev2025;
}
