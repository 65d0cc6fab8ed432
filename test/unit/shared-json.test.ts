// The shared JSON of cached contents: written once, spliced into answers as the same JSON JSON.stringify would give.
import { describe, expect, it } from 'vitest';
import { shareJson, stringifyMessage } from '../../src/wire/shared-json.js';
import { RequestIds } from '../../src/wire/raw-id.js';

const contentsOf = (text: string) => {
  const contents = [{ uri: 'a+fixture://x', mimeType: 'text/plain', text }];
  shareJson(contents);
  for (const c of contents) Object.freeze(c);
  return Object.freeze(contents);
};

describe('stringifyMessage', () => {
  it('gives the same JSON as JSON.stringify, for shared and unshared contents and any other fields', () => {
    const shared = contentsOf('he said "hi"\n\u2028 ✓');
    const messages = [
      { jsonrpc: '2.0', id: 7, result: { contents: shared } },
      { jsonrpc: '2.0', id: 'x', result: { contents: shared, _meta: { k: 1 }, ttlMs: 5 } },
      { result: { contents: shared } },
      { jsonrpc: '2.0', id: 1, result: { contents: [{ uri: 'u', text: 't' }] } },
      { jsonrpc: '2.0', id: 1, result: null },
      { jsonrpc: '2.0', method: 'notifications/x', params: { contents: shared } },
    ];
    for (const m of messages) expect(JSON.parse(stringifyMessage(m))).toEqual(JSON.parse(JSON.stringify(m)));
  });

  it('writes a shared value once: the text stays what it was first written as', () => {
    const shared = contentsOf('one');
    const first = stringifyMessage({ jsonrpc: '2.0', id: 1, result: { contents: shared } });
    expect(first).toContain('"text":"one"');
    // Frozen: nothing can make the text stale.
    expect(() => ((shared[0] as { text: string }).text = 'two')).toThrow(TypeError);
    expect(() => (shared as unknown as unknown[]).push({})).toThrow(TypeError);
    expect(stringifyMessage({ jsonrpc: '2.0', id: 2, result: { contents: shared } })).toContain('"text":"one"');
  });

  it('keeps the symbol out of copies and of JSON', () => {
    const shared = contentsOf('t');
    expect(Object.keys(shared)).toEqual(['0']);
    expect(JSON.stringify(shared)).toBe('[{"uri":"a+fixture://x","mimeType":"text/plain","text":"t"}]');
    expect(stringifyMessage({ result: { contents: [...shared] } })).toBe(JSON.stringify({ result: { contents: [...shared] } }));
  });

  it('an answer to a numeric id spelled differently keeps the spelling, with shared contents spliced in', () => {
    const ids = new RequestIds();
    expect(ids.admit(100, '{"jsonrpc":"2.0","id":1e2,"method":"resources/read"}')).toBe(true);
    const text = ids.serialise({ jsonrpc: '2.0', id: 100, result: { contents: contentsOf('z') } } as { id: number });
    expect(text.startsWith('{"id":1e2,')).toBe(true);
    expect(JSON.parse(text)).toEqual({ jsonrpc: '2.0', id: 100, result: { contents: [{ uri: 'a+fixture://x', mimeType: 'text/plain', text: 'z' }] } });
  });
});
