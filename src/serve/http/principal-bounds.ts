// Each HTTP principal's own bounds: sessions, 2026 listens, requests in flight, unread answer bytes; over one gets 429, audited.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Caller } from '../../caller.js';
import type { PrincipalLimitName } from '../../access/gate.js';
import { PrincipalCounter } from '../../access/principal-counter.js';
import { errorAnswer, JsonRpc } from '../../errors.js';
import { WireSchema, type HttpConfig } from '../../config/schema.js';
import type { Logger } from '../../logger.js';
import type { Proxy } from '../proxy-types.js';
import { OutputBudget } from './output-budget.js';

/** The `wire` bounds that apply per principal over HTTP. */
export interface PrincipalWireLimits {
  /** `wire.maxInFlightPerPrincipal`. */
  maxInFlightPerPrincipal: number;
  /** `wire.maxQueuedBytesPerPrincipal`. */
  maxQueuedBytesPerPrincipal: number;
}

/** Options of {@link PrincipalBounds}. */
export interface PrincipalBoundsOptions {
  proxy: Pick<Proxy, 'gate'>;
  logger: Logger;
  http: Pick<HttpConfig, 'maxSessionsPerPrincipal' | 'maxListensPerPrincipal'>;
  /** Default: the `wire` block's defaults. */
  wire?: PrincipalWireLimits;
}

/** Who made an HTTP request. */
interface Who {
  principal: string;
  roles: readonly string[];
}

/** Seconds a refused client is told to wait: sessions and listens are freed by their holders, so a few seconds, not one. */
const RETRY_AFTER_S: Record<PrincipalLimitName, number> = { sessions: 5, listens: 5, 'in-flight': 1, 'queued-bytes': 1, subscriptions: 1 };

const MESSAGES: Record<PrincipalLimitName, string> = {
  sessions: 'Too many sessions for this principal',
  listens: 'Too many open listens for this principal',
  'in-flight': 'Too many requests in flight for this principal',
  'queued-bytes': 'Too many unread answers for this principal',
  subscriptions: 'Too many subscriptions',
};

/**
 * One principal cannot take what the others need: it holds at most `http.maxSessionsPerPrincipal`
 * sessions, `http.maxListensPerPrincipal` listens, `wire.maxInFlightPerPrincipal` requests in
 * flight, and `wire.maxQueuedBytesPerPrincipal` bytes of answers its clients have not read (see
 * {@link OutputBudget}). A request over one of them gets `429` with `Retry-After` and a JSON-RPC
 * error whose `data.retryAfterMs` says the same (with the request's id when it has one), after
 * the refusal is in the audit log (`rate_limited`, rule `limit:<name>`).
 */
export class PrincipalBounds {
  private readonly sessions: PrincipalCounter;
  private readonly listens: PrincipalCounter;
  private readonly inFlight: PrincipalCounter;
  private readonly output: OutputBudget;

  constructor(private readonly options: PrincipalBoundsOptions) {
    const wire = options.wire ?? WireSchema.parse({});
    this.sessions = new PrincipalCounter(options.http.maxSessionsPerPrincipal);
    this.listens = new PrincipalCounter(options.http.maxListensPerPrincipal);
    this.inFlight = new PrincipalCounter(wire.maxInFlightPerPrincipal);
    this.output = new OutputBudget({
      max: wire.maxQueuedBytesPerPrincipal,
      onClose: (principal, queued) =>
        options.logger.warn({ principal, queued, limit: wire.maxQueuedBytesPerPrincipal }, 'http: response closed: the client is not reading its answers'),
    });
  }

  /** What each principal holds of each bound now (for metrics). */
  *use(): Generator<{ limit: string; principal: string; used: number }> {
    for (const [limit, counter] of [
      ['sessions', this.sessions],
      ['listens', this.listens],
      ['in-flight', this.inFlight],
    ] as const) {
      for (const [principal, used] of counter.entries()) yield { limit, principal, used };
    }
  }

  /** Follows `res` for its principal's unread bytes; true (after answering 429) when the principal is at that bound. */
  async refusedForOutput(req: IncomingMessage, res: ServerResponse, who: Who): Promise<boolean> {
    this.output.track(who.principal, res);
    if (!this.output.full(who.principal)) return false;
    await this.refuse(res, who, 'queued-bytes', `http ${req.method ?? '?'}`);
    return true;
  }

  /** Counts a request (not a listen) in flight until its response closes; true (after answering 429) when the principal is at the bound. */
  async refusedInFlight(req: IncomingMessage, res: ServerResponse, who: Who, body: unknown): Promise<boolean> {
    if (req.method !== 'POST') return false;
    const m = (typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {}) as { id?: unknown; method?: unknown };
    if (typeof m.method !== 'string' || (typeof m.id !== 'string' && typeof m.id !== 'number')) return false;
    if (m.method === 'subscriptions/listen') return false; // bounded as listens
    const release = this.inFlight.acquire(who.principal);
    if (release) {
      res.once('close', release);
      return false;
    }
    await this.refuse(res, who, 'in-flight', m.method, m.id);
    return true;
  }

  /** Takes one of the principal's sessions; undefined (after answering 429) when it holds its bound. */
  async session(res: ServerResponse, who: Who, id?: string | number): Promise<(() => void) | undefined> {
    const release = this.sessions.acquire(who.principal);
    if (!release) await this.refuse(res, who, 'sessions', 'initialize', id);
    return release;
  }

  /** Takes one of the principal's listens; undefined (after answering 429) when it holds its bound. */
  async listen(res: ServerResponse, who: Who): Promise<(() => void) | undefined> {
    const release = this.listens.acquire(who.principal);
    if (!release) await this.refuse(res, who, 'listens', 'subscriptions/listen');
    return release;
  }

  private async refuse(res: ServerResponse, who: Who, limit: PrincipalLimitName, method: string, id?: string | number): Promise<void> {
    const retryAfterS = RETRY_AFTER_S[limit];
    const caller: Caller = { principal: who.principal, roles: who.roles, session: 'http', transport: 'http' };
    this.options.logger.warn({ principal: who.principal, limit }, `http: request refused: ${MESSAGES[limit]}`);
    await this.options.proxy.gate.limited(caller, method, limit);
    if (res.headersSent || res.destroyed) return void res.destroy();
    const answer = errorAnswer(typeof id === 'string' || typeof id === 'number' ? id : null, JsonRpc.SERVER_ERROR, MESSAGES[limit], {
      retryAfterMs: retryAfterS * 1000,
    });
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(retryAfterS) }).end(JSON.stringify(answer));
  }
}
