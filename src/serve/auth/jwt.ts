// JWT bearer tokens verified locally with jose, against a JWKS URL, a PEM public key or a shared secret.
import { createPublicKey } from 'node:crypto';
import { createRemoteJWKSet, customFetch, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey, type KeyObject } from 'jose';
import type { JwtConfig } from '../../config/schema.js';
import type { Identity } from './identity.js';
import { VerdictCache } from './verdict-cache.js';
import { boundedJwksFetch, DEFAULT_MAX_JWKS_BYTES, type JwksFetch } from './jwks-fetch.js';

/** Tuning of the remote key set (`jwksUrl`); jose's defaults when absent. */
export interface JwksOptions {
  /** Least time between two refetches prompted by an unknown key id, in ms. Default: 30000. */
  cooldownMs?: number;
  /** How long a fetched key set is used before it is refetched, in ms. Default: 600000. */
  cacheMaxAgeMs?: number;
  /** Bound on one fetch of the key set (headers and body), in ms. Default: 5000. */
  timeoutMs?: number;
  /** Largest key set body read, in bytes; a larger one is refused unread (`ERR_JWKS_UNAVAILABLE`). Default: 1 MiB. */
  maxBytes?: number;
  /** The fetch under the bounds (tests). Default: the global fetch. */
  fetch?: JwksFetch;
}

/** Options of {@link createJwtVerifier}. */
export interface JwtVerifierOptions {
  /** The clock `exp`, `nbf` and `iat` are checked against. Default: the system clock. */
  now?: () => Date;
  /** Remote key set tuning (`jwksUrl` only). */
  jwks?: JwksOptions;
  /**
   * Most verified tokens remembered (by SHA-256, until their `exp`), so a token presented again is
   * not verified again; 0 verifies every time. Default: 4096.
   */
  cacheSize?: number;
}

/**
 * Why a token was refused: jose's error code (`ERR_JWT_EXPIRED`, `ERR_JOSE_ALG_NOT_ALLOWED`,
 * `ERR_JWS_SIGNATURE_VERIFICATION_FAILED`, `ERR_JWT_CLAIM_VALIDATION_FAILED` with the `claim`, ...),
 * `ERR_PRINCIPAL_CLAIM` or `ERR_ROLES_CLAIM` for claims of the wrong shape, or
 * `ERR_JWKS_UNAVAILABLE` when the key set could not be fetched (an operator's problem, not the caller's).
 */
export interface JwtRefusal {
  ok: false;
  code: string;
  /** The claim that failed validation, when one did. */
  claim?: string;
}

/** A verified token: who it names, what a session it opens is bound to, and until when. */
export interface JwtAccepted extends Identity {
  ok: true;
  /** Issuer plus subject (`jwt:["<iss>","<sub>"]`; the principal when there is no `sub`): what a session opened with it is bound to. */
  binding: string;
  /** The `exp` claim, in ms since the epoch. */
  expiresAt: number;
}

/** The outcome of verifying one token. Never carries the token. */
export type JwtVerdict = JwtAccepted | JwtRefusal;

/** Verifies one compact JWT. Never throws. */
export type JwtVerifier = (token: string) => Promise<JwtVerdict>;

/** Default bound on one JWKS fetch: 5 s (jose's default, stated here so it cannot drift). */
const DEFAULT_JWKS_TIMEOUT_MS = 5_000;

/** The key set could not be fetched or read (network, status, JSON): no fault of the token. */
class JwksUnavailable extends Error {}

/**
 * Compiles `auth.jwt` into a verifier. The signature must verify with the configured key under one
 * of `algorithms`; `exp` is required and must be in the future, `nbf` (when present) in the past,
 * `aud` must name the configured audience, and `iss` must equal `issuer` when that is set. The
 * principal is the `principalClaim` (a non-empty string); the roles are the `rolesClaim` (an array
 * of strings or a space-separated string, absent meaning none). A verified token is remembered by
 * its SHA-256 until its `exp` (`cacheSize`, LRU): presented again, it is not verified again.
 *
 * @example
 * const verify = createJwtVerifier(config.auth.jwt);
 * const verdict = await verify(token); // { ok: true, principal: 'alice', roles: ['eng'] }
 */
