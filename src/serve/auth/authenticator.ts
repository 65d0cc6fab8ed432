// The HTTP endpoint's bearer check: reads Authorization, tries the static tokens then the JWT verifier.
import { BEARER_TOKEN_PATTERN, hashToken, type AuthConfig } from '../../config/schema.js';
import type { Logger } from '../../logger.js';
import { Credential } from './credential.js';
import type { Identity } from './identity.js';
import { createJwtVerifier, type JwtVerifierOptions } from './jwt.js';
import { createStaticTokens } from './static-tokens.js';
import { AuthFailureLog } from './failure-log.js';

/** Why a request was not authenticated: no `Authorization` at all, or one that does not authenticate. */
export type AuthFailure = 'missing' | 'invalid';

/** An authenticated request: who it is (as resolved now) and the credential that says so. */
export type AuthSuccess = { ok: true; credential: Credential } & Identity;

/** The outcome of {@link Authenticator.authenticate}. */
export type AuthResult = AuthSuccess | { ok: false; reason: AuthFailure };

/** Checks one request's `Authorization` header. */
export interface Authenticator {
  /**
   * `authorization` is the header's value, or every value when the HTTP layer collected them from
   * `rawHeaders` (Node keeps only the first of duplicate `Authorization` headers in `headers`).
   * Absent (or an empty list) is `missing`; two or more values, an empty value, a scheme other than
   * `Bearer`, or a token that no static entry or JWT verification accepts is `invalid`.
   * Never rejects; never logs the token.
   */
  authenticate(authorization: string | readonly string[] | undefined): Promise<AuthResult>;
  /**
   * Resolves a credential accepted earlier (by this or a previous authenticator) against this one,
   * as a reload must: a static token by the current table, synchronously (so no answer can slip
   * out between a reload and its effect); a JWT by verifying it again (its claims are what they
   * were, the keys and rules may not be). Never rejects; never logs the token.
   */
  recheck(credential: Credential): AuthResult | Promise<AuthResult>;
}

/** Dependencies of {@link createAuthenticator}: where refusals are counted and logged, the JWT clock and key set tuning. */
export interface AuthenticatorDeps extends JwtVerifierOptions {
  logger?: Logger;
  /** Counts refusals and logs them at warn, rate limited. Default: a fresh one on `logger`. */
  failures?: AuthFailureLog;
}

/** Longest `Authorization` value considered; a longer one is `invalid` without being hashed or parsed. */
export const MAX_AUTHORIZATION_LENGTH = 8192;

const BEARER = new RegExp(`^Bearer +(${BEARER_TOKEN_PATTERN.source.slice(1, -1)})$`, 'i');

/**
 * Compiles the `auth` block into an authenticator. Static tokens and JWTs may both be configured:
 * a token either accepts authenticates. Holds nothing that needs closing (jose's key set cache is
 * plain memory, its fetches are bounded by a timeout).
 *
 * @example
 * const auth = createAuthenticator(config.auth, { logger });
 * const result = await auth.authenticate(req.headers.authorization);
 * if (!result.ok) res.writeHead(401, { 'www-authenticate': wwwAuthenticate(metadataUrl, result.reason) }).end();
 */
export function createAuthenticator(auth: AuthConfig, deps: AuthenticatorDeps = {}): Authenticator {
  const staticTokens = createStaticTokens(auth.tokens);
  const jwt = auth.jwt === undefined ? undefined : createJwtVerifier(auth.jwt, deps);
  const failures = deps.failures ?? new AuthFailureLog({ logger: deps.logger });
  const refuse = ({ code, ...details }: { code: string } & Record<string, unknown>): AuthResult => {
    failures.record(code, details);
    return { ok: false, reason: 'invalid' };
  };
  const asStatic = (token: string): AuthResult | undefined => {
    const hash = hashToken(token); // once: the lookup and the credential's binding
    const known = staticTokens(token, hash);
    if (known === undefined) return undefined;
    // Bound to the token entry (its hash), not to the principal's name.
    return { ok: true, ...known, credential: new Credential(token, 'static', `static:${hash}`, known) };
  };
  const asJwt = async (token: string): Promise<AuthResult> => {
    if (jwt === undefined) return refuse({ code: 'ERR_UNKNOWN_TOKEN' });
    const verdict = await jwt(token);
    if (verdict.ok) {
      const identity = { principal: verdict.principal, roles: verdict.roles };
      return { ok: true, ...identity, credential: new Credential(token, 'jwt', verdict.binding, identity, verdict.expiresAt) };
    }
    const { ok: _ok, ...details } = verdict;
    if (verdict.code === 'ERR_JWKS_UNAVAILABLE') {
      failures.record(verdict.code, {}, 'JWT key set unavailable: bearer tokens cannot be verified');
      return { ok: false, reason: 'invalid' };
    }
    return refuse(details);
  };
  return {
    async authenticate(authorization) {
      const token = bearerToken(authorization);
      if (token === 'missing') return { ok: false, reason: 'missing' };
      if (token === 'invalid') return refuse({ code: 'ERR_AUTHORIZATION_HEADER' });
      return asStatic(token) ?? asJwt(token);
    },
    recheck(credential) {
      if (credential.kind === 'anonymous') return { ok: false, reason: 'missing' };
      const token = credential.reveal();
      if (credential.kind === 'static') return asStatic(token) ?? { ok: false, reason: 'invalid' };
      return asJwt(token);
    },
  };
}

/** The token of `Authorization: Bearer <token>`, or why there is none. */
// eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents -- names the failures a caller must test for
function bearerToken(authorization: string | readonly string[] | undefined): string | AuthFailure {
  if (authorization === undefined) return 'missing';
  let value: string;
  if (typeof authorization === 'string') value = authorization;
  else if (authorization.length === 0) return 'missing';
  else if (authorization.length > 1) return 'invalid';
  else value = authorization[0]!;
  if (value.length > MAX_AUTHORIZATION_LENGTH) return 'invalid';
  return BEARER.exec(value)?.[1] ?? 'invalid';
}

/**
 * The `WWW-Authenticate` value of a 401: points the client at the protected resource metadata
 * (RFC 9728 §5.1) when there is an authorization server to name (`undefined`: none, as with static
 * tokens only, so clients do not start an OAuth flow that cannot succeed) and, when a token was
 * presented but refused, says `error="invalid_token"` (RFC 6750 §3.1; a request without credentials
 * gets no error code).
 *
 * @example
 * wwwAuthenticate('https://h/.well-known/oauth-protected-resource/mcp', 'invalid')
 * // 'Bearer resource_metadata="https://h/.well-known/oauth-protected-resource/mcp", error="invalid_token"'
 */
export function wwwAuthenticate(resourceMetadataUrl: string | undefined, reason: AuthFailure): string {
  const error = reason === 'invalid' ? 'error="invalid_token"' : '';
  if (resourceMetadataUrl === undefined) return error ? `Bearer ${error}` : 'Bearer';
  const quoted = resourceMetadataUrl.replace(/[\\"]/g, (c) => `\\${c}`);
  return `Bearer resource_metadata="${quoted}"${error ? `, ${error}` : ''}`;
}
