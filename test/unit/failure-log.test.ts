// Failed authentications: exact counts, one warn line per reason per interval with the suppressed count, injected clock.
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { AuthFailureLog } from '../../src/serve/auth/failure-log.js';

function withLog(everyMs?: number) {
  const lines: string[] = [];
  const logger = createLogger({ level: 'debug', destination: { write: (s: string) => void lines.push(s) } });
  const clock = { ms: 1_000 };
  const log = new AuthFailureLog({ logger, now: () => clock.ms, ...(everyMs === undefined ? {} : { everyMs }) });
  return { log, clock, records: () => lines.map((l) => JSON.parse(l) as { level: number; msg: string; auth: Record<string, unknown> }) };
}

describe('AuthFailureLog', () => {
  it('logs the first failure of each reason, counts the rest, and reports them with the next line', () => {
    const { log, clock, records } = withLog();
    for (let i = 0; i < 1000; i++) log.record('ERR_UNKNOWN_TOKEN');
    log.record('ERR_JWT_EXPIRED', { claim: 'exp' });
    expect(records().map((r) => [r.level, r.auth])).toEqual([
      [40, { code: 'ERR_UNKNOWN_TOKEN', suppressed: 0 }],
      [40, { code: 'ERR_JWT_EXPIRED', claim: 'exp', suppressed: 0 }],
    ]);
    clock.ms += 9_999;
    log.record('ERR_UNKNOWN_TOKEN');
    expect(records()).toHaveLength(2);
    clock.ms += 1;
    log.record('ERR_UNKNOWN_TOKEN');
    expect(records().at(-1)?.auth).toEqual({ code: 'ERR_UNKNOWN_TOKEN', suppressed: 1000 });
    expect(log.counts).toEqual({ total: 1003, byReason: { ERR_UNKNOWN_TOKEN: 1002, ERR_JWT_EXPIRED: 1 } });
  });

  it('a detail cannot overwrite the code or the suppressed count', () => {
    const { log, records } = withLog(0);
    log.record('ERR_X', { code: 'forged', suppressed: -1 });
    expect(records()[0]?.auth).toEqual({ code: 'ERR_X', suppressed: 0 });
  });

  it('counts without a logger', () => {
    const log = new AuthFailureLog();
    log.record('ERR_X');
    expect(log.counts.total).toBe(1);
  });
});
