// The gateway's sealed requestState: opaque, authenticated, bound to principal, server, method and subject, and expiring.
import { describe, expect, it } from 'vitest';
import { createInputStateCodec, type InputBinding } from '../../src/eras/input-state.js';

const KEY = new Uint8Array(32).fill(7);
const BINDING: InputBinding = { principal: 'ada', server: 'docs', method: 'resources/read', subject: 'file:///a.md' };
const STATE = { kind: 'upstream' as const, state: 'secret-upstream-state', asked: { q: 'elicitation/create' } };

describe('input state codec', () => {
  it('opens what it sealed for the same binding, and hides the upstream state', () => {
    const codec = createInputStateCodec(KEY, 1000, () => 0);
    const token = codec.seal(STATE, BINDING);
    expect(codec.open(token, BINDING)).toEqual(STATE);
    expect(token).not.toContain('secret');
    expect(Buffer.from(token, 'base64url').toString('latin1')).not.toContain('secret');
    expect(codec.seal(STATE, BINDING)).not.toBe(token); // a fresh nonce each time
  });

  it.each([
    ['another principal', { principal: 'mallory' }],
    ['another server', { server: 'other' }],
    ['another method', { method: 'tools/call' }],
    ['another subject', { subject: 'file:///b.md' }],
  ])('refuses it for %s', (_what, change) => {
    const codec = createInputStateCodec(KEY, 1000, () => 0);
    const token = codec.seal(STATE, BINDING);
    expect(() => codec.open(token, { ...BINDING, ...change })).toThrow('Invalid or expired requestState');
  });

  it('refuses every single-bit change, a truncation, garbage, a huge token, and another key', () => {
    const codec = createInputStateCodec(KEY, 1000, () => 0);
    const token = codec.seal(STATE, BINDING);
    const bytes = Buffer.from(token, 'base64url');
    for (let i = 0; i < bytes.length; i++) {
      const t = Buffer.from(bytes);
      t[i] = t[i]! ^ 0x80;
      expect(() => codec.open(t.toString('base64url'), BINDING)).toThrow('Invalid or expired requestState');
    }
    expect(() => codec.open(token.slice(0, 20), BINDING)).toThrow('Invalid or expired requestState');
    expect(() => codec.open('', BINDING)).toThrow('Invalid or expired requestState');
    expect(() => codec.open('x'.repeat(100_000), BINDING)).toThrow('Invalid or expired requestState');
    expect(() => createInputStateCodec(new Uint8Array(32).fill(8), 1000, () => 0).open(token, BINDING)).toThrow('Invalid or expired requestState');
  });

  it('expires after its TTL on the injected clock', () => {
    let now = 5_000;
    const codec = createInputStateCodec(KEY, 1000, () => now);
    const token = codec.seal(STATE, BINDING);
    now += 1000;
    expect(codec.open(token, BINDING).kind).toBe('upstream');
    now += 1;
    expect(() => codec.open(token, BINDING)).toThrow('Invalid or expired requestState');
  });
});
