// Composite cursors: round trip, tamper evidence, kind and epoch checks.
import { describe, expect, it } from 'vitest';
import { createCursorCodec, type CursorPosition } from '../../src/federation/cursor.js';
import { ErrorCodes, ProxyError } from '../../src/errors.js';

const key = Buffer.alloc(32, 7);
const codec = createCursorCodec(key);
const pos: CursorPosition = { kind: 'resources', epoch: 'e1', index: 3, upstreamCursor: 'up:c/2', pages: 4, nonce: 'n1' };

const rejects = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ProxyError);
    expect((err as ProxyError).code).toBe(ErrorCodes.INVALID_CURSOR);
    return;
  }
  throw new Error('expected INVALID_CURSOR');
};

describe('cursor codec', () => {
  it('round-trips a position, with and without an upstream cursor', () => {
    expect(codec.decode(codec.encode(pos), 'resources', 'e1')).toEqual(pos);
    const { nonce: _n, ...fresh } = { ...pos, upstreamCursor: undefined, pages: 0 };
    expect(codec.decode(codec.encode(fresh), 'resources', 'e1')).toEqual(fresh);
  });

  it('carries the offset inside the upstream page (a split page), and leaves 0 out', () => {
    const split = { ...pos, offset: 93 };
    expect(codec.decode(codec.encode(split), 'resources', 'e1')).toEqual(split);
    expect(codec.decode(codec.encode({ ...pos, offset: 0 }), 'resources', 'e1')).toEqual(pos);
  });

  it('carries the list’s private scope to later pages, sealed like the rest', () => {
    const token = codec.encode({ kind: 'resources', epoch: 'e', index: 1, upstreamCursor: 'c', pages: 1, private: true });
    expect(codec.decode(token, 'resources', 'e').private).toBe(true);
    expect(codec.decode(codec.encode({ kind: 'resources', epoch: 'e', index: 1, upstreamCursor: 'c', pages: 1 }), 'resources', 'e')).not.toHaveProperty(
      'private',
    );
  });

  it('is bound to the caller it was issued to: another binding cannot open it', () => {
    const token = codec.encode(pos, 'alice');
    expect(codec.decode(token, 'resources', 'e1', 'alice')).toEqual(pos);
    rejects(() => codec.decode(token, 'resources', 'e1', 'bob'));
    rejects(() => codec.decode(token, 'resources', 'e1'));
  });

  it('reveals nothing: neither the upstream cursor nor which upstream comes next', () => {
    const a = codec.encode({ ...pos, index: 1 });
    const b = codec.encode({ ...pos, index: 1 });
    expect(a).not.toBe(b); // a fresh IV each time
    expect(Buffer.from(a.split('.')[1]!, 'base64url').toString('latin1')).not.toMatch(/e1|up:c/);
  });

  it('is opaque: the upstream cursor does not appear verbatim', () => {
    expect(codec.encode(pos)).not.toContain('up:c/2');
  });

  it('refuses a cursor whose body was altered', () => {
    const token = codec.encode(pos);
    const forged = codec.encode({ ...pos, index: 0 });
    const [, mac] = token.split('.');
    const [body] = forged.split('.');
    rejects(() => codec.decode(`${body}.${mac}`, 'resources', 'e1'));
  });

  it('refuses a cursor signed with another key (another process)', () => {
    const other = createCursorCodec(Buffer.alloc(32, 8));
    rejects(() => codec.decode(other.encode(pos), 'resources', 'e1'));
  });

  it('refuses a cursor of the other list, or of another epoch', () => {
    rejects(() => codec.decode(codec.encode(pos), 'templates', 'e1'));
    rejects(() => codec.decode(codec.encode(pos), 'resources', 'e2'));
  });

  it.each(['', 'abc', 'abc.def', '.', 'x'.repeat(9000), `${Buffer.from('[]').toString('base64url')}.AAAA`])('refuses garbage %#', (token) =>
    rejects(() => codec.decode(token, 'resources', 'e1')),
  );

  it('needs a key of at least 16 bytes', () => {
    expect(() => createCursorCodec(Buffer.alloc(8))).toThrow();
  });
});
