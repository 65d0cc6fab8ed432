// What a verified credential says about its holder: the principal and roles a Caller is built from.
import type { Caller } from '../../caller.js';

/** The principal and roles a verified bearer token stands for (the session and transport come from the HTTP layer). */
export type Identity = Pick<Caller, 'principal' | 'roles'>;
