// The caller of one HTTP request, from its own credential, kept current while the request is in flight.
import type { ServerResponse } from 'node:http';
import type { Caller } from '../../caller.js';
import type { AuthSuccess } from '../auth/authenticator.js';
import type { LiveIdentities } from './live-identities.js';

/**
 * The caller of one request, from its own credential; kept current while the request is in
 * flight (a reload that changes or removes its credential changes or revokes it, and the gate
 * decides its answer again). Released when the response closes.
 *
 * @example const caller = requestCaller(identities, who, `r${++requests}`, res);
 */
export function requestCaller(identities: LiveIdentities, who: AuthSuccess, session: string, res: ServerResponse): Caller {
  const caller = { principal: who.principal, roles: who.roles, session, transport: 'http' as const, revoked: false };
  const held = identities.hold(
    who.credential,
    {
      refresh: (c) => Object.assign(caller, c.identity),
      revoke: () => void (caller.revoked = true),
    },
    { expires: false },
  );
  res.once('close', () => held.release());
  return caller;
}
