// Identity on every HTTP request, in process with the real endpoint on 127.0.0.1: JWT expiry on the injected clock, answers in flight across a revoking reload, a changed jwt block.
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { AuthSchema } from '../../src/config/schema.js';
import { testEndpoint } from '../helpers/http-endpoint.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { RawHttpClient, readAnswer } from '../helpers/raw-http.js';
import { createUpstreamServer, type UpstreamHandle } from '../helpers/upstream-server.mjs';
import { within } from '../helpers/gate.js';

const T = Date.UTC(2030, 0, 1) / 1000; // the injected clock starts here (seconds)
const SECRET = 'a-shared-secret-of-at-least-32-bytes!';
const ISSUER = 'https://idp.test';
const TOKENS = { alice: 'alice-token-0123456789abcdef', bob: 'bob-token-0123456789abcdef', carol: 'carol-token-0123456789abcdef' };
const SECRET_URI = 'a+x://secret';
const SLOW_URI = 'a+x://slow';
/** Another slow URI: reads of one URI in flight together are one upstream read. */
const SLOW_URI_2 = 'a+x://slow2';
const POLICY = { default: 'deny', rules: [{ id: 'eng-all', effect: 'allow', roles: ['eng'] }] };

const authOf = (roles: Partial<Record<keyof typeof TOKENS, string[]>>, secret = SECRET) =>
  AuthSchema.parse({
    tokens: Object.entries(roles).map(([principal, r]) => ({ principal, roles: r, token: TOKENS[principal as keyof typeof TOKENS] })),
    jwt: { secret, issuer: ISSUER, audience: 'mcp' },
  });
const ALL_ENG = { alice: ['eng'], bob: ['eng'], carol: ['eng'] };

const jwt = (sub: string, exp: number, roles = ['eng'], secret = SECRET) =>
  new SignJWT({ sub, roles, aud: 'mcp', iss: ISSUER, iat: T, exp }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(secret));

/** A read of x://slow waits until the test lets it go. */
class SlowReads {
  private waiting: (() => void)[] = [];
  private arrivals: (() => void)[] = [];
  read = async () => {
    for (const a of this.arrivals.splice(0)) a();
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    return { contents: [{ uri: 'x://slow', text: 'slow secret' }] };
  };
  /** Resolves when `n` reads are waiting upstream. */
  until(n: number): Promise<void> {
    return new Promise((resolve) => {
      const check = () => (this.waiting.length >= n ? resolve() : this.arrivals.push(() => setImmediate(check)));
      check();
    });
  }
  release(): void {
    for (const w of this.waiting.splice(0)) w();
  }
}

async function gateway(auth = authOf(ALL_ENG)) {
  const slow = new SlowReads();
  const upstream: UpstreamHandle = createUpstreamServer({
    subscribe: true,
    resources: [
      { uri: 'x://secret', name: 'secret' },
      { uri: 'x://slow', name: 'slow' },
    ],
    read: (uri) => (uri.startsWith('x://slow') ? slow.read() : { contents: [{ uri, text: `content of ${uri}` }] }),
  });
  const h: Harness = await startHarness({ upstreams: { a: () => upstream.server }, config: { policy: POLICY, subscriptions: { coalesceMs: 0 } } });
  let nowMs = T * 1000;
  const endpoint = testEndpoint(h.proxy, {}, { auth, now: () => new Date(nowMs) });
  const url = await endpoint.listen();
  const raw = new RawHttpClient(url);
  const g = {
    h,
    upstream,
    endpoint,
    slow,
    setNow: (seconds: number) => void (nowMs = seconds * 1000),
    session: (token: string) => raw.session(token),
    call: (token: string, sid: string, method: string, params: Record<string, unknown>) => raw.call(token, sid, method, params),
    /** A 2026 request (stateless) with the per-request envelope. */
    modern: async (token: string, method: string, params: Record<string, unknown>) => readAnswer(await raw.modern(token, method, params)),
    getStream: (token: string, sid: string) => raw.getStream(token, sid),
    listen: (token: string, uris: string[]) => raw.listen(token, uris),
    /** The upstream reports a change of x://secret. */
    update: () => upstream.server.sendResourceUpdated({ uri: 'x://secret' }),
    async [Symbol.asyncDispose]() {
      raw.close();
      slow.release();
      await endpoint.close();
      await h[Symbol.asyncDispose]();
    },
  };
  return g;
}

