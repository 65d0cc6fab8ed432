// Static bearer tokens: the presented token's SHA-256 compared in constant time with every configured hash.
import { timingSafeEqual } from 'node:crypto';
import { hashToken, type StaticTokenConfig } from '../../config/schema.js';
import type { Identity } from './identity.js';

export { hashToken };

/**
 * Looks a presented token up among the configured ones; undefined when it is none of them. `hash`
 * is the token's {@link hashToken} when the caller has it already (it is made otherwise).
 */
export type StaticTokenVerifier = (token: string, hash?: string) => Identity | undefined;

/**
 * Compiles the configured entries into a verifier. Every call hashes the presented token once and
 * compares the digest with every entry's with `timingSafeEqual`, without stopping at a match, so
 * neither the time taken nor anything else tells which entry (or how much of one) matched.
 *
 * @example
 * const verify = createStaticTokens([{ principal: 'alice', roles: ['eng'], sha256: hashToken(token) }]);
 * verify(token); // { principal: 'alice', roles: ['eng'] }
 */
export function createStaticTokens(entries: readonly StaticTokenConfig[]): StaticTokenVerifier {
  const table = entries.map((e) => ({
    digest: Buffer.from(e.sha256, 'hex'),
    identity: { principal: e.principal, roles: Object.freeze([...e.roles]) } satisfies Identity,
  }));
  return (token, hash = hashToken(token)) => {
    const digest = Buffer.from(hash, 'hex');
    let found: Identity | undefined;
    for (const entry of table) {
      const same = timingSafeEqual(digest, entry.digest); // both 32 bytes: validated at config load
      if (same && found === undefined) found = entry.identity;
    }
    return found;
  };
}
