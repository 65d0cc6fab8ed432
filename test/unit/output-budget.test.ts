// OutputBudget over real HTTP on 127.0.0.1: a client that does not read fills its principal's budget, the write past it closes that response.
import { createServer, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { OutputBudget } from '../../src/serve/http/output-budget.js';
import { PrincipalCounter } from '../../src/access/principal-counter.js';

const MiB = 1024 * 1024;

describe('OutputBudget', () => {
  const cleanup: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanup.splice(0)) c();
  });

  /** A server answering each request with `size` bytes for the principal in its path, and a way to send requests that are never read. */
  async function serve(budget: OutputBudget, size: number) {
    const responses: ServerResponse[] = [];
    const arrived: (() => void)[] = [];
    const server = createServer((req, res) => {
      budget.track(req.url!.slice(1), res);
      responses.push(res);
      res.end(Buffer.alloc(size, 0x61));
      arrived.shift()?.();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const sockets: Socket[] = [];
    cleanup.push(() => {
      for (const s of sockets) s.destroy();
      server.close();
    });
    const unread = (principal: string) =>
      new Promise<Socket>((resolve) => {
        arrived.push(() => setImmediate(() => resolve(socket)));
        const socket = connect(port, '127.0.0.1', () => socket.write(`GET /${principal} HTTP/1.1\r\nhost: x\r\n\r\n`));
        socket.on('error', () => undefined);
        socket.pause();
        sockets.push(socket);
      });
    return { responses, unread };
  }

  it('closes the response whose write takes its principal past the bound; the first answer always goes; others are unaffected', async () => {
    const closed: string[] = [];
    const budget = new OutputBudget({ max: 4 * MiB, onClose: (p) => closed.push(p) });
    const { responses, unread } = await serve(budget, 16 * MiB); // larger than the bound, and than the kernel's buffers
    await unread('mallory');
    expect(responses[0]!.destroyed).toBe(false); // its only answer: let through
    expect(budget.full('mallory')).toBe(true);
    expect(budget.queued('mallory')).toBeGreaterThan(4 * MiB);
    await unread('mallory');
    expect(responses[1]!.destroyed).toBe(true);
    expect(closed).toEqual(['mallory']);
    expect(budget.queued('alice')).toBe(0);
    await unread('alice');
    expect(responses[2]!.destroyed).toBe(false);
    expect(budget.full('alice')).toBe(true); // alice's own unread answer, not mallory's
  });

  it('frees the principal once its unread responses close', async () => {
    const budget = new OutputBudget({ max: 4 * MiB });
    const { responses, unread } = await serve(budget, 16 * MiB);
    const socket = await unread('mallory');
    expect(budget.full('mallory')).toBe(true);
    const gone = new Promise((r) => responses[0]!.once('close', r));
    socket.destroy();
    await gone; // the server saw the connection end
    expect(budget.queued('mallory')).toBe(0);
  });
});

describe('PrincipalCounter', () => {
  it('holds each principal to the bound, apart; release is idempotent and gives one back', () => {
    const c = new PrincipalCounter(2);
    const a1 = c.acquire('a')!;
    expect(c.acquire('a')).toBeDefined();
    expect(c.acquire('a')).toBeUndefined();
    expect(c.acquire('b')).toBeDefined();
    a1();
    a1();
    expect(c.count('a')).toBe(1);
    expect(c.acquire('a')).toBeDefined();
    expect(c.acquire('a')).toBeUndefined();
  });
});
