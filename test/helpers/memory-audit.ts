// An audit log that keeps its entries in memory, for tests that assert on what was recorded.
import type { AuditEntry, AuditLog } from '../../src/audit/log.js';

/** An audit log whose entries are kept, in order, in `entries`. */
export function memoryAudit(): AuditLog & { entries: AuditEntry[] } {
  const entries: AuditEntry[] = [];
  return {
    entries,
    record: (e) => void entries.push(e),
    recordBatched: async (e) => void entries.push(e),
    close: () => undefined,
    [Symbol.asyncDispose]: async () => undefined,
  };
}
