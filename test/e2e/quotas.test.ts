// Every principal bounded, through the built CLI over real HTTP: one principal at each limit, another one unaffected.
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJsonLines } from '../helpers/logs.js';
import { postRpc } from '../helpers/raw-http.js';
import { initializeRequest, modernHeaders, modernRequest, V2026 } from '../helpers/rpc-messages.js';
import { upstreams } from '../helpers/built-cli.js';
import { within } from '../helpers/gate.js';
import { HttpGatewayProcess } from '../helpers/http-gateway.js';

const TOKENS = { alice: 'alice-token-0123456789abcdef', mallory: 'mallory-token-0123456789abcdef' };
/** The built CLI serving HTTP on an OS-assigned port, with an audit file. */
class Gateway extends HttpGatewayProcess {
  readonly audit = this.dir.file('audit.jsonl');

  /** `direct`: run `dist/cli.js` itself, so its shebang's V8 settings apply (as installed); else `node dist/cli.js`. */
  static async start(config: Record<string, unknown>, direct = false): Promise<Gateway> {
    const g = new Gateway();
    const file = g.dir.writeConfig({
      auth: {
        tokens: [
          { principal: 'alice', token: TOKENS.alice },
          { principal: 'mallory', token: TOKENS.mallory },
        ],
      },
      audit: { file: g.audit },
      ...config,
    });
    await g.spawn(file, { direct, listenMs: 30_000 }); // spawning is slow on a loaded machine
    await within(g.started, 'the upstreams to start', 30_000);
    return g;
  }

  /** A POST as `who`. */
  post(who: keyof typeof TOKENS, body: Record<string, unknown>, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
    return postRpc(this.url, body, { token: TOKENS[who], headers, ...(signal ? { signal } : {}) });
  }

  /** A 2026 stateless request. */
  modern(who: keyof typeof TOKENS, id: number, method: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
    return this.post(who, modernRequest(id, method, params), modernHeaders(method, params), signal);
  }

  /** A 2025 session's initialize; resolves with the response. */
  initialize(who: keyof typeof TOKENS, headers: Record<string, string> = {}): Promise<Response> {
    return this.post(who, initializeRequest(), headers);
  }

  auditRecords(): Record<string, unknown>[] {
    return readJsonLines(this.audit);
  }

  /** The gateway's resident set size now, from /proc, in bytes. */
  rss(field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
    const status = readFileSync(`/proc/${this.process.pid}/status`, 'utf8');
    const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!kb) throw new Error(`no ${field} in /proc/<pid>/status`);
    return Number(kb[1]) * 1024;
  }
}

/** A JSON-RPC answer body. */
interface Answer {
  id?: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: { retryAfterMs?: number } };
}