describe('JWT expiry closes standing deliveries (injected clock)', () => {
  it('a session, its GET stream and subscription, and a 2026 listen close at their JWT’s exp; a shorter-lived JWT presented later shortens the session; a control JWT’s go on', async () => {
    await using g = await gateway();
    const long = await jwt('erin', T + 600);
    const short = await jwt('erin', T + 30);
    const control = await jwt('frank', T + 6000);
    const erinSid = await g.session(long);
    const erinStream = await g.getStream(long, erinSid);
    expect((await g.call(long, erinSid, 'resources/subscribe', { uri: SECRET_URI })).body.result).toEqual({});
    const erinListen = await g.listen(short, [SECRET_URI]);
    const frankSid = await g.session(control);
    const frankStream = await g.getStream(control, frankSid);
    await g.call(control, frankSid, 'resources/subscribe', { uri: SECRET_URI });
    const frankListen = await g.listen(control, [SECRET_URI]);
    await g.update();
    await within(Promise.all([erinStream, erinListen, frankStream, frankListen].map((s) => s.untilUpdates(SECRET_URI, 1))), 'the first update everywhere');

    // The same holder with a shorter-lived token: the session now lives as long as that one.
    expect((await g.call(short, erinSid, 'resources/list', {})).status).toBe(200);
    g.setNow(T + 29);
    g.endpoint.sweep();
    expect(g.endpoint.sessions).toBe(2);
    g.setNow(T + 30); // exp: expired, as jose judges it
    g.endpoint.sweep();
    await within(Promise.all([erinStream.ended, erinListen.ended]), 'erin’s GET stream and listen to end');
    expect(g.endpoint.sessions).toBe(1);
    expect((await g.call(short, erinSid, 'resources/list', {})).status).toBe(401); // expired
    expect((await g.call(long, erinSid, 'resources/list', {})).status).toBe(404); // still valid, but the session is gone

    await g.update();
    await within(Promise.all([frankStream, frankListen].map((s) => s.untilUpdates(SECRET_URI, 2))), 'the control’s second update');
    expect([erinStream.updates(SECRET_URI), erinListen.updates(SECRET_URI)]).toEqual([1, 1]);
    await expect.poll(() => g.upstream.stats.unsubscribes.length).toBe(0); // frank still holds the upstream subscription
  });
});

