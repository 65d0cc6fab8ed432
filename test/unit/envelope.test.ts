// Envelope classification: table-driven over valid and malformed JSON-RPC messages.
import { describe, expect, it } from 'vitest';
import { classify, readableId } from '../../src/wire/envelope.js';

describe('classify', () => {
  it.each([
    [{ jsonrpc: '2.0', id: 1, method: 'ping' }, { kind: 'request' }],
    [{ jsonrpc: '2.0', id: 'a', method: 'x', params: {} }, { kind: 'request' }],
    [{ jsonrpc: '2.0', method: 'notifications/x' }, { kind: 'notification' }],
    [{ jsonrpc: '2.0', id: 3, result: {} }, { kind: 'response' }],
    [{ jsonrpc: '2.0', id: 3, error: { code: -1, message: 'm' } }, { kind: 'response' }],
  ])('accepts %j', (message, expected) => {
    expect(classify(message)).toEqual(expected);
  });

  it.each([
    // [message, id to answer with, answered?]
    [[{ jsonrpc: '2.0', id: 1, method: 'ping' }], null, true],
    ['text', null, true],
    [null, null, true],
    [{ jsonrpc: '2.0', id: 1.5, method: 'ping' }, 1.5, true],
    [{ jsonrpc: '2.0', id: null, method: 'ping' }, null, true],
    [{ jsonrpc: '2.0', id: true, method: 'ping' }, null, true],
    [{ jsonrpc: '2.0', id: [1], method: 'ping' }, null, true],
    [{ jsonrpc: '2.0', id: 2, method: 7 }, 2, true],
    [{ jsonrpc: '2.0', id: 2, method: 'x', params: [] }, 2, true],
    [{ jsonrpc: '2.0', id: 2, method: 'x', params: 'p' }, 2, true],
    [{ jsonrpc: '2.0', id: 2, method: 'x', params: null }, 2, true],
    [{ jsonrpc: '2.0', id: 2, method: 'x', result: {} }, 2, true],
    [{ jsonrpc: '1.0', id: 'v', method: 'x' }, 'v', true],
    [{ id: 'v', method: 'x' }, 'v', true],
    [{ jsonrpc: '2.0', id: 4 }, 4, true],
    [{ jsonrpc: '2.0', method: 'x', params: 1 }, null, true],
    // response-shaped: never answered
    [{ jsonrpc: '2.0', id: 5, result: [] }, 5, false],
    [{ jsonrpc: '2.0', id: 5, error: 'x' }, 5, false],
    [{ jsonrpc: '2.0', id: 5, result: {}, error: { code: 1, message: 'm' } }, 5, false],
    [{ jsonrpc: '2.0', id: 1.5, result: {} }, 1.5, false],
    [{ id: 6, result: {} }, 6, false],
  ])('refuses %j (answer id %j, answered: %j)', (message, id, answer) => {
    const e = classify(message);
    expect(e).toMatchObject({ kind: 'invalid', id, answer });
    expect((e as { reason: string }).reason).toMatch(/\S/);
  });

  it('reads ids as sent when they are strings or finite numbers', () => {
    expect([readableId('a'), readableId(1.5), readableId(-3), readableId(Number.NaN), readableId({}), readableId(undefined)]).toEqual([
      'a',
      1.5,
      -3,
      null,
      null,
      null,
    ]);
  });
});
