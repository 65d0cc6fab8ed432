// The `metrics` block (the Prometheus endpoint) and `accessLog`: what the gateway tells its operators. Pure.
import { z } from 'zod';
import { BEARER_TOKEN_PATTERN, hashToken } from './auth.js';

/** `host:port` (IPv6 hosts in brackets: `[::1]:9464`). */
const LISTEN_PATTERN = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/;

/** The Prometheus endpoint. */
export const MetricsSchema = z
  .strictObject({
    /** Set to false to collect no metrics at all (and serve no `/metrics`). Default: true. */
    enabled: z.boolean().default(true),
    /**
     * A separate address (`host:port`, port 0 for a free one) serving `/metrics`, `/healthz` and
     * `/readyz`, for stdio deployments or a scrape port apart from the MCP one. Default: none
     * (`/metrics` is served on the `http` listener only).
     */
    listen: z.string().regex(LISTEN_PATTERN, 'must be host:port, e.g. 127.0.0.1:9464').optional(),
    /** Path of the exposition. Default: `/metrics`. */
    path: z
      .string()
      // eslint-disable-next-line no-useless-escape -- kept so the generated JSON Schema's pattern stays as published
      .regex(/^\/[A-Za-z0-9._~\/-]*$/, 'must start with "/"')
      .default('/metrics'),
    /**
     * Whether a scrape must present `Authorization: Bearer <metrics token>`: `auto` requires it
     * unless the listener serving `/metrics` is bound to a loopback address. Required without a
     * token configured, every scrape gets 401. Default: `auto`.
     */
    requireToken: z.union([z.literal('auto'), z.boolean()]).default('auto'),
    /** The scrape token itself, normally `${ENV_VAR}` (at least 16 characters; only its hash is kept). Give this or `sha256`. Default: none. */
    token: z.string().min(16, 'too short: at least 16 characters').regex(BEARER_TOKEN_PATTERN, 'not a bearer token').optional(),
    /** Lowercase hex SHA-256 of the scrape token (as `mcp-federate token new` prints it). Default: none. */
    sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits').optional(),
    /** Label rate-limit refusals and per-principal use with the principal's name (high cardinality). Default: false. */
    principalLabel: z.boolean().default(false),
    /** Also export the default process and Node.js metrics (`process_*`, `nodejs_*`). Default: true. */
    processMetrics: z.boolean().default(true),
  })
  .transform((m, ctx) => {
    if (m.token !== undefined && m.sha256 !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['token'], message: 'give "token" or "sha256", not both' });
      return z.NEVER;
    }
    const { token, sha256, ...rest } = m;
    const digest = sha256 ?? (token === undefined ? undefined : hashToken(token));
    return { ...rest, ...(digest === undefined ? {} : { sha256: digest }) };
  });

/** The `metrics` block after defaults (a plain token is replaced by its hash). */
export type MetricsConfig = z.output<typeof MetricsSchema>;
