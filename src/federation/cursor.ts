// Composite, sealed list cursors: which upstream, its own cursor and the offset inside that page, encrypted and authenticated, bound to one caller. Pure.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { ErrorCodes, ProxyError } from '../errors.js';

/** Which list a cursor belongs to; a cursor of one list is refused by the other. */
export type ListKind = 'resources' | 'templates' | 'tools' | 'prompts';

/** The letter each list's cursors carry. */
const KIND_LETTER: Record<ListKind, string> = { resources: 'r', templates: 't', tools: 'T', prompts: 'p' };

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
  /**
   * Items of the upstream page fetched with `upstreamCursor` that earlier downstream pages already
   * held or looked past (an upstream page can be split across downstream pages). Default: 0.
   */
  offset?: number;
  /** Makes every issued cursor unique (two clients at the same position get different tokens). */
  nonce?: string;
  /** An earlier page of this walk was `private`: every later page is too (one scope per list). */
  private?: boolean;
}

/** Encodes and verifies cursors with one secret key. */
export interface CursorCodec {
  /** Seals a position into an opaque token, for the caller named by `binding` (e.g. the principal). */
  encode(position: CursorPosition, binding?: string): string;
  /**
   * Opens a token; throws `ProxyError(INVALID_CURSOR)` when it is forged, corrupt, of the other
   * list, stale, or sealed for another `binding`.
   */
  decode(token: string, kind: ListKind, epoch: string, binding?: string): CursorPosition;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Creates a cursor codec keyed by `key` (use a fresh random key per process: cursors do not
 * survive a restart, by design). Tokens are AES-256-GCM sealed: a client learns nothing from one
 * (not which upstream comes next, nor its cursor), cannot forge or alter one, and cannot use one
 * sealed for another caller (the binding is authenticated data).
 *
 * @example
 * const codec = createCursorCodec(randomBytes(32));
 * const token = codec.encode({ kind: 'resources', epoch: 'e1', index: 2, upstreamCursor: 'abc', pages: 3 });
 * codec.decode(token, 'resources', 'e1').index; // 2
 */
export function createCursorCodec(key: Uint8Array): CursorCodec {
  if (key.byteLength < 16) throw new Error('cursor key must be at least 16 bytes');
  const secret = createHash('sha256').update(key).digest();
  const invalid = (why: string): ProxyError => new ProxyError(ErrorCodes.INVALID_CURSOR, 'Invalid cursor', { details: { why } });

  return {
    encode(p, binding = '') {
      const body = JSON.stringify([KIND_LETTER[p.kind], p.epoch, p.index, p.upstreamCursor ?? null, p.pages, p.nonce ?? '', p.private ? 1 : 0, p.offset ?? 0]);
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', secret, iv).setAAD(Buffer.from(binding, 'utf8'));
      const sealed = Buffer.concat([cipher.update(body, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `${iv.toString('base64url')}.${sealed.toString('base64url')}`;
    },
    decode(token, kind, epoch, binding = '') {
      if (typeof token !== 'string' || token.length > 8192) throw invalid('shape');
      const dot = token.indexOf('.');
      if (dot < 0) throw invalid('shape');
      const iv = Buffer.from(token.slice(0, dot), 'base64url');
      const sealed = Buffer.from(token.slice(dot + 1), 'base64url');
      if (iv.length !== IV_BYTES || sealed.length <= TAG_BYTES) throw invalid('shape');
      let body: string;
      try {
        const decipher = createDecipheriv('aes-256-gcm', secret, iv).setAAD(Buffer.from(binding, 'utf8'));
        decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
        body = Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        throw invalid('mac');
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        throw invalid('json');
      }
      if (!Array.isArray(parsed) || parsed.length !== 8) throw invalid('shape');
      const [k, e, index, upstreamCursor, pages, nonce, scope, offset] = parsed as unknown[];
      if (k !== KIND_LETTER[kind]) throw invalid('kind');
      if (e !== epoch) throw invalid('stale');
      if (!Number.isSafeInteger(index) || (index as number) < 0) throw invalid('index');
      if (upstreamCursor !== null && typeof upstreamCursor !== 'string') throw invalid('upstream cursor');
      if (!Number.isSafeInteger(pages) || (pages as number) < 0) throw invalid('pages');
      if (typeof nonce !== 'string') throw invalid('nonce');
      if (scope !== 0 && scope !== 1) throw invalid('scope');
      if (!Number.isSafeInteger(offset) || (offset as number) < 0) throw invalid('offset');
      return {
        kind,
        epoch,
        index: index as number,
        upstreamCursor: upstreamCursor ?? undefined,
        pages: pages as number,
        ...(nonce ? { nonce } : {}),
        ...(scope === 1 ? { private: true } : {}),
        ...(offset === 0 ? {} : { offset: offset as number }),
      };
    },
  };
}
