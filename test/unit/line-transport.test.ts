// LineTransport: framing, bounded input (size, depth, parse errors), bounded and coalesced output, loss reports, close.
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { idAtEnd, idAtStart, LineTransport, type LineTransportOptions, type OutputLoss, type Refusal } from '../../src/wire/line-transport.js';
import { notificationCoalesceKey } from '../../src/protocol.js';
import { counter, deferred } from '../helpers/gate.js';

function setup(options: LineTransportOptions = {}) {
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
  const refusals: Refusal[] = [];
  const errors: Error[] = [];
  t.onmessage = (m) => {
    messages.push(m);
    received.hit();
  };
  t.onrefused = (r) => {
    refusals.push(r);
    received.hit();
  };
  t.onerror = (e) => errors.push(e);
  return {
    t,
    input,
    writes,
    messages,
    refusals,
    received,
    errors,
    nextWrite: async () => {
      await wrote.promise;
      wrote = deferred();
    },
  };
}

/** A writable that takes one chunk and then holds it until `release()`: a client that stopped reading. */
function stalledOutput() {
  const held: (() => void)[] = [];
  const writes: string[] = [];
  const output = new Writable({
    highWaterMark: 16,
    write(chunk, _enc, cb) {
      writes.push(String(chunk));
      held.push(() => cb());
    },
  });
  return { output, writes, release: () => held.splice(0).forEach((cb) => cb()) };
}

const ping = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', id, method: 'ping' });
const updated = (uri: string) => ({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } }) as JSONRPCMessage;
const answer = (id: number, text: string) => ({ jsonrpc: '2.0', id, result: { contents: [{ uri: 'x', text }] } }) as JSONRPCMessage;
const lines = (writes: string[]) =>
  writes
    .join('')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('LineTransport input', () => {
  it('frames messages split across chunks, several per chunk, with CRLF and blank lines', async () => {
    const s = setup();
    await s.t.start();
    const wire = `${JSON.stringify(ping(1))}\r\n\n${JSON.stringify(ping(2))}\n${JSON.stringify({ ...ping(3), params: { s: 'é✓' } })}\n`;
    const bytes = Buffer.from(wire);
    const cuts = [0, 5, 17, 40, 41, bytes.length - 6, bytes.length - 2, bytes.length]; // length - 6 falls inside "✓"
    for (let i = 1; i < cuts.length; i++) s.input.write(bytes.subarray(cuts[i - 1], cuts[i]));
    await s.received.until(3);
    expect(s.messages).toEqual([ping(1), ping(2), { ...ping(3), params: { s: 'é✓' } }]);
    expect(s.refusals).toEqual([]);
  });

  it('refuses a line that is not JSON and passes any JSON value on (the envelope is the dispatcher’s to judge)', async () => {
    const s = setup();
    await s.t.start();
    s.input.write('this is not json\n[1,2]\n');
    await s.received.until(2);
    expect(s.refusals).toEqual([{ reason: 'parse-error', id: null }]);
    expect(s.messages).toEqual([[1, 2]]);
  });

  it('skips an oversized line to its newline without closing, refusing it with the id from its start; the next line is served', async () => {
    const s = setup({ maxMessageBytes: 100 });
    await s.t.start();
    const big = `{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"${'u'.repeat(5000)}"}}`;
    for (let i = 0; i < big.length; i += 333) s.input.write(big.slice(i, i + 333)); // many chunks, none holding the newline
    s.input.write(`\n${JSON.stringify(ping(8))}\n`);
    await s.received.until(2);
    expect(s.refusals).toEqual([{ reason: 'too-large', id: 7, limit: 100 }]);
    expect(s.messages).toEqual([ping(8)]);
  });

  it('reads the id of an oversized line from its end when it is not at the start (the SDK puts it last)', async () => {
    const s = setup({ maxMessageBytes: 100 });
    await s.t.start();
    s.input.write(`{"result":{"contents":[{"uri":"a","text":"${'t'.repeat(500)}","id":3}]},"jsonrpc":"2.0","id":42}\n`);
    s.input.write(`{"result":{"x":"${'t'.repeat(500)}"}}\n`); // no id anywhere
    await s.received.until(2);
    expect(s.refusals).toEqual([
      { reason: 'too-large', id: 42, limit: 100 },
      { reason: 'too-large', id: null, limit: 100 },
    ]);
  });

  it('refuses a message nested deeper than maxDepth, with its top-level id; brackets inside strings do not count', async () => {
    const s = setup({ maxDepth: 50 });
    await s.t.start();
    const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    s.input.write(`{"jsonrpc":"2.0","id":"d","method":"x","params":{"a":${deep(60)}}}\n`);
    s.input.write(`{"jsonrpc":"2.0","id":2,"method":"x","params":{"a":${deep(40)},"s":"${'['.repeat(200)}"}}\n`);
    await s.received.until(2);
    expect(s.refusals).toEqual([{ reason: 'too-deep', id: 'd', limit: 50 }]);
    expect(s.messages).toHaveLength(1);
  });

  it('finds ids at the start and the end of a line', () => {
    expect(idAtStart('{"jsonrpc":"2.0","id":"abc","method"')).toBe('abc');
    expect(idAtStart('  { "id" : 1.5 , "x"')).toBe(1.5);
    expect(idAtStart('{"method":"x","id":1')).toBeUndefined();
    expect(idAtEnd('"x"}],"id":9}')).toBe(9);
    expect(idAtEnd('"id":9,"jsonrpc":"2.0"}\r')).toBe(9);
    expect(idAtEnd('{"id":9}}}')).toBeNull(); // a nested id: not the top level
  });
});