describe('answers in flight across a revoking reload', () => {
  it('a demoted principal’s read decided before the reload and answered after it is dropped as not-found; a control’s is answered', async () => {
    await using g = await gateway();
    const aliceSid = await g.session(TOKENS.alice);
    const carolSid = await g.session(TOKENS.carol);
    const alice = g.call(TOKENS.alice, aliceSid, 'resources/read', { uri: SLOW_URI });
    const carol = g.call(TOKENS.carol, carolSid, 'resources/read', { uri: SLOW_URI_2 });
    await within(g.slow.until(2), 'both reads to reach the upstream');
    const reloaded = g.endpoint.reloadAuth(authOf({ ...ALL_ENG, alice: [] }));
    g.slow.release();
    await reloaded;
    const [a, c] = await Promise.all([alice, carol]);
    expect(a.body.error).toEqual({ code: -32002, message: 'Resource not found', data: { uri: SLOW_URI } });
    expect(a.text).not.toContain('slow secret');
    expect(c.body.result).toMatchObject({ contents: [{ text: 'slow secret' }] });
    // Her session stays (her token is still valid), acting for her roles as now resolved.
    expect((await g.call(TOKENS.alice, aliceSid, 'resources/read', { uri: SECRET_URI })).body.error).toMatchObject({ code: -32002 });
  });

  it('a policy reload while a read is in flight re-decides it too (proxy.reload alone)', async () => {
    await using g = await gateway();
    const sid = await g.session(TOKENS.alice);
    const read = g.call(TOKENS.alice, sid, 'resources/read', { uri: SLOW_URI });
    await within(g.slow.until(1), 'the read to reach the upstream');
    g.h.proxy.reload(parseConfig({ servers: { a: { command: 'inmemory:a' } }, policy: { default: 'deny', rules: [] } }, { env: {} }));
    g.slow.release();
    expect((await read).body.error).toMatchObject({ code: -32002 });
  });

  it('a stdio session keeps its configured principal; its read in flight across a policy reload is decided again too', async () => {
    await using g = await gateway();
    const client = await g.h.client({ principal: 'sam', roles: ['eng'], transport: 'stdio' });
    const read = client.readResource({ uri: SLOW_URI }).then(
      () => 'answered',
      (err: { code?: number }) => err.code,
    );
    await within(g.slow.until(1), 'the read to reach the upstream');
    g.h.proxy.reload(parseConfig({ servers: { a: { command: 'inmemory:a' } }, policy: { default: 'deny', rules: [] } }, { env: {} }));
    g.slow.release();
    expect(await read).toBe(-32002);
  });

  it('a removed token’s in-flight 2025 read ends with its session; its in-flight 2026 read is not-found; neither carries the content', async () => {
    await using g = await gateway();
    const bobSid = await g.session(TOKENS.bob);
    const legacy = g.call(TOKENS.bob, bobSid, 'resources/read', { uri: SLOW_URI });
    const modern = g.modern(TOKENS.bob, 'resources/read', { uri: SLOW_URI_2 });
    await within(g.slow.until(2), 'both reads to reach the upstream');
    const { bob: _bob, ...withoutBob } = ALL_ENG;
    const reloaded = g.endpoint.reloadAuth(authOf(withoutBob));
    expect(g.endpoint.sessions).toBe(0); // closed at once
    g.slow.release();
    await reloaded;
    const [l, m] = await Promise.all([legacy, modern]);
    expect(l.status).toBe(404);
    expect(l.text).not.toContain('slow secret');
    expect(m.text).not.toContain('slow secret');
    expect(JSON.parse(m.text)).toMatchObject({ error: { code: -32602, message: 'Resource not found' } });
  });
});

describe('a reload that changes the jwt block', () => {
  it('verifies every JWT session again: tokens the new key does not verify lose their session, GET stream and listen; static tokens stay', async () => {
    await using g = await gateway();
    const token = await jwt('erin', T + 600);
    const sid = await g.session(token);
    const stream = await g.getStream(token, sid);
    const listen = await g.listen(token, [SECRET_URI]);
    const aliceSid = await g.session(TOKENS.alice);
    const other = 'another-shared-secret-of-32-bytes-at-least';
    await g.endpoint.reloadAuth(authOf(ALL_ENG, other));
    await within(Promise.all([stream.ended, listen.ended]), 'the JWT’s GET stream and listen to end');
    expect(g.endpoint.sessions).toBe(1);
    expect((await g.call(TOKENS.alice, aliceSid, 'resources/list', {})).status).toBe(200);
    // A token of the new key opens a session again; the same jwt block again keeps it (no re-verification needed).
    const fresh = await jwt('erin', T + 600, ['eng'], other);
    const again = await g.session(fresh);
    await g.endpoint.reloadAuth(authOf(ALL_ENG, other));
    expect((await g.call(fresh, again, 'resources/read', { uri: SECRET_URI })).body.result).toBeDefined();
  });

  it('an auth block that drops a token a session holds closes that session; an unchanged reload keeps every session', async () => {
    await using g = await gateway();
    const sid = await g.session(TOKENS.carol);
    await g.endpoint.reloadAuth(authOf(ALL_ENG));
    expect(g.endpoint.sessions).toBe(1);
    expect((await g.call(TOKENS.carol, sid, 'resources/read', { uri: SECRET_URI })).body.result).toBeDefined();
    await g.endpoint.reloadAuth(authOf({ alice: ['eng'] }));
    expect(g.endpoint.sessions).toBe(0);
  });
});
