// The gateway's own `requestState` (2026-07-28 multi round-trip): sealed with AES-256-GCM under a per-process key, bound to principal, upstream and call. Pure.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { ErrorCodes, ProxyError } from '../errors.js';

/** What a sealed state stands for: the upstream's own state to echo (`upstream`), or a call the gateway holds open (`held`). */
export type InputState =
  | {
      kind: 'upstream';
      /** The upstream's `requestState`, byte-exact; absent when it gave none. */ state?: string;
      /** Input requests asked: key → method. */ asked: Record<string, string>;
    }
  | {
      kind: 'held';
      /** The held call's id. */ id: string;
      /** Its round: a state of an earlier round is refused. */ round: number;
      asked: Record<string, string>;
    };

/** Who and what a sealed state is bound to: a state is opened only for the same binding. */
export interface InputBinding {
  principal: string;
  /** The upstream's server id. */
  server: string;
  /** The method and what it is about in the upstream's terms (URI, tool or prompt name). */
  method: string;
  subject: string;
}

/** Seals and opens the gateway's `requestState` tokens. */
export interface InputStateCodec {
  /** An opaque token holding `state` for `binding`, valid until `now() + ttlMs`. */
  seal(state: InputState, binding: InputBinding): string;
  /**
   * The state inside `token` when it was sealed for `binding` and has not expired; else throws
   * `ProxyError(INVALID_PARAMS, 'Invalid or expired requestState')`, whatever the reason (forged,
   * altered, another principal, server or call, expired): a client learns nothing from the refusal.
   */
  open(token: string, binding: InputBinding): InputState;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;
const VERSION = 1;
/** Longest token accepted: far more than any state the gateway seals, far less than a hostile one. */
const MAX_TOKEN_CHARS = 64 * 1024;

/** The one refusal every bad state gets (the SDK's own wording for a rejected requestState). */
export function invalidState(why: string): ProxyError {
  return new ProxyError(ErrorCodes.INVALID_PARAMS, 'Invalid or expired requestState', { details: { why } });
}

/**
 * A codec keyed by `key` (a fresh random key per process: held calls do not survive a restart, and
 * neither do the states that name them). The binding is authenticated data, so a token sealed for one
 * principal, upstream or call does not open for another; the expiry is inside the sealed text.
 *
 * @example
 * const codec = createInputStateCodec(randomBytes(32), 120_000, () => Date.now());
 * const token = codec.seal({ kind: 'upstream', state: 'abc', asked: { q: 'elicitation/create' } }, binding);
 * codec.open(token, binding).kind; // 'upstream'
 */
export function createInputStateCodec(key: Uint8Array, ttlMs: number, now: () => number): InputStateCodec {
  if (key.byteLength < 16) throw new Error('input state key must be at least 16 bytes');
  const secret = createHash('sha256').update('mcp-federate input state').update(key).digest();
  const aad = (b: InputBinding) => Buffer.from(JSON.stringify([VERSION, b.principal, b.server, b.method, b.subject]));
  return {
    seal(state, binding) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', secret, iv);
      cipher.setAAD(aad(binding));
      const plain = Buffer.from(JSON.stringify({ s: state, e: now() + ttlMs }));
      const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
    },
    open(token, binding) {
      if (typeof token !== 'string' || token.length > MAX_TOKEN_CHARS) throw invalidState('malformed');
      const raw = Buffer.from(token, 'base64url');
      if (raw.length <= IV_BYTES + TAG_BYTES) throw invalidState('malformed');
      let plain: { s?: InputState; e?: number };
      try {
        const decipher = createDecipheriv('aes-256-gcm', secret, raw.subarray(0, IV_BYTES));
        decipher.setAAD(aad(binding));
        decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
        plain = JSON.parse(Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8')) as typeof plain;
      } catch {
        throw invalidState('unauthentic'); // forged, altered, or sealed for another binding
      }
      if (typeof plain.e !== 'number' || now() > plain.e || !plain.s) throw invalidState('expired');
      return plain.s;
    },
  };
}
