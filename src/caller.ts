// Who is calling: the identity every request handler, policy decision and audit record is about.

/** How the caller reached the gateway. */
export type CallerTransport = 'stdio' | 'http';

/**
 * The authenticated caller of one request. Over stdio it comes from config (`stdio.principal`,
 * `stdio.roles`); over HTTP from the bearer token or JWT that authenticated the request.
 */
export interface Caller {
  /** Principal name (static token entry, JWT claim, or the stdio principal). */
  readonly principal: string;
  /** Roles of the principal; empty when none. */
  readonly roles: readonly string[];
  /** The 2025 session id, or a per-request id for 2026 requests (stdio: the process session). */
  readonly session: string;
  readonly transport: CallerTransport;
  /**
   * True once the credential this caller authenticated with is gone (a reload removed it, or it
   * expired) while something of its was in flight: every decision about it is then a deny.
   */
  readonly revoked?: boolean;
}
