// Held credentials resolved again on reload and revoked at expiry, on an injected clock, with real authenticators.
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { AuthSchema } from '../../src/config/schema.js';
import { createAuthenticator, type AuthSuccess } from '../../src/serve/auth/authenticator.js';
import { ANONYMOUS, type Credential } from '../../src/serve/auth/credential.js';
import { LiveIdentities, type CredentialHolder, type RevokeReason } from '../../src/serve/http/live-identities.js';

const T = Date.UTC(2030, 0, 1);
const SECRET = 'a-shared-secret-of-at-least-32-bytes!';
const TOKEN = 'alice-token-0123456789abcdef';
const tableOf = (roles: string[] | undefined, secret = SECRET) =>
  AuthSchema.parse({ tokens: roles ? [{ principal: 'alice', roles, token: TOKEN }] : [], jwt: { secret, audience: 'mcp' } });

/** A holder that records what happened to it. */
function recorder(): CredentialHolder & { events: string[] } {
  const events: string[] = [];
  return {
    events,
    refresh: (c) => void events.push(`refresh ${c.identity.principal} [${c.identity.roles.join(',')}]`),
    revoke: (why: RevokeReason) => void events.push(`revoke ${why}`),
  };
}

async function setup() {
  let now = T;
  const clock = { now: () => now, set: (ms: number) => void (now = ms) };
  const deps = { now: () => new Date(clock.now()) };
  const auth = createAuthenticator(tableOf(['eng']), deps);
  const ok = async (token: string): Promise<Credential> => ((await auth.authenticate(`Bearer ${token}`)) as AuthSuccess).credential;
  const jwt = (exp: number, sub = 'erin') =>
    new SignJWT({ sub, aud: 'mcp', exp: exp / 1000 }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(SECRET));
  return { clock, deps, ok, jwt, identities: new LiveIdentities({ now: clock.now }) };
}

describe('LiveIdentities', () => {
  it('a reload refreshes a held static token with its roles as now configured, and revokes it once the table drops it', async () => {
    const { identities, ok, deps } = await setup();
    const holder = recorder();
    identities.hold(await ok(TOKEN), holder);
    await identities.recheck(createAuthenticator(tableOf([]), deps), false);
    expect(holder.events).toEqual(['refresh alice []']);
    await identities.recheck(createAuthenticator(tableOf(undefined), deps), false);
    expect(holder.events).toEqual(['refresh alice []', 'revoke removed']);
    expect(identities.size).toBe(0);
    await identities.recheck(createAuthenticator(tableOf(['eng']), deps), false); // revoked once, forgotten
    expect(holder.events).toHaveLength(2);
  });

  it('a released holder hears nothing; no auth at all keeps anonymous and revokes every token', async () => {
    const { identities, ok } = await setup();
    const gone = recorder();
    identities.hold(await ok(TOKEN), gone).release();
    const anon = recorder();
    identities.hold(ANONYMOUS, anon);
    const token = recorder();
    identities.hold(await ok(TOKEN), token);
    await identities.recheck(undefined, true);
    expect([gone.events, anon.events, token.events]).toEqual([[], ['refresh anonymous []'], ['revoke removed']]);
  });

  it('JWTs are verified again only when the jwt block changed; a result for a credential replaced meanwhile is not applied', async () => {
    const { identities, ok, jwt, deps } = await setup();
    const holder = recorder();
    const held = identities.hold(await ok(await jwt(T + 60_000)), holder);
    const rotated = createAuthenticator(tableOf(['eng'], 'another-shared-secret-of-32-bytes-at-least'), deps);
    await identities.recheck(rotated, false);
    expect(holder.events).toEqual([]);
    const newer = await ok(await jwt(T + 120_000));
    const pending = identities.recheck(rotated, true);
    held.update(newer); // a newer token arrived while the old one was being checked
    expect(held.credential).toBe(newer);
    await pending;
    expect(holder.events).toEqual([]);
    await identities.recheck(rotated, true);
    expect(holder.events).toEqual(['revoke removed']);
  });

  it('expire() revokes at exp on the injected clock, follows update() to a later exp, and leaves holders that do not expire', async () => {
    const { identities, ok, jwt, clock } = await setup();
    const session = recorder();
    const request = recorder();
    const held = identities.hold(await ok(await jwt(T + 30_000)), session);
    identities.hold(await ok(await jwt(T + 30_000)), request, { expires: false });
    clock.set(T + 29_999);
    expect(identities.expire()).toBe(0);
    held.update(await ok(await jwt(T + 60_000)));
    clock.set(T + 30_000);
    expect(identities.expire()).toBe(0);
    clock.set(T + 60_000);
    expect(identities.expire()).toBe(1);
    expect([session.events, request.events]).toEqual([['revoke expired'], []]);
    identities.close();
    expect(identities.size).toBe(0);
  });

  it('its timer revokes a credential whose exp the clock has passed, without expire() being called', async () => {
    const { identities, ok, jwt, clock } = await setup();
    const credential = await ok(await jwt(T + 1_000));
    clock.set(T + 5_000); // verified earlier, now past its exp
    const revoked = new Promise<string>((resolve) => identities.hold(credential, { refresh: () => undefined, revoke: resolve }));
    expect(await revoked).toBe('expired');
  });
});
