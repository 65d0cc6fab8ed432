// In-flight bound: a client past maxInFlight stops being read until answers go out; cancels count as answers.
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Server } from '@modelcontextprotocol/server';
import { compose } from '../../src/wire/compose.js';
import { deliverTo, guardedTail, installDispatch } from '../../src/wire/dispatch.js';
import { inFlightBound, serverEdge } from '../../src/wire/server-edge.js';
import { InFlightGate } from '../../src/wire/in-flight.js';
import { LineTransport } from '../../src/wire/line-transport.js';
import { counter, deferred } from '../helpers/gate.js';

describe('InFlightGate', () => {
  it('pauses at the bound, resumes at half, counts a reused id once per request, ignores unknown ids', () => {
    const events: string[] = [];
    const gate = new InFlightGate(
      4,
      () => events.push('pause'),
      () => events.push('resume'),
    );
    for (const id of [1, 1, 2, 'x']) gate.opened(id);
    expect(events).toEqual(['pause']);
    gate.closed(99);
    gate.closed('1'); // not the number 1
    gate.closed(1);
    expect(gate.size).toBe(3);
    gate.closed(1);
    expect(events).toEqual(['pause', 'resume']);
    gate.closed(1); // both requests with id 1 are settled: ignored
    expect(gate.size).toBe(2);
  });
});

describe('the server guard with maxInFlight', () => {
  it('stops reading a client that has maxInFlight requests unanswered, and reads on once they are answered or cancelled', async () => {
    const release = deferred();
    const started = counter();
    const server = new Server({ name: 's', version: '1' }, { capabilities: { resources: {} } });
    server.setRequestHandler('resources/read', async (req) => {
      started.hit();
      await release.promise;
      return { contents: [{ uri: req.params.uri, text: 'ok' }] };
    });
    const input = new PassThrough();
    const answers: Record<string, unknown>[] = [];
    const answered = counter();
    const output = new Writable({
      write(chunk, _enc, cb) {
        for (const line of String(chunk).split('\n').filter(Boolean)) {
          answers.push(JSON.parse(line) as Record<string, unknown>);
          answered.hit();
        }
        cb();
      },
    });
    const transport = new LineTransport(input, output);
    // Composed as a connection has it: the edge, the bound, then the Server behind a guarded tail.
    const bound = inFlightBound(transport, 4)!;
    const wire = compose([bound.send], (m) => transport.send(m));
    const tail = guardedTail(wire, () => transport.close());
    const edge = serverEdge(transport, wire, compose([bound.receive], deliverTo(tail)));
    transport.onmessage = edge.onmessage;
    transport.onrefused = edge.onrefused;
    await transport.start();
    await server.connect(tail);
    installDispatch(server, tail, 'server');
    const read = (id: number) => `${JSON.stringify({ jsonrpc: '2.0', id, method: 'resources/read', params: { uri: `x://${id}` } })}\n`;
    const cancel = (id: number) => `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } })}\n`;
    // A cancel is an answer the SDK never sends: request 1 no longer counts, so five fit under a bound of four.
    input.write([1, 2, 3].map(read).join('') + cancel(1));
    await started.until(3);
    input.write([4, 5].map(read).join(''));
    await started.until(5);
    expect(input.isPaused()).toBe(true);
    input.write(read(6)); // waits in the pipe, unread while four are in flight
    await new Promise((r) => setImmediate(r));
    expect(started.count).toBe(5);
    release.resolve(); // answers go out: reading resumes and request 6 is served
    await answered.until(5);
    expect(answers.map((a) => a.id).sort()).toEqual([2, 3, 4, 5, 6]);
    expect(input.isPaused()).toBe(false);
    await server.close();
  });
});
