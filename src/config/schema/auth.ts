// Who callers are: the `auth` block (static bearer tokens, JWTs) and the `stdio` caller. Pure.
import * as crypto from 'node:crypto';
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import os from 'node:os';
import { z } from 'zod';

/** A bearer token as RFC 6750 lets it travel in `Authorization: Bearer <token>` (its `b64token`). */
export const BEARER_TOKEN_PATTERN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** Lowercase hex SHA-256 of a token's UTF-8 bytes: what `auth.tokens[].sha256` holds. */
export const hashToken: (token: string) => string =
  // Node's one-shot `crypto.hash` where it exists (20.12 and later; a third of the CPU of a `Hash`
  // object, and an HTTP request hashes its token), else `createHash`. The same digest either way.
  typeof crypto.hash === 'function' ? (token) => crypto.hash('sha256', token, 'hex') : (token) => createHash('sha256').update(token, 'utf8').digest('hex');

const principalName = () => z.string().min(1, 'must not be empty');
const roleName = () => z.string().min(1, 'must not be empty');

/** One static bearer token: the principal it stands for and that principal's roles. Only its hash is kept. */
export const StaticTokenSchema = z
  .strictObject({
    /** The principal a request presenting this token acts as. Required. */
    principal: principalName(),
    /** Roles of that principal, for policy. Default: []. */
    roles: z.array(roleName()).default([]),
    /**
     * Lowercase hex SHA-256 of the token's UTF-8 bytes, as `mcp-federate token new` prints it.
     * Give this or `token`, not both. Default: none.
     */
    sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits (the SHA-256 of the token)').optional(),
    /**
     * The token itself, normally `${ENV_VAR}`: at least 16 characters of RFC 6750's token alphabet
     * (letters, digits, `-._~+/`, then `=` padding). Hashed when the config is loaded; the plain
     * token is not kept. Give this or `sha256`, not both. Default: none.
     */
    token: z
      .string()
      .min(16, 'too short: at least 16 characters')
      .regex(BEARER_TOKEN_PATTERN, 'not a bearer token: letters, digits and -._~+/ only, then "=" padding (no "Bearer " prefix)')
      .optional(),
  })
  .transform((t, ctx) => {
    if ((t.sha256 === undefined) === (t.token === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'give exactly one of "sha256" or "token"' });
      return z.NEVER;
    }
    return { principal: t.principal, roles: t.roles, sha256: t.sha256 ?? hashToken(t.token!) };
  });

/** JWS algorithms verified with a public key (`jwksUrl` or `publicKey`): the default for those. */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
/** JWS algorithms verified with a shared `secret`, with the least secret length each needs (RFC 7518 §3.2). */
export const HMAC_ALGORITHMS = { HS256: 32, HS384: 48, HS512: 64 } as const;
/** A JWS algorithm the verifier accepts in `auth.jwt.algorithms`. */
export type JwtAlgorithm = (typeof ASYMMETRIC_ALGORITHMS)[number] | keyof typeof HMAC_ALGORITHMS;

const isHmac = (alg: string): alg is keyof typeof HMAC_ALGORITHMS => Object.hasOwn(HMAC_ALGORITHMS, alg);
const isAsymmetric = (alg: string): boolean => (ASYMMETRIC_ALGORITHMS as readonly string[]).includes(alg);

