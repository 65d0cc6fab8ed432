// Identity on every HTTP request, through the built CLI: reloads (SIGHUP) demote and revoke open sessions, GET streams, subscriptions and listens; sessions are bound to their credential.
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { readJsonLines } from '../helpers/logs.js';
import { RawHttpClient } from '../helpers/raw-http.js';
import type { Stream } from '../helpers/sse-stream.js';
import { upstreams } from '../helpers/built-cli.js';
import { within } from '../helpers/gate.js';
import { HttpGatewayProcess } from '../helpers/http-gateway.js';
import { TempDir } from '../helpers/temp-dir.js';

const TOKENS = {
  alice: 'alice-token-0123456789abcdef',
  bob: 'bob-token-0123456789abcdef',
  carol: 'carol-token-0123456789abcdef',
  dana: 'dana-token-0123456789abcdef',
};
const SECRET = 'a-shared-secret-of-at-least-32-bytes!';
const ISSUER = 'https://idp.test';
const SECRET_URI = 'fx+fixture://ticker'; // only role eng may read it

/** Static tokens, each principal with the given roles; a JWT issuer; eng reads everything, nobody else anything. */
function configOf(dir: TempDir, roles: Partial<Record<keyof typeof TOKENS, string[]>>) {
  return {
    servers: { fx: upstreams.fixture('--resources', '2', '--subscribe') },
    auth: {
      tokens: Object.entries(roles).map(([principal, r]) => ({ principal, roles: r, token: TOKENS[principal as keyof typeof TOKENS] })),
      jwt: { secret: SECRET, issuer: ISSUER, audience: 'mcp-federate' },
    },
    policy: { default: 'deny', rules: [{ id: 'eng-all', effect: 'allow', roles: ['eng'] }] },
    subscriptions: { coalesceMs: 0 },
    audit: { file: dir.file('audit.jsonl') },
  };
}
const ALL_ENG = { alice: ['eng'], bob: ['eng'], carol: ['eng'], dana: ['eng'] };

