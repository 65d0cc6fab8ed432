// The caller of one HTTP request, carried to the facade's handlers on the SDK's `authInfo`.
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { Caller } from '../caller.js';

/** Only AuthInfo objects made here name a caller: nothing a client sends can. */
const callers = new WeakMap<AuthInfo, Caller>();

/**
 * The `authInfo` to hand the SDK with one request (as a transport's message extra, or the 2026
 * handler's request option), so the handler acts for this request's caller, not the session's.
 *
 * @example transport.onmessage?.(message, { authInfo: authInfoFor(caller) })
 */
export function authInfoFor(caller: Caller): AuthInfo {
  const authInfo: AuthInfo = { token: '', clientId: caller.principal, scopes: [...caller.roles] };
  callers.set(authInfo, caller);
  return authInfo;
}

/** The caller an `authInfo` from {@link authInfoFor} stands for; undefined for any other. */
export function callerOf(authInfo: AuthInfo | undefined): Caller | undefined {
  return authInfo === undefined ? undefined : callers.get(authInfo);
}