describe('LineTransport output', () => {
  it('coalesces every message sent in one turn into a single write', async () => {
    const s = setup();
    await s.t.start();
    await Promise.all([1, 2, 3].map((i) => s.t.send(ping(i))));
    await s.nextWrite();
    expect(s.writes).toEqual([`${[1, 2, 3].map((i) => JSON.stringify(ping(i))).join('\n')}\n`]);
  });

  it('waits for one drain while the peer is not reading, keeping only the newest update per URI, at the end', async () => {
    const o = stalledOutput();
    const t = new LineTransport(new PassThrough(), o.output, { coalesceKey: notificationCoalesceKey });
    await t.start();
    await t.send(ping(1)); // taken by the stream, then held: the stream needs a drain from here on
    await new Promise((r) => setImmediate(r));
    expect(o.writes).toHaveLength(1);
    for (let i = 0; i < 1000; i++) await t.send(updated('a://1'));
    await t.send(answer(2, 'after the first updates'));
    await t.send(updated('a://1'));
    await t.send(updated('b://1'));
    await new Promise((r) => setImmediate(r));
    expect(o.output.listenerCount('drain')).toBe(1);
    expect(t.pendingBytes).toBeLessThan(1000);
    const drained = new Promise((r) => o.output.once('drain', r));
    o.release();
    await drained;
    await new Promise((r) => setImmediate(r));
    expect(lines(o.writes.slice(1))).toEqual([answer(2, 'after the first updates'), updated('a://1'), updated('b://1')]);
  });

  it('gives up on a peer that falls maxQueuedBytes behind: reports the loss once and closes', async () => {
    const o = stalledOutput();
    const t = new LineTransport(new PassThrough(), o.output, { maxQueuedBytes: 10_000 });
    const losses: OutputLoss[] = [];
    const closed = deferred();
    t.onloss = (l) => losses.push(l);
    t.onclose = () => closed.resolve();
    await t.start();
    for (let i = 0; i < 100; i++) await t.send(answer(i, 'x'.repeat(500))).catch(() => undefined);
    await closed.promise;
    expect(losses).toHaveLength(1);
    expect(losses[0]).toMatchObject({ reason: 'overflow' });
    expect(losses[0]!.messages).toBeGreaterThan(1);
    await expect(t.send(ping(1))).rejects.toThrow('Not connected');
  });

  it('reports a failed write with the number of messages lost', async () => {
    const output = new Writable({
      write(_chunk, _enc, cb) {
        cb(new Error('EPIPE'));
      },
    });
    const t = new LineTransport(new PassThrough(), output);
    const lost = deferred<OutputLoss>();
    t.onloss = (l) => lost.resolve(l);
    await t.start();
    await Promise.all([1, 2, 3].map((i) => t.send(ping(i))));
    expect(await lost.promise).toMatchObject({ reason: 'write-error', error: 'EPIPE', messages: 3 });
  });

  it('answers with an error for its id when a response cannot be serialised (too deep for JSON.stringify)', async () => {
    const s = setup();
    await s.t.start();
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = [deep];
    await s.t.send({ jsonrpc: '2.0', id: 5, result: { deep } } as unknown as JSONRPCMessage);
    await s.nextWrite();
    expect(lines(s.writes)).toEqual([{ jsonrpc: '2.0', id: 5, error: { code: -32603, message: 'Internal error' } }]);
    expect(s.errors[0]?.message).toMatch(/cannot serialise/);
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
