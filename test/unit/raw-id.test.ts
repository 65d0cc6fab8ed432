// Numeric ids as sent: the top-level id lexeme, and the in-flight id set that echoes and refuses duplicates.
import { describe, expect, it } from 'vitest';
import { errorText } from '../../src/errors.js';
import { RequestIds, numericIdLexeme, spelledId, withRawId } from '../../src/wire/raw-id.js';

describe('numericIdLexeme', () => {
  it.each([
    ['{"jsonrpc":"2.0","id":1e2,"method":"ping"}', '1e2'],
    ['{"id" : -1.50E+3 ,"method":"ping"}', '-1.50E+3'],
    ['{"method":"x","params":{"id":5,"a":[{"id":6}]},"id":12345678901234567890}', '12345678901234567890'],
    ['{"params":{"s":"\\"id\\":9"},"id":7}', '7'],
    ['{"\\u0069d":1.0}', '1.0'],
    ['{"id":1,"id":2e0}', '2e0'],
    ['{"id":"7"}', undefined],
    ['{"params":{"id":5},"id":6}', '6'],
    ['{"a":"x\\"id","id":1.0}', '1.0'],
    ['{"id" :\n 3E1}', '3E1'],
  ])('%s -> %s (a message whose parsed id is a number)', (text, lexeme) => {
    expect(numericIdLexeme(text)).toBe(lexeme);
  });
});

describe('RequestIds', () => {
  it('echoes an admitted numeric id as sent and releases it with the answer', () => {
    const ids = new RequestIds();
    expect(ids.admit(100, '{"id":1e2,"method":"ping"}')).toBe(true);
    expect(ids.admit(100, '{"id":100,"method":"ping"}')).toBe(false);
    expect(ids.serialise({ jsonrpc: '2.0', id: 100, result: {} } as never)).toBe('{"id":1e2,"jsonrpc":"2.0","result":{}}');
    expect(ids.size).toBe(0);
    expect(ids.admit(100, '{"id":100,"method":"ping"}')).toBe(true);
    expect(ids.serialise({ jsonrpc: '2.0', id: 100, result: {} } as never)).toBe('{"jsonrpc":"2.0","id":100,"result":{}}');
  });

  it('refuses a second string id in flight; a cancel frees it; unreadable ids are not held', () => {
    const ids = new RequestIds();
    expect(ids.admit('a', '')).toBe(true);
    expect(ids.admit('a', '')).toBe(false);
    ids.release('a');
    expect(ids.admit('a', '')).toBe(true);
    expect(ids.admit(Infinity, '{"id":1e400}')).toBe(true);
    expect(ids.admit(null, '')).toBe(true);
    expect(ids.size).toBe(1);
  });

  it('leaves requests and notifications it sends alone', () => {
    const ids = new RequestIds();
    ids.admit(1, '{"id":1.0,"method":"x"}');
    expect(ids.serialise({ jsonrpc: '2.0', id: 1, method: 'ping' } as never)).toBe('{"jsonrpc":"2.0","id":1,"method":"ping"}');
    expect(ids.has(1)).toBe(true);
  });
});

describe('text helpers', () => {
  it('spelledId, withRawId and errorText write ids as given', () => {
    expect(spelledId(1.5, '{"id":1.50}')).toBe('1.50');
    expect(spelledId('x"', '')).toBe('"x\\""');
    expect(spelledId(null, '')).toBe('null');
    expect(withRawId({ id: 1 }, '1.0')).toBe('{"id":1.0}');
    expect(JSON.parse(errorText('1e2', -32600, 'm', { limit: 1 }))).toEqual({
      jsonrpc: '2.0',
      id: 100,
      error: { code: -32600, message: 'm', data: { limit: 1 } },
    });
  });
});
