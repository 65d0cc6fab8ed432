// LineTransport: framing across chunks, one write per turn, parse errors, size limit, close.
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { LineTransport } from '../../src/line-transport.js';
import { counter, deferred } from '../helpers/gate.js';

function setup(options = {}) {
  const input = new PassThrough();
  const writes: string[] = [];
  let wrote = deferred();
  const output = new Writable({
    write(chunk, _enc, cb) {
      writes.push(String(chunk));
      wrote.resolve();
      cb();
    },
  });
  const t = new LineTransport(input, output, options);
  const messages: unknown[] = [];
  const received = counter();
  const errors: Error[] = [];
  t.onmessage = (m) => {
    messages.push(m);
    received.hit();
  };
  t.onerror = (e) => errors.push(e);
  return {
    t,
    input,
    writes,
    messages,
    received,
    errors,
    nextWrite: async () => {
      await wrote.promise;
      wrote = deferred();
    },
  };
}

const ping = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', id, method: 'ping' });

describe('LineTransport', () => {
  it('frames messages split across chunks, several per chunk, with CRLF and blank lines', async () => {
    const s = setup();
    await s.t.start();
    const wire = `${JSON.stringify(ping(1))}\r\n\n${JSON.stringify(ping(2))}\n${JSON.stringify({ ...ping(3), params: { s: 'é✓' } })}\n`;
    const bytes = Buffer.from(wire);
    const cuts = [0, 5, 17, 40, 41, bytes.length - 6, bytes.length - 2, bytes.length]; // length - 6 falls inside "✓"
    for (let i = 1; i < cuts.length; i++) s.input.write(bytes.subarray(cuts[i - 1], cuts[i]));
    await s.received.until(3);
    expect(s.messages).toEqual([ping(1), ping(2), { ...ping(3), params: { s: 'é✓' } }]);
    expect(s.errors).toEqual([]);
  });

  it('coalesces every message sent in one turn into a single write', async () => {
    const s = setup();
    await s.t.start();
    await Promise.all([1, 2, 3].map((i) => s.t.send(ping(i))));
    await s.nextWrite();
    expect(s.writes).toEqual([`${[1, 2, 3].map((i) => JSON.stringify(ping(i))).join('\n')}\n`]);
  });

  it('reports a non-JSON line and, on the server side, answers it with -32700', async () => {
    const s = setup({ replyToParseErrors: true });
    await s.t.start();
    s.input.write('this is not json\n[1,2]\n');
    await s.nextWrite();
    expect(s.errors).toHaveLength(2);
    expect(s.messages).toEqual([]);
    const replies = s.writes.join('').trim().split('\n').map((l) => JSON.parse(l) as unknown);
    expect(replies).toEqual([
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } },
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } },
    ]);
  });

  it('closes when a message exceeds the size limit', async () => {
    const s = setup({ maxMessageBytes: 64 });
    const closed = deferred();
    s.t.onclose = () => closed.resolve();
    await s.t.start();
    s.input.write('x'.repeat(100));
    await closed.promise;
    expect(s.errors[0]?.message).toMatch(/exceeds 64 bytes/);
    await expect(s.t.send(ping(1))).rejects.toThrow('Not connected');
  });

  it('flushes pending messages on close, and closes once', async () => {
    const s = setup();
    let closes = 0;
    s.t.onclose = () => closes++;
    await s.t.start();
    void s.t.send(ping(9));
    await s.t.close();
    await s.t.close();
    expect(s.writes).toEqual([`${JSON.stringify(ping(9))}\n`]);
    expect(closes).toBe(1);
  });
});
