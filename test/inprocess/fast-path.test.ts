// Upstream requests on the fast path (own ids, one pending map, one deadline timer): timeouts and cancellations reach the upstream.
import { describe, expect, it } from 'vitest';
import { createUpstreamServer } from '../helpers/upstream-server.mjs';
import { startHarness } from '../helpers/harness.js';
import { rpcError } from '../helpers/rpc-error.js';
import { counter } from '../helpers/gate.js';

describe('upstream requests on the fast path', () => {
  it('a timed-out read is answered -32001 and cancelled upstream; reads started later time out by their own deadlines', async () => {
    const started = counter();
    const cancelled = counter();
    await using h = await startHarness({
      upstreams: {
        a: () =>
          createUpstreamServer({
            read: (_uri, signal) =>
              new Promise(() => {
                signal.addEventListener('abort', () => cancelled.hit()); // the upstream saw notifications/cancelled
                started.hit();
              }),
          }).server,
      },
      serverFields: { a: { timeoutMs: 300, concurrency: 8, cache: false } },
    });
    const c = await h.client();
    const first = rpcError(c.readResource({ uri: 'a+x://1' }));
    await started.until(1);
    const later = rpcError(c.readResource({ uri: 'a+x://2' }));
    await started.until(2);
    expect((await first).code).toBe(-32001);
    expect((await later).code).toBe(-32001);
    await cancelled.until(2);
  });

  it('an upstream error keeps its code and message; a malformed result fails that read only', async () => {
    await using h = await startHarness({
      upstreams: {
        a: () =>
          createUpstreamServer({
            read: (uri) => {
              if (uri === 'bad:1') return { contents: 'not a list' };
              if (uri === 'ok:1') return { contents: [{ uri, text: 'fine' }] };
              throw new Error('boom');
            },
          }).server,
      },
      serverFields: { a: { cache: false } },
    });
    const c = await h.client();
    expect((await rpcError(c.readResource({ uri: 'a+boom:1' }))).code).toBe(-32603);
    expect((await rpcError(c.readResource({ uri: 'a+bad:1' }))).code).toBe(-32603);
    expect((await c.readResource({ uri: 'a+ok:1' })).contents[0]).toMatchObject({ text: 'fine' });
  });
});