/** Hosts a `jwksUrl` may be fetched from over plain http (anything else needs https). */
const PLAIN_HTTP_JWKS_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** JWT bearer tokens, verified locally against one key source. */
export const JwtSchema = z
  .strictObject({
    /**
     * URL of the issuer's JSON Web Key Set (https; plain http only for localhost). Keys are cached
     * and refetched when a token names a key id the cached set lacks. One key source is required:
     * `jwksUrl`, `publicKey` or `secret`.
     */
    jwksUrl: z
      .url({ protocol: /^https?$/, error: 'Invalid URL' })
      .refine((u) => {
        if (!URL.canParse(u)) return true; // refinements run even when the URL check failed
        const url = new URL(u);
        return url.protocol === 'https:' || PLAIN_HTTP_JWKS_HOSTS.has(url.hostname);
      }, 'must be https (plain http only for localhost, 127.0.0.1 or [::1])')
      .optional(),
    /** The issuer's public key as PEM (`-----BEGIN PUBLIC KEY-----`, SPKI). Never a private key. */
    publicKey: z.string().min(1).optional(),
    /** A shared HMAC secret (normally `${ENV_VAR}`): at least 32 bytes for HS256, 48 for HS384, 64 for HS512. */
    secret: z.string().min(1).optional(),
    /** The required `iss` claim; also the authorization server in the protected resource metadata. Default: not checked. */
    issuer: z.string().min(1).optional(),
    /** The `aud` claim a token must carry (one of these, when a list). Required. */
    audience: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
    /** Claim holding the principal; it must be a non-empty string. Default: "sub". */
    principalClaim: z.string().min(1).default('sub'),
    /**
     * Claim holding the roles: an array of strings or one space-separated string; absent means no
     * roles, anything else refuses the token. A claim name, not a path. Default: "roles".
     */
    rolesClaim: z.string().min(1).default('roles'),
    /**
     * Accepted `alg` values. Default: RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384,
     * ES512 and EdDSA with `jwksUrl` or `publicKey`; HS256 with `secret`. `none` is always refused,
     * HS* only with `secret`, the others only with a public key.
     */
    algorithms: z.array(z.string()).min(1).optional(),
  })
  .transform((j, ctx) => {
    const sources = (['jwksUrl', 'publicKey', 'secret'] as const).filter((k) => j[k] !== undefined);
    if (sources.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        message: sources.length === 0 ? 'give one key source: "jwksUrl", "publicKey" or "secret"' : `give one key source, not ${sources.map((s) => `"${s}"`).join(' and ')}`,
      });
      return z.NEVER;
    }
    const withSecret = j.secret !== undefined;
    if (j.publicKey !== undefined && !isPublicKeyPem(j.publicKey, ctx)) return z.NEVER;
    const algorithms = (j.algorithms ?? (withSecret ? ['HS256'] : [...ASYMMETRIC_ALGORITHMS])) as JwtAlgorithm[];
    let ok = true;
    algorithms.forEach((alg, i) => {
      const problem =
        alg.toLowerCase() === 'none'
          ? '"none" is refused: unsigned tokens are never accepted'
          : !isHmac(alg) && !isAsymmetric(alg)
            ? `unknown algorithm "${alg}" (expected one of ${[...Object.keys(HMAC_ALGORITHMS), ...ASYMMETRIC_ALGORITHMS].join(', ')})`
            : isHmac(alg) && !withSecret
              ? `${alg} needs a shared "secret"; with a public key anyone holding that key could sign tokens`
              : !isHmac(alg) && withSecret
                ? `${alg} needs "jwksUrl" or "publicKey", not a "secret"`
                : isHmac(alg) && Buffer.byteLength(j.secret!, 'utf8') < HMAC_ALGORITHMS[alg]
                  ? `${alg} needs a secret of at least ${HMAC_ALGORITHMS[alg]} bytes`
                  : undefined;
      if (problem !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['algorithms', i], message: problem });
        ok = false;
      }
    });
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set by the callback above
    if (!ok) return z.NEVER;
    const { algorithms: _given, ...rest } = j;
    return { ...rest, algorithms: [...new Set(algorithms)] };
  });

/** True when `pem` is a public key Node can read; otherwise reports why under `publicKey`. */
function isPublicKeyPem(pem: string, ctx: z.RefinementCtx): boolean {
  if (pem.includes('PRIVATE KEY-----')) {
    ctx.addIssue({ code: 'custom', path: ['publicKey'], message: 'is a private key: give the public key (-----BEGIN PUBLIC KEY-----)' });
    return false;
  }
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch {
    ctx.addIssue({ code: 'custom', path: ['publicKey'], message: 'not a PEM public key (-----BEGIN PUBLIC KEY-----)' });
    return false;
  }
  return key.type === 'public';
}

/** Who may call the HTTP endpoint: static bearer tokens, JWTs, or both (either one authenticates). */
export const AuthSchema = z
  .strictObject({
    /** Static bearer tokens, each with its principal and roles. Default: []. */
    tokens: z.array(StaticTokenSchema).default([]),
    /** JWT bearer tokens. Default: none. */
    jwt: JwtSchema.optional(),
  })
  .superRefine((a, ctx) => {
    if (a.tokens.length === 0 && a.jwt === undefined) {
      ctx.addIssue({ code: 'custom', message: 'give "tokens", "jwt" or both' });
    }
    const first = new Map<string, number>();
    a.tokens.forEach((t, i) => {
      const j = first.get(t.sha256);
      if (j !== undefined) ctx.addIssue({ code: 'custom', path: ['tokens', i], message: `the same token as auth.tokens[${j}]` });
      else first.set(t.sha256, i);
    });
  });

/** The principal of the stdio session when none is configured: the OS user name, else "stdio". */
export function defaultStdioPrincipal(): string {
  try {
    const name = os.userInfo().username;
    return name === '' ? 'stdio' : name;
  } catch {
    return 'stdio'; // no passwd entry (containers with an arbitrary uid)
  }
}

/** Who the stdio session is: there is no token on stdio, so the caller comes from here. */
export const StdioCallerSchema = z.strictObject({
  /** The principal of the stdio session. Default: the OS user name (`os.userInfo()`), or "stdio" when there is none. */
  principal: principalName().default(defaultStdioPrincipal),
  /** Roles of that principal. Default: []. */
  roles: z.array(roleName()).default([]),
});

/** The validated `auth` block: static tokens reduced to their hashes, JWT algorithms filled in. */
export type AuthConfig = z.output<typeof AuthSchema>;
/** One validated static token entry. */
export type StaticTokenConfig = z.output<typeof StaticTokenSchema>;
/** The validated `auth.jwt` block. */
export type JwtConfig = z.output<typeof JwtSchema>;
/** The validated `stdio` block. */
export type StdioCallerConfig = z.output<typeof StdioCallerSchema>;
