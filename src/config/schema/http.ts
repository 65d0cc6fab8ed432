// The `http` block: the Streamable HTTP endpoint. Pure.
import { z } from 'zod';
import { positiveInt } from './fields.js';

/** The Streamable HTTP endpoint (`serve --http`, or this block). */
export const HttpSchema = z.strictObject({
  /** Address to bind. A non-loopback address needs an `auth` block (or `--allow-unauthenticated`). Default: `127.0.0.1`. */
  host: z.string().min(1).default('127.0.0.1'),
  /** TCP port; 0 takes a free one (the bound URL is logged as `listening`). Default: 7330. */
  port: z.number().int().min(0).max(65535).default(7330),
  /** Path of the MCP endpoint. Default: `/mcp`. */
  // eslint-disable-next-line no-useless-escape -- the escaped slash is in the published JSON schema's pattern; keep it stable
  path: z.string().regex(/^\/[A-Za-z0-9._~\/-]*$/, 'must start with "/" and hold only URL path characters').default('/mcp'),
  /** Exact origins (`https://app.example.com`) allowed besides same-host ones on loopback. Default: none. */
  allowedOrigins: z.array(z.string().min(1)).default([]),
  /** Extra `Host` values (`host:port`) accepted when bound to loopback, e.g. behind a reverse proxy. Default: none. */
  allowedHosts: z.array(z.string().min(1)).default([]),
  /** A 2025-11-25 session with no request and no open stream for this long expires, releasing its subscriptions. Default: 1800000 (30 min). */
  sessionIdleMs: positiveInt().default(30 * 60 * 1000),
  /** Most live 2025-11-25 sessions, and (separately) most open 2026-07-28 listen streams; one more gets 503. Default: 1000. */
  maxSessions: positiveInt().default(1000),
  /**
   * Most live 2025-11-25 sessions one principal may hold; one more gets 429 with `Retry-After`
   * (audited as `limited`). A refused initialize (401, 406, 415, 429) takes no session. Default: 100.
   */
  maxSessionsPerPrincipal: positiveInt().default(100),
  /** Most open 2026-07-28 listen streams one principal may hold; one more gets 429 with `Retry-After`. Default: 100. */
  maxListensPerPrincipal: positiveInt().default(100),
  /** Largest request body, in bytes; larger gets 413. Default: 4 MiB. */
  maxBodyBytes: positiveInt().default(4 * 1024 * 1024),
  /** Time to receive a request's headers (slowloris bound). Default: 10000. */
  headersTimeoutMs: positiveInt().default(10_000),
  /** Time to receive a whole request, body included. Default: 30000. */
  requestTimeoutMs: positiveInt().default(30_000),
  /** How long an idle keep-alive connection stays open. Default: 5000. */
  keepAliveTimeoutMs: positiveInt().default(5_000),
});

/** The `http` block after defaults. */
export type HttpConfig = z.output<typeof HttpSchema>;
