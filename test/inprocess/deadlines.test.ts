// Upstream deadlines and fairness: timeoutMs counts queue wait; a hung URI cannot starve the others.
import { describe, expect, it } from 'vitest';
import { createUpstreamServer, textContents as text } from '../helpers/upstream-server.mjs';
import { startHarness } from '../helpers/harness.js';
import { rpcError } from '../helpers/rpc-error.js';
import { counter } from '../helpers/gate.js';

describe('upstream deadlines', () => {
  it('answers every queued read of one hung URI with -32001 within its own timeout, and serves other URIs meanwhile', async () => {
    const hungStarted = counter();
    await using h = await startHarness({
      upstreams: {
        a: () =>
          createUpstreamServer({
            read: (u) => {
              if (!u.startsWith('hang:')) return text(u, 'fine');
              hungStarted.hit();
              return new Promise(() => undefined); // never answers
            },
          }).server,
      },
      serverFields: { a: { timeoutMs: 400, concurrency: 2, cache: false } },
    });
    const c = await h.client();
    const hung = Array.from({ length: 20 }, () => rpcError(c.readResource({ uri: 'a+hang:1' })));
    await hungStarted.until(1); // the hung URIs hold their share of the slots now
    // Another URI is not queued behind them: a slot is always left for it.
    expect((await c.readResource({ uri: 'a+ok:1' })).contents[0]).toMatchObject({ text: 'fine' });
    const errors = await Promise.all(hung);
    expect(errors.map((e) => e.code)).toEqual(Array<number>(20).fill(-32001));
    // Most never reached the upstream: their deadline, counted from the client's request, ran out in the queue.
    expect(hungStarted.count).toBeLessThan(20);
  });
});
