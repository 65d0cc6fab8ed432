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

/**
 * What `audit` recorded, without what differs between two runs of one script (times, durations, the
 * session id): each entry with its caller reduced to the principal and the transport. The lane tests
 * compare these between the lane and the SDK path.
 */
export function comparableRecords(audit: { entries: AuditEntry[] }): Record<string, unknown>[] {
  return audit.entries.map((e) => {
    const { durationMs: _d, caller, ...rest } = e;
    return { ...rest, principal: caller.principal, transport: caller.transport };
  });
}
