// A credential accepted for one request: who it names, what it binds a session to, until when; the token itself stays out of logs.
import type { Identity } from './identity.js';

/** How a request authenticated: a configured static token, a JWT, or no `auth` block at all. */
export type CredentialKind = 'static' | 'jwt' | 'anonymous';

/**
 * One accepted credential. `binding` names what a session opened with it is bound to: the token
 * entry for a static token (`static:<sha256>`), issuer plus subject for a JWT (`jwt:["iss","sub"]`),
 * `anonymous` without auth. Two credentials of different kinds never share a binding, so a JWT whose
 * `sub` equals a static principal's name is a stranger to that principal's sessions. The token is
 * kept (a reload re-verifies it) in a private field: it is not serialised, logged or enumerable.
 */
export class Credential {
  readonly #token: string;

  constructor(
    token: string,
    readonly kind: CredentialKind,
    readonly binding: string,
    /** Who the credential names, as resolved when it was checked. */
    readonly identity: Identity,
    /** When it stops being valid (JWT `exp`), in ms since the epoch; absent: until a reload removes it. */
    readonly expiresAt?: number,
  ) {
    this.#token = token;
  }

  /** The bearer token itself: only for re-verifying it (a reload). Never log it. */
  reveal(): string {
    return this.#token;
  }

  /** What a log or JSON may show: never the token. */
  toJSON(): Record<string, unknown> {
    return { kind: this.kind, principal: this.identity.principal };
  }
}

/** The credential of every request when no `auth` block is configured. */
export const ANONYMOUS = new Credential('', 'anonymous', 'anonymous', { principal: 'anonymous', roles: [] });
