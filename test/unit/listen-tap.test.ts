// The listen tap: filters narrowed to accepted URIs before the entry sees them; holds released when a listen ends.
import { describe, expect, it } from 'vitest';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { ListenTap, type ListenCounter } from '../../src/eras/listen-tap.js';

/** A transport whose inbound messages we push and whose entry (onmessage) and wire (send) we record. */
function harness(accepting: (uri: string) => boolean, counter?: ListenCounter) {
  const delivered: Record<string, unknown>[] = [];
  const sent: Record<string, unknown>[] = [];
  const held = new Map<string, number>();
  // eslint-disable-next-line prefer-const -- assigned below, after the transport whose closures refer to it
  let tap: ListenTap | undefined;
  // The tap's wrappers around an entry (delivered) and a wire (sent).
  const transport = {
    start: async () => undefined,
    close: async () => undefined,
    send: (m: JSONRPCMessage) => tap!.send(async (x: JSONRPCMessage) => void sent.push(x))(m),
    onmessage: (m: JSONRPCMessage) => tap!.receive((x: JSONRPCMessage) => void delivered.push(x as never))(m),
  } as unknown as Transport;
  tap = new ListenTap(
    {
      accept: async (uri) => {
        if (!accepting(uri)) return undefined;
        held.set(uri, 1); // a session holds a URI or not (the relay's subscribe is idempotent)
        return uri;
      },
      release: (uri) => void held.set(uri, 0),
    },
    counter,
  );
  const push = (m: Record<string, unknown>) => transport.onmessage?.(m as never);
  const settle = () => new Promise((r) => setImmediate(r));
  return { transport, tap, delivered, sent, held, push, settle };
}

const listen = (id: string | number, uris: unknown, extra: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'subscriptions/listen',
  params: { notifications: { resourceSubscriptions: uris, ...extra }, _meta: { k: 1 } },
});

describe('ListenTap', () => {
  it('forwards a listen narrowed to the accepted URIs (deduplicated), keeping the rest of the filter and params', async () => {
    const h = harness((u) => u.startsWith('a+'));
    h.push(listen(1, ['a+x', 'nobody+y', 'a+x', 'a+z'], { resourcesListChanged: true }));
    await h.settle();
    expect(h.delivered).toEqual([{ ...listen(1, ['a+x', 'a+z'], { resourcesListChanged: true }) }]);
    expect(h.tap.size).toBe(2);
  });

  it('releases a listen’s URIs when its answer goes out or the client cancels it; a URI held by two listens stays until both end', async () => {
    const h = harness(() => true);
    h.push(listen('l1', ['a+x', 'a+y']));
    h.push(listen('l2', ['a+x']));
    await h.settle();
    expect([...h.held]).toEqual([
      ['a+x', 1],
      ['a+y', 1],
    ]); // the second listen reuses the session's hold
    await h.transport.send({ jsonrpc: '2.0', id: 'l1', result: {} } as never); // graceful end
    await h.settle();
    expect([...h.held]).toEqual([
      ['a+x', 1],
      ['a+y', 0],
    ]);
    h.push({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'l2' } });
    await h.settle();
    expect([...h.held]).toEqual([
      ['a+x', 0],
      ['a+y', 0],
    ]);
    expect(h.tap.size).toBe(0);
    expect(h.delivered.at(-1)).toMatchObject({ method: 'notifications/cancelled' }); // the entry still sees the cancel
  });

  it('a listen cancelled before its URIs are settled is never forwarded, and gives back what it took', async () => {
    const h = harness(() => true);
    h.push(listen(7, ['a+x']));
    h.push({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } });
    await h.settle();
    expect(h.delivered.map((m) => m.method)).toEqual(['notifications/cancelled']);
    expect(h.held.get('a+x')).toBe(0);
  });

  it('passes malformed filters and other messages through untouched, in order', async () => {
    const h = harness(() => true);
    const odd = listen(3, 'not-an-array');
    const read = { jsonrpc: '2.0', id: 4, method: 'resources/read', params: { uri: 'a+x' } };
    h.push(odd);
    h.push(read);
    await h.settle();
    expect(h.delivered).toEqual([odd, read]);
    expect(h.held.size).toBe(0);
  });

  it('counts each forwarded listen open once, and ended once by its answer or its cancel; refused and unsettled ones never count', async () => {
    let open = 0;
    const seen: number[] = [];
    const h = harness((u) => u.startsWith('a+'), {
      opened: () => void seen.push(++open),
      ended: () => void seen.push(--open),
    });
    h.push(listen('l1', ['a+x']));
    h.push(listen('l2', 'no-filter')); // forwarded as it is: the entry serves it, so it is open too
    h.push(listen('l3', ['a+y']));
    h.push({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'l3' } }); // cancelled before it was settled
    await h.settle();
    expect(open).toBe(2);
    await h.transport.send({ jsonrpc: '2.0', id: 'l1', result: {} } as never); // graceful end
    await h.transport.send({ jsonrpc: '2.0', id: 'l1', result: {} } as never); // a second answer ends nothing more
    h.push({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'l2' } });
    h.push({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'l2' } });
    await h.transport.send({ jsonrpc: '2.0', id: 99, result: {} } as never); // not a listen
    await h.settle();
    expect(seen).toEqual([1, 2, 1, 0]);
  });
});
