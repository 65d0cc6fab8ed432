// Composite, tamper-evident list cursors: which upstream, its own cursor, and an HMAC. Pure.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ErrorCodes, ProxyError } from '../errors.js';

/** Which list a cursor belongs to; a cursor of one list is refused by the other. */
export type ListKind = 'resources' | 'templates';

/** Where a downstream page resumes. */
export interface CursorPosition {
  /** The list this cursor continues. */
  kind: ListKind;
  /** The catalog epoch the cursor was issued in (changes when the set of upstreams changes). */
  epoch: string;
  /** Index (config order) of the upstream to resume with. */
  index: number;
  /** That upstream's own cursor, or undefined to start it from its first page. */
  upstreamCursor: string | undefined;
  /** Pages of that upstream already walked (bounds servers that return cursors forever). */
  pages: number;
  /** Makes every issued cursor unique (two clients at the same position get different tokens). */
  nonce?: string;
  /** An earlier page of this walk was `private`: every later page is too (one scope per list). */
  private?: boolean;
}

/** Encodes and verifies cursors with one secret key. */
export interface CursorCodec {
  /** Seals a position into an opaque token. */
  encode(position: CursorPosition): string;
  /** Opens a token; throws `ProxyError(INVALID_CURSOR)` when it is forged, corrupt, of the other list or stale. */
  decode(token: string, kind: ListKind, epoch: string): CursorPosition;
}

const MAC_BYTES = 16;

/**
 * Creates a cursor codec keyed by `key` (use a fresh random key per process: cursors do not
 * survive a restart, by design).
 *
 * @example
 * const codec = createCursorCodec(randomBytes(32));
 * const token = codec.encode({ kind: 'resources', epoch: 'e1', index: 2, upstreamCursor: 'abc', pages: 3 });
 * codec.decode(token, 'resources', 'e1').index; // 2
 */
export function createCursorCodec(key: Uint8Array): CursorCodec {
  if (key.byteLength < 16) throw new Error('cursor key must be at least 16 bytes');
  const mac = (body: string): Buffer => createHmac('sha256', key).update(body).digest().subarray(0, MAC_BYTES);
  const invalid = (why: string): ProxyError =>
    new ProxyError(ErrorCodes.INVALID_CURSOR, 'Invalid cursor', { details: { why } });

  return {
    encode(p) {
      const body = Buffer.from(
        JSON.stringify([p.kind === 'resources' ? 'r' : 't', p.epoch, p.index, p.upstreamCursor ?? null, p.pages, p.nonce ?? '', p.private ? 1 : 0]),
      ).toString('base64url');
      return `${body}.${mac(body).toString('base64url')}`;
    },
    decode(token, kind, epoch) {
      if (typeof token !== 'string' || token.length > 8192) throw invalid('shape');
      const dot = token.indexOf('.');
      if (dot < 0) throw invalid('shape');
      const body = token.slice(0, dot);
      const given = Buffer.from(token.slice(dot + 1), 'base64url');
      if (given.length !== MAC_BYTES || !timingSafeEqual(given, mac(body))) throw invalid('mac');
      let parsed: unknown;
      try {
        parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      } catch {
        throw invalid('json');
      }
      if (!Array.isArray(parsed) || parsed.length !== 7) throw invalid('shape');
      const [k, e, index, upstreamCursor, pages, nonce, scope] = parsed as unknown[];
      if (k !== (kind === 'resources' ? 'r' : 't')) throw invalid('kind');
      if (e !== epoch) throw invalid('stale');
      if (!Number.isSafeInteger(index) || (index as number) < 0) throw invalid('index');
      if (upstreamCursor !== null && typeof upstreamCursor !== 'string') throw invalid('upstream cursor');
      if (!Number.isSafeInteger(pages) || (pages as number) < 0) throw invalid('pages');
      if (typeof nonce !== 'string') throw invalid('nonce');
      if (scope !== 0 && scope !== 1) throw invalid('scope');
      return {
        kind,
        epoch,
        index: index as number,
        upstreamCursor: (upstreamCursor as string | null) ?? undefined,
        pages: pages as number,
        ...(nonce ? { nonce } : {}),
        ...(scope === 1 ? { private: true } : {}),
      };
    },
  };
}
