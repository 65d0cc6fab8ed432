// MessageSniffer: what a JSON-RPC message is, from its top-level keys, however its bytes are split.
import { describe, expect, it } from 'vitest';
import { MessageSniffer, type Sniffed } from '../../src/upstream/message-sniffer.js';

const bytes = new TextEncoder();

function sniff(text: string, chunk = Number.POSITIVE_INFINITY): Sniffed {
  const all = bytes.encode(text);
  const s = new MessageSniffer();
  for (let at = 0; at < all.length; at += chunk) s.feed(all.subarray(at, Math.min(all.length, at + chunk)));
  return s.result();
}

describe('MessageSniffer', () => {
  it.each<[string, string, Sniffed]>([
    ['a result with the id last', '{"result":{"contents":[]},"jsonrpc":"2.0","id":12}', { kind: 'response', id: 12 }],
    ['an error with a string id first', '{"id":"a-1","jsonrpc":"2.0","error":{"code":-1,"message":"x"}}', { kind: 'response', id: 'a-1' }],
    ['spaces and an escaped id', ' { "jsonrpc" : "2.0" , "id" : "\\u00e9\\"" , "result" : {} } ', { kind: 'response', id: 'é"' }],
    ['a negative, exponent id', '{"result":1,"id":-2e3}', { kind: 'response', id: -2000 }],
    ['nested ids and look-alike strings ignored', '{"result":{"id":5,"s":"\\",\\"id\\":6"},"x":["id",{"id":7}],"id":8}', { kind: 'response', id: 8 }],
    ['escaped backslashes before a quote', '{"result":"a\\\\\\\\","id":3}', { kind: 'response', id: 3 }],
    ['a request', '{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}', { kind: 'call' }],
    ['a notification', '{"jsonrpc":"2.0","method":"notifications/message","params":{"id":1}}', { kind: 'call' }],
    ['a null id', '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}', { kind: 'unknown' }],
    ['an object id', '{"id":{"a":1},"result":{}}', { kind: 'unknown' }],
    ['no outcome', '{"jsonrpc":"2.0","id":4}', { kind: 'unknown' }],
    ['a batch', '[{"id":1,"result":{}}]', { kind: 'unknown' }],
    ['garbage', 'xxxx"{{{', { kind: 'unknown' }],
    ['a truncated message', '{"id":9,"result":"abc', { kind: 'unknown' }],
  ])('%s', (_name, text, expected) => {
    for (const chunk of [Number.POSITIVE_INFINITY, 1, 2, 3, 5]) expect(sniff(text, chunk)).toEqual(expected);
  });

  it('skips over a long string value without keeping it, and still finds the id after it', () => {
    const text = `{"result":{"text":"${'\\\\'.repeat(5000)}${'x'.repeat(100_000)}\\""},"id":"end"}`;
    for (const chunk of [Number.POSITIVE_INFINITY, 1, 4096, 4097]) expect(sniff(text, chunk)).toEqual({ kind: 'response', id: 'end' });
  });

  it('gives up on keys and ids too long to be ones JSON-RPC uses', () => {
    expect(sniff(`{"${'k'.repeat(1000)}":1,"result":{},"id":1}`)).toEqual({ kind: 'response', id: 1 });
    expect(sniff(`{"result":{},"id":"${'i'.repeat(1000)}"}`)).toEqual({ kind: 'unknown' });
  });
});