/** The refusal every per-principal bound gives over HTTP: 429, Retry-After, and the same wait in `data.retryAfterMs`. */
async function expectRefused(res: Response, id: unknown = null): Promise<void> {
  expect(res.status).toBe(429);
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThan(0);
  const body = (await res.json()) as Answer;
  expect(body.id).toEqual(id);
  expect(body.error?.code).toBe(-32000);
  expect(body.error?.data?.retryAfterMs).toBe(retryAfter * 1000);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

describe('per-principal bounds over HTTP', () => {
  let g: Gateway;
  beforeAll(async () => {
    g = await Gateway.start({
      servers: { fx: upstreams.fixture('--resources', '3', '--subscribe', '--hang-prefix', 'fixture://hang/') },
      http: { maxSessions: 8, maxSessionsPerPrincipal: 3, maxListensPerPrincipal: 2 },
      wire: { maxInFlightPerPrincipal: 8 },
      subscriptions: { maxPerPrincipal: 50 },
      cache: { coherentUris: 0 },
      limits: { completions: [{ principals: ['mallory'], completionsPerMinute: 6, burst: 2 }] },
    });
  });
  afterAll(async () => {
    await g?.[Symbol.asyncDispose]();
  });

  it('refused initializes (406, 415, 401) take no session; sessions past the per-principal bound get 429; others still open theirs', async () => {
    // 24 refused initializes: had any taken a session, maxSessions (8) would be used up.
    for (let i = 0; i < 8; i++) {
      expect((await g.initialize('mallory', { accept: 'application/json' })).status).toBe(406);
      expect((await g.initialize('mallory', { 'content-type': 'text/plain' })).status).toBe(415);
      expect((await g.initialize('mallory', { authorization: 'Bearer not-a-token-of-ours' })).status).toBe(401);
    }
    const mallory: string[] = [];
    const alice: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await g.initialize('mallory');
      expect(res.status).toBe(200);
      mallory.push(res.headers.get('mcp-session-id')!);
      await res.text();
    }
    await expectRefused(await g.initialize('mallory'), 1);
    for (let i = 0; i < 3; i++) {
      const res = await g.initialize('alice');
      expect(res.status).toBe(200);
      alice.push(res.headers.get('mcp-session-id')!);
      await res.text();
    }
    const end = async (who: keyof typeof TOKENS, id: string) =>
      expect((await fetch(g.url, { method: 'DELETE', headers: { authorization: `Bearer ${TOKENS[who]}`, 'mcp-session-id': id } })).status).toBe(200);
    // Ending one of mallory's sessions gives it back.
    await end('mallory', mallory.shift()!);
    const again = await g.initialize('mallory');
    expect(again.status).toBe(200);
    mallory.push(again.headers.get('mcp-session-id')!);
    await again.text();
    for (const id of mallory) await end('mallory', id);
    for (const id of alice) await end('alice', id);
    expect(g.auditRecords()).toContainEqual(
      expect.objectContaining({ principal: 'mallory', method: 'initialize', outcome: 'rate_limited', rule: 'limit:sessions' }),
    );
  });

  it('listens past the per-principal bound get 429; another principal still listens', async () => {
    const filter = { notifications: { resourceSubscriptions: ['fx+fixture://res/0'] } };
    const open: Response[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await g.modern('mallory', 100 + i, 'subscriptions/listen', filter);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      open.push(res);
    }
    await expectRefused(await g.modern('mallory', 102, 'subscriptions/listen', filter));
    const alice = await g.modern('alice', 200, 'subscriptions/listen', filter);
    expect(alice.status).toBe(200);
    for (const res of [...open, alice]) await res.body?.cancel();
    expect(g.auditRecords()).toContainEqual(expect.objectContaining({ principal: 'mallory', outcome: 'rate_limited', rule: 'limit:listens' }));
  });

  it('requests in flight past the per-principal bound get a JSON-RPC error with data.retryAfterMs; another principal is served', async () => {
    const abort = new AbortController();
    const hung = Array.from({ length: 8 }, (_, i) =>
      g.modern('mallory', 300 + i, 'resources/read', { uri: `fx+fixture://hang/${i}` }, abort.signal).catch(() => undefined),
    );
    // The eight are in flight once the gateway has them; the ninth is refused at once, with its id.
    await within(
      (async () => {
        for (;;) {
          const res = await g.modern('mallory', 399, 'resources/read', { uri: 'fx+fixture://res/0' });
          if (res.status === 429) return expectRefused(res, 399);
          await res.text(); // one of the eight was not in flight yet
        }
      })(),
      'the ninth request to be refused',
    );
    const alice = (await (await g.modern('alice', 400, 'resources/read', { uri: 'fx+fixture://res/0' })).json()) as Answer;
    expect(alice.result?.contents).toBeDefined();
    abort.abort();
    await Promise.all(hung);
    // The aborted requests gave their places back.
    await within(
      (async () => {
        for (;;) {
          const res = await g.modern('mallory', 401, 'resources/read', { uri: 'fx+fixture://res/1' });
          if (res.status === 200) return;
          await res.text();
        }
      })(),
      'mallory to be served again',
    );
    expect(g.auditRecords()).toContainEqual(
      expect.objectContaining({ principal: 'mallory', method: 'resources/read', outcome: 'rate_limited', rule: 'limit:in-flight' }),
    );
  });

  it('10,000 subscription attempts from one principal hold at most its bound of upstream subscriptions; another principal still subscribes', async () => {
    const stats = async (tag: string) => {
      const answer = (await (await g.modern('alice', 500, 'resources/read', { uri: `fx+fixture://stats?${tag}` })).json()) as Answer;
      const text = (answer.result!.contents as { text: string }[])[0]!.text;
      return (JSON.parse(text) as { subscribed: string[] }).subscribed.filter((u) => u.startsWith('fixture://item/books/'));
    };
    // One listen asking for 10,000 URIs (the hole: 10,000 upstream subscriptions in 3 s).
    const uris = Array.from({ length: 10_000 }, (_, i) => `fx+fixture://item/books/${i}`);
    const listen = await g.modern('mallory', 800, 'subscriptions/listen', { notifications: { resourceSubscriptions: uris } });
    expect(listen.status).toBe(200);
    const reader = listen.body!.getReader();
    let text = '';
    while (!text.includes('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
    const ack = JSON.parse(/^data: (.*)$/m.exec(text)![1]!) as { method: string; params: { notifications: { resourceSubscriptions: string[] } } };
    expect(ack.method).toBe('notifications/subscriptions/acknowledged');
    expect(ack.params.notifications.resourceSubscriptions).toHaveLength(50);
    expect(await stats('listen')).toHaveLength(50);
    // The bound is the principal's, across its listens and sessions: a 2025 subscribe is refused too, with data.retryAfterMs.
    const init = await g.initialize('mallory');
    const session = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' };
    await init.text();
    const subscribe = async (who: keyof typeof TOKENS, headers: Record<string, string>, uri: string) =>
      (await (await g.post(who, { jsonrpc: '2.0', id: 7, method: 'resources/subscribe', params: { uri } }, headers)).json()) as Answer;
    const refused = await subscribe('mallory', session, 'fx+fixture://res/2');
    expect(refused.error?.message).toBe('Too many subscriptions');
    expect(refused.error?.data?.retryAfterMs).toBeGreaterThan(0);
    // alice's own subscription is not refused for mallory's.
    const a = await g.initialize('alice');
    const aliceSession = { 'mcp-session-id': a.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' };
    await a.text();
    expect((await subscribe('alice', aliceSession, 'fx+fixture://res/2')).result).toEqual({});
    // Ending the listen gives mallory's subscriptions back.
    await reader.cancel();
    await within(
      (async () => {
        while ((await subscribe('mallory', session, 'fx+fixture://res/2')).result === undefined);
      })(),
      'mallory’s subscriptions to be released',
    );
    expect(g.auditRecords()).toContainEqual(expect.objectContaining({ principal: 'mallory', method: 'resources/subscribe', outcome: 'rate_limited' }));
    for (const [who, headers] of [
      ['mallory', session],
      ['alice', aliceSession],
    ] as const) {
      await fetch(g.url, { method: 'DELETE', headers: { authorization: `Bearer ${TOKENS[who]}`, 'mcp-session-id': headers['mcp-session-id'] } });
    }
  }, 60_000);

  it('completions are rate limited per principal (limits.completions); another principal is not', async () => {
    const complete = (who: keyof typeof TOKENS, id: number) =>
      g.modern(who, id, 'completion/complete', {
        ref: { type: 'ref/resource', uri: 'fx+fixture://item/{category}/{id}' },
        argument: { name: 'category', value: 'b' },
      });
    for (let i = 0; i < 2; i++) expect(((await (await complete('mallory', 600 + i)).json()) as Answer).result?.completion, `completion ${i}`).toBeDefined();
    const refused = (await (await complete('mallory', 602)).json()) as Answer;
    expect(refused.error?.code).toBe(-32000);
    expect(refused.error?.message).toBe('Rate limit exceeded');
    expect(refused.error?.data?.retryAfterMs).toBeGreaterThan(0);
    for (let i = 0; i < 5; i++) expect(((await (await complete('alice', 700 + i)).json()) as Answer).result?.completion).toBeDefined();
    expect(g.auditRecords()).toContainEqual(
      expect.objectContaining({ principal: 'mallory', method: 'completion/complete', outcome: 'rate_limited', rule: 'completion-rate-limit' }),
    );
  });
});

describe('one principal’s slow reads', () => {
  it('do not slow another principal: its p50 read stays within 2× its baseline', async () => {
    await using g = await Gateway.start({
      servers: { fx: { ...upstreams.fixture('--resources', '3', '--read-delay-ms', '20', '--hang-prefix', 'fixture://hang/'), timeoutMs: 3_000 } },
    });
    const read = async (who: keyof typeof TOKENS, id: number, uri: string, signal?: AbortSignal) => {
      const started = performance.now();
      const res = await g.modern(who, id, 'resources/read', { uri }, signal);
      await res.text();
      return performance.now() - started;
    };
    const sample = async () => {
      const times: number[] = [];
      for (let i = 0; i < 25; i++) times.push(await read('alice', i, 'fx+fixture://res/0'));
      return median(times);
    };
    await sample(); // warm-up
    const baseline = await sample();
    // mallory keeps 60 slow reads of distinct URIs going (more than the upstream's 16 slots) for the whole measurement.
    let stopped = false;
    let n = 0;
    const flood = Array.from({ length: 60 }, async () => {
      while (!stopped) await read('mallory', 10_000 + n, `fx+fixture://hang/${n++}`).catch(() => undefined);
    });
    await within(
      (async () => {
        // The flood is on once the upstream holds slow reads of mallory's.
        for (;;) {
          const stats = JSON.parse(
            ((await (await g.modern('alice', 9, 'resources/read', { uri: `fx+fixture://stats?${n}` })).json()) as { result: { contents: { text: string }[] } })
              .result.contents[0]!.text,
          ) as { hung: number };
          if (stats.hung >= 14) return;
        }
      })(),
      'mallory’s reads to hold the upstream',
    );
    const underLoad = await sample();
    stopped = true;
    await Promise.all(flood); // the slow reads end at the upstream's timeout
    console.log(`alice's p50 read: ${baseline.toFixed(1)} ms alone, ${underLoad.toFixed(1)} ms while mallory holds the upstream with slow reads`);
    expect(underLoad).toBeLessThanOrEqual(2 * baseline);
  }, 60_000);
});

describe('answers a client does not read', () => {
  it('30 unread 8 MiB answers grow the gateway by less than 3× the per-principal size cap', async () => {
    const cap = 64 * 1024 * 1024; // wire.maxQueuedBytesPerPrincipal's default
    await using g = await Gateway.start(
      {
        servers: { fx: upstreams.fixture('--resources', '2', '--size', String(8 * 1024 * 1024), '--any-query') },
        cache: { enabled: false },
      },
      true,
    );
    // Baseline: the gateway after serving (and a client reading) a few 8 MiB answers, so its heap has
    // grown for answers that size once; what mallory's unread answers add comes on top of that.
    for (let i = 0; i < 3; i++)
      expect(((await (await g.modern('alice', i, 'resources/read', { uri: `fx+fixture://res/1?warm=${i}` })).json()) as Answer).result?.contents).toBeDefined();
    const baseline = g.rss();
    const sockets: Socket[] = [];
    /** Per connection: the status its answer started with (read from the first bytes only; `started` when they held none), and whether it was seen closed. */
    const statuses: (string | undefined)[] = [];
    const closed = new Set<number>();
    for (let i = 0; i < 30; i++) {
      const body = JSON.stringify(modernRequest(i, 'resources/read', { uri: `fx+fixture://res/0?n=${i}` }));
      const socket = connect(Number(g.url.port), '127.0.0.1');
      sockets.push(socket);
      socket.on('error', () => undefined);
      socket.once('close', () => closed.add(i));
      // Never read past the status line: wait only until the answer starts arriving (it is then written) or the gateway closes the connection.
      await within(
        new Promise<void>((resolve) => {
          socket.once('readable', () => {
            // The status line when it is there (a few bytes: read(12) gives nothing while fewer have come).
            statuses[i] = /^HTTP\/1\.1 (\d{3})/.exec(String(socket.read(12) ?? socket.read() ?? ''))?.[1] ?? 'started';
            resolve();
          });
          socket.once('close', () => resolve());
          socket.write(
            `POST ${g.url.pathname} HTTP/1.1\r\nhost: ${g.url.host}\r\nauthorization: Bearer ${TOKENS.mallory}\r\ncontent-type: application/json\r\n` +
              `accept: application/json, text/event-stream\r\nmcp-protocol-version: ${V2026}\r\nmcp-method: resources/read\r\nmcp-name: fx+fixture://res/0?n=${i}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
          );
        }),
        `answer ${i}`,
        30_000,
      );
    }
    const rss = g.rss();
    const peak = g.rss('VmHWM');
    const mib = (n: number) => Math.round(n / 2 ** 20);
    // What the gateway closed, by its own log: a client that does not read sees a close only once it reads what came before it.
    const dropped = g.log.split('\n').filter((line) => line.includes('the client is not reading its answers')).length;
    const refused = statuses.filter((status) => status === '429').length;
    console.log(
      `gateway RSS: ${mib(baseline)} MiB warmed, ${mib(rss)} MiB with 30 unread 8 MiB answers (peak ${mib(peak)} MiB); ` +
        `${dropped} answers closed by the gateway, ${closed.size} connections seen closed, ${refused} refused (429)`,
    );
    expect(rss - baseline).toBeLessThanOrEqual(3 * cap);
    // At most the cap's worth (and one more) of answers stay queued: the rest were closed as they went past it, or refused (429) once it was full.
    expect(dropped + refused).toBeGreaterThanOrEqual(30 - cap / (8 * 2 ** 20) - 1);
    // Each request was answered (a status, written before any close) or its connection closed.
    for (let i = 0; i < 30; i++) expect(statuses[i] !== undefined || closed.has(i)).toBe(true);
    expect(statuses.every((status) => status === undefined || status === '200' || status === '429' || status === 'started')).toBe(true);
    // alice is not held back by mallory's unread answers.
    const alice = await g.modern('alice', 1, 'resources/read', { uri: 'fx+fixture://res/1' });
    expect(alice.status).toBe(200);
    expect(((await alice.json()) as Answer).result?.contents).toBeDefined();
    for (const s of sockets) s.destroy();
  }, 120_000);
});