export function createJwtVerifier(config: JwtConfig, options: JwtVerifierOptions = {}): JwtVerifier {
  const key = keyOf(config, options.jwks ?? {});
  const verifyOptions = {
    algorithms: [...config.algorithms],
    audience: config.audience,
    ...(config.issuer === undefined ? {} : { issuer: config.issuer }),
    requiredClaims: ['exp'],
  };
  const cache = new VerdictCache<JwtAccepted>({ max: options.cacheSize ?? 4096, now: () => (options.now ? options.now().getTime() : Date.now()) });
  return async (token) => {
    const known = cache.get(token);
    if (known) return known;
    let payload: JWTPayload;
    try {
      const now = options.now?.();
      const opts = now === undefined ? verifyOptions : { ...verifyOptions, currentDate: now };
      // Two calls, one per jose overload (a key set function, or a key).
      ({ payload } = typeof key === 'function' ? await jwtVerify(token, key, opts) : await jwtVerify(token, key, opts));
    } catch (err) {
      return refusal(err);
    }
    const principal = payload[config.principalClaim];
    if (typeof principal !== 'string' || principal === '') return { ok: false, code: 'ERR_PRINCIPAL_CLAIM', claim: config.principalClaim };
    const roles = rolesOf(payload[config.rolesClaim]);
    if (roles === undefined) return { ok: false, code: 'ERR_ROLES_CLAIM', claim: config.rolesClaim };
    const subject = typeof payload.sub === 'string' && payload.sub !== '' ? payload.sub : principal;
    const accepted: JwtAccepted = {
      ok: true,
      principal,
      roles: Object.freeze(roles),
      binding: `jwt:${JSON.stringify([payload.iss ?? '', subject])}`,
      expiresAt: payload.exp! * 1000, // required, and checked by jwtVerify
    };
    cache.set(token, accepted, accepted.expiresAt);
    return accepted;
  };
}

/** The verification key: a remote key set (wrapped to tell fetch failures apart), a public key, or the secret's bytes. */
function keyOf(config: JwtConfig, jwks: JwksOptions): JWTVerifyGetKey | KeyObject | Uint8Array {
  if (config.jwksUrl !== undefined) {
    const remote = createRemoteJWKSet(new URL(config.jwksUrl), {
      ...(jwks.cooldownMs === undefined ? {} : { cooldownDuration: jwks.cooldownMs }),
      ...(jwks.cacheMaxAgeMs === undefined ? {} : { cacheMaxAge: jwks.cacheMaxAgeMs }),
      timeoutDuration: jwks.timeoutMs ?? DEFAULT_JWKS_TIMEOUT_MS,
      [customFetch]: boundedJwksFetch(jwks.maxBytes ?? DEFAULT_MAX_JWKS_BYTES, jwks.fetch),
    });
    return async (header, token) => {
      try {
        return await remote(header, token);
      } catch (err) {
        // No key for this kid/alg is the token's fault; anything else is the key set's.
        if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) throw err;
        throw new JwksUnavailable('key set unavailable', { cause: err });
      }
    };
  }
  if (config.publicKey !== undefined) return createPublicKey(config.publicKey);
  return new TextEncoder().encode(config.secret);
}

function refusal(err: unknown): JwtRefusal {
  if (err instanceof JwksUnavailable) return { ok: false, code: 'ERR_JWKS_UNAVAILABLE' };
  if (err instanceof errors.JWTClaimValidationFailed || err instanceof errors.JWTExpired) return { ok: false, code: err.code, claim: err.claim };
  if (err instanceof errors.JOSEError) return { ok: false, code: err.code };
  return { ok: false, code: 'ERR_JWT_UNVERIFIABLE' }; // e.g. a key of another type than the token's alg
}

/** Roles from the claim's value: an array of strings or a space-separated string; undefined when malformed. */
function rolesOf(value: unknown): string[] | undefined {
  if (value === undefined) return [];
  if (typeof value === 'string') return value.split(' ').filter((r) => r !== '');
  if (Array.isArray(value) && value.every((r): r is string => typeof r === 'string' && r !== '')) return [...value];
  return undefined;
}
