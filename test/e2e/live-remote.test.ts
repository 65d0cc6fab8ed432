// A Streamable HTTP upstream that goes away and comes back: unavailable at once, then reconnected with a new session.
import { describe, expect, it } from 'vitest';
import { type LogRecord } from '../helpers/logs.js';
import { RemoteFixture } from '../helpers/remote-fixture.js';
import { rpcError } from '../helpers/rpc-error.js';
import { ProxyProcess } from '../helpers/sdk-clients.js';

/** Resolves once a record matching `predicate` is logged after this call (waitForLog also sees earlier ones). */
function nextLog(proxy: ProxyProcess, predicate: (r: LogRecord) => boolean): Promise<LogRecord> {
  const seen = proxy.logs().filter(predicate).length;
  return proxy.waitForLog((r) => predicate(r) && proxy.logs().filter(predicate).length > seen);
}

const stats = async (proxy: ProxyProcess, n: number) =>
  JSON.parse(((await proxy.client.readResource({ uri: `web+fixture://stats?n=${n}` })).contents[0] as { text: string }).text) as {
    pid: number;
  };

describe('remote upstream restarts', () => {
  it('marks a stopped HTTP upstream unavailable, and reconnects when it is back on the same address', async () => {
    let server = await RemoteFixture.start('http');
    const port = server.port;
    try {
      await using proxy = await ProxyProcess.start(
        {
          servers: { web: { url: server.url, timeoutMs: 5000 } },
          reconnect: { initialDelayMs: 100, maxDelayMs: 200 },
        },
        { logLevel: 'info' },
      );
      const firstPid = (await stats(proxy, 1)).pid;
      expect((await proxy.client.readResource({ uri: 'web+fixture://res/1' })).contents[0]?.uri).toBe('web+fixture://res/1');

      await server[Symbol.asyncDispose](); // the server goes away: the next request cannot connect
      const lost = nextLog(proxy, (r) => r.msg === 'upstream connection lost' && r.server === 'web');
      expect((await rpcError(proxy.client.readResource({ uri: 'web+fixture://res/2' }))).code).toBe(-32002);
      await lost;
      await nextLog(proxy, (r) => r.msg === 'reconnect scheduled' && r.server === 'web');
      expect((await rpcError(proxy.client.readResource({ uri: 'web+fixture://res/3' }))).code).toBe(-32002);

      const ready = nextLog(proxy, (r) => r.msg === 'upstream ready' && r.server === 'web');
      server = await RemoteFixture.startOn('http', port); // back where it was, with no sessions
      await ready;
      const second = await stats(proxy, 2);
      expect(second.pid).not.toBe(firstPid);
      expect((await proxy.client.readResource({ uri: 'web+fixture://res/4' })).contents[0]?.uri).toBe('web+fixture://res/4');
    } finally {
      await server[Symbol.asyncDispose]();
    }
  });

  it('treats a restarted server that no longer knows our session (404) as a lost connection', async () => {
    let server = await RemoteFixture.start('http');
    const port = server.port;
    try {
      await using proxy = await ProxyProcess.start(
        { servers: { web: { url: server.url } }, reconnect: { initialDelayMs: 100, maxDelayMs: 200 } },
        { logLevel: 'info' },
      );
      const firstPid = (await stats(proxy, 1)).pid;
      await server[Symbol.asyncDispose]();
      server = await RemoteFixture.startOn('http', port); // restarted before the proxy noticed anything
      const lost = nextLog(proxy, (r) => r.msg === 'upstream connection lost' && r.server === 'web');
      const ready = nextLog(proxy, (r) => r.msg === 'upstream ready' && r.server === 'web');
      expect((await rpcError(proxy.client.readResource({ uri: 'web+fixture://res/5' }))).code).toBe(-32002);
      expect(String((await lost).err)).toContain('Session not found');
      await ready;
      expect((await stats(proxy, 2)).pid).not.toBe(firstPid);
    } finally {
      await server[Symbol.asyncDispose]();
    }
  });
});