const jwt = (claims: Record<string, unknown>, expiresIn = '10m') =>
  new SignJWT({ aud: 'mcp-federate', ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER)
    .setIssuedAt()
    .setExpirationTime(expiresIn)
    .sign(new TextEncoder().encode(SECRET));

/** The built CLI serving HTTP on an OS port, its config file rewritable and reloaded by SIGHUP. */
class Gateway extends HttpGatewayProcess {
  private file!: string;
  private ids = 100;
  private rawClient: RawHttpClient | undefined;
  /** The raw client of this gateway's URL (known once it listens). */
  private get raw(): RawHttpClient {
    return (this.rawClient ??= new RawHttpClient(this.url));
  }

  static async start(roles: Partial<Record<keyof typeof TOKENS, string[]>>): Promise<Gateway> {
    const g = new Gateway();
    g.file = g.dir.writeConfig(configOf(g.dir, roles));
    await g.spawn(g.file, { logLevel: 'info' });
    await within(g.started, 'the upstreams to start');
    return g;
  }

  /** Rewrites the config with these principals and roles, sends SIGHUP, and resolves once the reload is logged. */
  async reload(roles: Partial<Record<keyof typeof TOKENS, string[]>>): Promise<void> {
    this.dir.writeConfig(configOf(this.dir, roles));
    const done = this.nextLog((r) => typeof r.msg === 'string' && r.msg.startsWith('configuration reloaded'));
    this.process.kill('SIGHUP');
    await within(done, 'the reload to be logged');
  }

  /** A 2025 session opened (initialize, initialized) with `token`; its id. */
  session(token: string): Promise<string> {
    return this.raw.session(token);
  }

  /** One request on a session: the HTTP status and the parsed JSON-RPC answer (or the raw text). */
  call(token: string, sid: string, method: string, params: Record<string, unknown>) {
    return this.raw.call(token, sid, method, params);
  }

  /** The session's GET stream. */
  getStream(token: string, sid: string): Promise<Stream> {
    return this.raw.getStream(token, sid);
  }

  /** A 2026 listen for `uris`; resolves once it is acknowledged. */
  listen(token: string, uris: string[]): Promise<Stream> {
    return this.raw.listen(token, uris);
  }

  /** Makes the fixture report a change of the ticker (carol reads the control URI). */
  async tick(): Promise<void> {
    const sid = await this.session(TOKENS.carol);
    const r = await this.call(TOKENS.carol, sid, 'resources/read', { uri: `fx+fixture://control/tick?n=${++this.ids}` });
    expect(r.status).toBe(200);
  }

  /** Audit records so far. */
  audit(): Record<string, unknown>[] {
    return readJsonLines(this.dir.file('audit.jsonl'));
  }

  /** Delivery decisions of the secret's updates for `principal`, by outcome. */
  deliveries(principal: string): string[] {
    return this.audit()
      .filter((r) => r.method === 'notifications/resources/updated' && r.principal === principal)
      .map((r) => r.outcome as string);
  }

  override async [Symbol.asyncDispose](): Promise<void> {
    this.rawClient?.close();
    await super[Symbol.asyncDispose]();
  }
}

/** A session with its GET stream open, subscribed to the secret, and a 2026 listen for it. */
async function watcher(g: Gateway, token: string) {
  const sid = await g.session(token);
  const stream = await g.getStream(token, sid);
  const sub = await g.call(token, sid, 'resources/subscribe', { uri: SECRET_URI });
  expect(sub.body.result).toEqual({});
  const listen = await g.listen(token, [SECRET_URI]);
  return { sid, stream, listen };
}

describe('identity on every HTTP request (built CLI, SIGHUP reloads)', () => {
  it('a principal demoted by a reload: its open session reads nothing secret, and its GET stream, subscription and listen stop delivering while a control principal’s go on', async () => {
    await using g = await Gateway.start(ALL_ENG);
    const alice = await watcher(g, TOKENS.alice);
    const carol = await watcher(g, TOKENS.carol);
    expect((await g.call(TOKENS.alice, alice.sid, 'resources/read', { uri: SECRET_URI })).body.result).toBeDefined();
    await g.tick();
    await within(
      Promise.all([alice.stream, alice.listen, carol.stream, carol.listen].map((s) => s.untilUpdates(SECRET_URI, 1))),
      'the first update everywhere',
    );

    await g.reload({ ...ALL_ENG, alice: [] });
    const read = await g.call(TOKENS.alice, alice.sid, 'resources/read', { uri: SECRET_URI });
    const missing = await g.call(TOKENS.alice, alice.sid, 'resources/read', { uri: 'fx+fixture://nothing-here' });
    expect(read.status).toBe(200);
    expect(read.body.error).toEqual({ code: -32002, message: 'Resource not found', data: { uri: SECRET_URI } });
    expect(JSON.stringify(read.body.error).replace(SECRET_URI, 'X')).toBe(JSON.stringify(missing.body.error).replace('fx+fixture://nothing-here', 'X'));

    await g.tick();
    await within(Promise.all([carol.stream, carol.listen].map((s) => s.untilUpdates(SECRET_URI, 2))), 'the control principal’s second update');
    // Both of alice's standing deliveries were decided, and denied, before anything was written.
    await expect.poll(() => g.deliveries('alice')).toEqual(['ok', 'ok', 'denied', 'denied']);
    expect([alice.stream.updates(SECRET_URI), alice.listen.updates(SECRET_URI)]).toEqual([1, 1]);

    // Promoted again: her standing deliveries resume, on the same session and listen.
    await g.reload(ALL_ENG);
    await g.tick();
    await within(Promise.all([alice.stream, alice.listen].map((s) => s.untilUpdates(SECRET_URI, 2))), 'alice’s updates after promotion');
  });

  it('a removed token: 401 on new requests, and its GET stream and 2026 listen are closed within 1 s of the reload; the control principal’s go on', async () => {
    await using g = await Gateway.start(ALL_ENG);
    const bob = await watcher(g, TOKENS.bob);
    const carol = await watcher(g, TOKENS.carol);
    const { bob: _bob, ...withoutBob } = ALL_ENG;
    const closed = g.nextLog((r) => r.msg === 'http: session closed' && r.principal === 'bob');
    await g.reload(withoutBob);
    await within(Promise.all([bob.stream.ended, bob.listen.ended]), 'bob’s GET stream and listen to close', 1_000);
    expect(await within(closed, 'bob’s session to close', 1_000)).toMatchObject({ why: 'credential removed' });
    expect((await g.call(TOKENS.bob, bob.sid, 'resources/list', {})).status).toBe(401);
    // His session id is gone: carol presenting it gets what an unknown id gets.
    const asCarol = await g.call(TOKENS.carol, bob.sid, 'resources/list', {});
    const unknown = await g.call(TOKENS.carol, 'AAAAAAAAAAAAAAAAAAAAAA', 'resources/list', {});
    expect([asCarol.status, asCarol.text]).toEqual([unknown.status, unknown.text]);
    expect(asCarol.status).toBe(404);

    await g.tick();
    await within(Promise.all([carol.stream, carol.listen].map((s) => s.untilUpdates(SECRET_URI, 1))), 'the control principal’s update');
    expect(g.deliveries('bob')).toEqual([]); // nothing of bob's was even considered
    expect([bob.stream.updates(SECRET_URI), bob.listen.updates(SECRET_URI)]).toEqual([0, 0]);
  });

  it('a JWT for the same sub with no roles, on a session opened with a JWT carrying [eng], is served with no roles; standing deliveries follow the latest credential', async () => {
    await using g = await Gateway.start(ALL_ENG);
    const eng = await jwt({ sub: 'erin', roles: ['eng'] });
    const none = await jwt({ sub: 'erin', roles: [] });
    const sid = await g.session(eng);
    const stream = await g.getStream(eng, sid);
    expect((await g.call(eng, sid, 'resources/subscribe', { uri: SECRET_URI })).body.result).toEqual({});
    const carol = await watcher(g, TOKENS.carol);

    const asNone = await g.call(none, sid, 'resources/read', { uri: SECRET_URI });
    expect(asNone.status).toBe(200); // same issuer and subject: the same session
    expect(asNone.body.error).toMatchObject({ code: -32002 });
    expect((await g.call(none, sid, 'resources/list', {})).body.result).toMatchObject({ resources: [] });
    // The session now stands for the role-less credential: the secret's update is not delivered.
    await g.tick();
    await within(carol.stream.untilUpdates(SECRET_URI, 1), 'the control principal’s update');
    await expect.poll(() => g.deliveries('erin')).toEqual(['denied']);
    // The [eng] credential again: served with eng, and the session's deliveries follow.
    expect((await g.call(eng, sid, 'resources/read', { uri: SECRET_URI })).body.result).toBeDefined();
    await g.tick();
    await within(stream.untilUpdates(SECRET_URI, 1), 'erin’s update with eng again');
  });

  it('a JWT whose sub equals a static-token principal’s name is a stranger to that principal’s session, and the other way round', async () => {
    await using g = await Gateway.start(ALL_ENG);
    const danaStatic = await g.session(TOKENS.dana);
    const danaJwt = await jwt({ sub: 'dana', roles: ['eng'] });
    const unknown = await g.call(danaJwt, 'AAAAAAAAAAAAAAAAAAAAAA', 'resources/list', {});
    expect(unknown.status).toBe(404);
    const jwtOnStatic = await g.call(danaJwt, danaStatic, 'resources/list', {});
    expect([jwtOnStatic.status, jwtOnStatic.text]).toEqual([unknown.status, unknown.text]);
    const jwtSession = await g.session(danaJwt);
    const staticOnJwt = await g.call(TOKENS.dana, jwtSession, 'resources/list', {});
    const unknownStatic = await g.call(TOKENS.dana, 'AAAAAAAAAAAAAAAAAAAAAA', 'resources/list', {});
    expect([staticOnJwt.status, staticOnJwt.text]).toEqual([unknownStatic.status, unknownStatic.text]);
    // Each session still serves its own credential.
    expect((await g.call(TOKENS.dana, danaStatic, 'resources/list', {})).status).toBe(200);
    expect((await g.call(danaJwt, jwtSession, 'resources/list', {})).status).toBe(200);
    expect((await g.call(await jwt({ sub: 'dana', roles: [] }), jwtSession, 'resources/list', {})).status).toBe(200); // same iss+sub
    expect((await g.call(await jwt({ sub: 'dan', roles: ['eng'] }), jwtSession, 'resources/list', {})).status).toBe(404);
  });
});
