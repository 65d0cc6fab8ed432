// Failed authentications: counted by reason, logged at warn with the reason (never the token), at most one line per reason per interval.
import type { Logger } from '../../logger.js';

/** Options of {@link AuthFailureLog}. */
export interface AuthFailureLogOptions {
  /** Where the warn lines go. Absent: failures are only counted. */
  logger?: Logger | undefined;
  /** Milliseconds clock (injected in tests). Default: `Date.now`. */
  now?: () => number;
  /** Least time between two lines for one reason, in ms; failures in between are counted and reported by the next line as `suppressed`. Default: 10000. */
  everyMs?: number;
}

/** Counts of failed authentications since start. */
export interface AuthFailureCounts {
  total: number;
  /** By reason code (`ERR_UNKNOWN_TOKEN`, `ERR_JWT_EXPIRED`, `ERR_JWKS_UNAVAILABLE`, ...). */
  byReason: Record<string, number>;
}

/** Default interval between two log lines for one reason. */
export const DEFAULT_AUTH_FAILURE_LOG_EVERY_MS = 10_000;

/**
 * One per HTTP endpoint, surviving reloads of the `auth` block: a flood of bad tokens costs one
 * warn line per reason per `everyMs`, not one per request, and the counts are exact.
 *
 * @example
 * const failures = new AuthFailureLog({ logger });
 * failures.record('ERR_UNKNOWN_TOKEN', {}); // warn: bearer token refused { auth: { code, suppressed: 0 } }
 */
export class AuthFailureLog {
  private total = 0;
  private readonly byReason = new Map<string, number>();
  /** Per reason: when its last line was written, and failures not logged since. */
  private readonly windows = new Map<string, { loggedAt: number; suppressed: number }>();
  private readonly now: () => number;
  private readonly everyMs: number;

  constructor(private readonly options: AuthFailureLogOptions = {}) {
    this.now = options.now ?? Date.now;
    this.everyMs = options.everyMs ?? DEFAULT_AUTH_FAILURE_LOG_EVERY_MS;
  }

  /** One failure. `details` (the claim that failed, ...) go to the log under `auth`; never put the token there. */
  record(code: string, details: Record<string, unknown> = {}, message = 'bearer token refused'): void {
    this.total++;
    this.byReason.set(code, (this.byReason.get(code) ?? 0) + 1);
    const now = this.now();
    const window = this.windows.get(code);
    if (window && now - window.loggedAt < this.everyMs) {
      window.suppressed++;
      return;
    }
    const suppressed = window?.suppressed ?? 0;
    this.windows.set(code, { loggedAt: now, suppressed: 0 });
    this.options.logger?.warn({ auth: { ...details, code, suppressed } }, message);
  }

  /** The counts so far (a copy). */
  get counts(): AuthFailureCounts {
    return { total: this.total, byReason: Object.fromEntries(this.byReason) };
  }
}
