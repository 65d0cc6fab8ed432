// The `redis` block: scale-out, N replicas sharing rate limits, change events and reloads through one Redis. Pure.
import { z } from 'zod';
import { positiveInt } from './fields.js';

/** An environment variable's NAME (never its value). */
const envName = () => z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name');

/**
 * Scale-out: several replicas of the gateway behind a load balancer share state through one Redis
 * (node-redis). Without this block nothing is shared, and nothing of it is loaded.
 */
export const RedisSchema = z.strictObject({
  /**
   * The Redis server: `redis://host:port[/db]`, or `rediss://…` for TLS. Credentials in the URL are
   * accepted but better given as `usernameEnv`/`passwordEnv`. Default: `redis://127.0.0.1:6379`.
   */
  url: z
    .string()
    .regex(/^rediss?:\/\/./, 'expected a redis:// or rediss:// URL')
    .default('redis://127.0.0.1:6379'),
  /** Prefix of every key and channel this gateway uses, so several clusters can share one Redis. Default: `mcp-federate:`. */
  keyPrefix: z.string().max(200).default('mcp-federate:'),
  /** Connect with TLS even when the URL says `redis://` (a `rediss://` URL always does). Default: false. */
  tls: z.boolean().default(false),
  /** With TLS: a PEM file of the CA that signed the server's certificate, relative to the config file. Default: the system's CAs. */
  caFile: z.string().min(1).optional(),
  /** The NAME of the environment variable holding the ACL user name (never the name itself). Default: none (the URL's, or `default`). */
  usernameEnv: envName().optional(),
  /** The NAME of the environment variable holding the password (never the password itself). Default: none (the URL's, or no AUTH). */
  passwordEnv: envName().optional(),
  /**
   * How many replicas share the limits. While Redis is unreachable each replica falls back to its
   * own buckets with every limit (rate and burst) divided by this, so the cluster still enforces
   * about the configured total. Default: 1.
   */
  replicas: positiveInt().max(1000).default(1),
  /**
   * This replica's id: written as `chain` in every audit record (one hash chain per replica), and
   * named in the log. Use `${VAR}` to give each replica its own from one file. Default: the host name.
   */
  chain: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'expected 1-64 letters, digits, ".", "_" or "-"')
    .optional(),
  /**
   * A pub/sub channel (after `keyPrefix`) on which a SIGHUP is published: every replica listening on
   * it reloads its own config file, so a policy change reaches all of them. Default: none (a SIGHUP
   * reloads only the replica it was sent to).
   */
  reloadChannel: z.string().min(1).max(200).optional(),
  /**
   * A change of one URI heard again within this many milliseconds (several replicas hold the same
   * upstream subscription and each hears it) is delivered once: the repeats only invalidate the
   * cache. Default: 500.
   */
  dedupeMs: z.number().int().min(0).max(60_000).default(500),
  /**
   * Longest wait for one rate-limit round trip to Redis; past it the read is decided by the local
   * fallback bucket and counted as a fallback. Default: 250.
   */
  timeoutMs: positiveInt().max(10_000).default(250),
  /**
   * Leases of rate-limit tokens. A replica takes a batch of tokens from a shared bucket in one
   * round trip and serves limited requests from it with none, fetching the next batch ahead. The
   * replicas together hold at most the tokens the bucket refills in this many milliseconds (and a
   * tenth of its burst): that is the most the cluster's total can be off by at a moment. A lease
   * unused this long is given back. A limit refilling fewer than 2 tokens per replica in it is taken
   * one round trip per request, as is any bucket nearly empty. 0: no leases. Default: 250.
   */
  leaseMs: z.number().int().min(0).max(60_000).default(250),
});

/** The validated `redis` block. */
export type RedisConfig = z.output<typeof RedisSchema>;
