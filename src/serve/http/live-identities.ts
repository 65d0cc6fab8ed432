// Who each open HTTP session, listen and request acts for, kept current: resolved again on a reload of auth, revoked when its credential goes or expires.
import type { Authenticator, AuthResult } from '../auth/authenticator.js';
import type { Credential } from '../auth/credential.js';

/** Why a holder must stop: its credential was removed (or now names someone else), or it expired. */
export type RevokeReason = 'removed' | 'expired';

/** Something that acts on a credential while it is open: a session, a listen, a request in flight. */
export interface CredentialHolder {
  /** The credential was resolved again and still has the same binding; its identity may be new. */
  refresh(credential: Credential): void;
  /** The credential is gone, expired, or now names another binding: stop acting on it. Called once. */
  revoke(why: RevokeReason): void;
}

/** A holder's registration. */
export interface Held {
  /** The credential held now. */
  readonly credential: Credential;
  /** A later request of the same binding brought this credential: hold it instead (its expiry too). */
  update(credential: Credential): void;
  /** Stops tracking (the holder ended on its own). Idempotent. */
  release(): void;
}

/** Options of {@link LiveIdentities}. */
export interface LiveIdentitiesOptions {
  /** Current time in ms since the epoch: the clock JWT `exp` is judged by. */
  now: () => number;
}

interface Entry {
  credential: Credential;
  readonly holder: CredentialHolder;
  readonly expires: boolean;
  timer?: NodeJS.Timeout;
  done: boolean;
}

/** setTimeout's longest delay; a later expiry is re-armed when it fires. */
const MAX_DELAY = 2 ** 31 - 1;
/** Least delay when a timer fired before the clock reached the expiry (a clock that moves on its own). */
const MIN_REARM_MS = 10;

/**
 * The registry of held credentials. A reload of `auth` resolves every one again
 * ({@link LiveIdentities.recheck}): a static token by the new table at once, a JWT by verifying it
 * again when the `jwt` block changed. Same binding: the holder is refreshed with the identity as
 * now resolved; gone or another binding: it is revoked. Credentials with an expiry (JWT `exp`) are
 * revoked when it comes, by a timer and by {@link LiveIdentities.expire} (on the injected clock).
 *
 * @example
 * const held = identities.hold(who.credential, { refresh: (c) => session.setIdentity(c.identity), revoke: () => session.close() });
 * // later: held.update(next.credential); at the end: held.release();
 */
export class LiveIdentities {
  private readonly entries = new Set<Entry>();

  constructor(private readonly options: LiveIdentitiesOptions) {}

  /** Number of credentials held. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Tracks `holder` acting on `credential`. With `expires` (default true), it is revoked when the
   * credential expires; requests in flight pass false (their answers are decided again instead).
   */
  hold(credential: Credential, holder: CredentialHolder, { expires = true }: { expires?: boolean } = {}): Held {
    const entry: Entry = { credential, holder, expires, done: false };
    this.entries.add(entry);
    this.arm(entry);
    return {
      get credential() {
        return entry.credential;
      },
      update: (next) => {
        if (entry.done || next === entry.credential) return;
        entry.credential = next;
        this.arm(entry);
      },
      release: () => this.drop(entry),
    };
  }

  /**
   * Resolves every held credential against `authenticator` (undefined: no `auth`, everyone is
   * anonymous). Static tokens and removals are applied before this returns; JWTs are verified again
   * only when `jwtChanged` (their claims do not change; the keys and rules might have), and the
   * promise resolves once those are applied too.
   */
  recheck(authenticator: Authenticator | undefined, jwtChanged: boolean): Promise<void> {
    const pending: Promise<void>[] = [];
    for (const entry of [...this.entries]) {
      const before = entry.credential;
      if (before.kind === 'jwt' && authenticator && !jwtChanged) continue;
      const apply = (result: AuthResult) => {
        if (entry.done || entry.credential !== before) return; // ended, or moved on meanwhile
        if (result.ok && result.credential.binding === before.binding) {
          entry.credential = result.credential;
          this.arm(entry);
          entry.holder.refresh(result.credential);
        } else this.revoke(entry, 'removed');
      };
      const result: AuthResult | Promise<AuthResult> = authenticator
        ? authenticator.recheck(before)
        : before.kind === 'anonymous'
          ? { ok: true, ...before.identity, credential: before }
          : { ok: false, reason: 'invalid' };
      if (result instanceof Promise) pending.push(result.then(apply));
      else apply(result);
    }
    return Promise.all(pending).then(() => undefined);
  }

  /** Revokes every holder whose credential has expired by the clock; returns how many. */
  expire(): number {
    const now = this.options.now();
    let n = 0;
    for (const entry of [...this.entries]) {
      if (entry.expires && entry.credential.expiresAt !== undefined && now >= entry.credential.expiresAt) {
        this.revoke(entry, 'expired');
        n++;
      }
    }
    return n;
  }

  /** Stops every timer and forgets every holder (none is revoked). Idempotent. */
  close(): void {
    for (const entry of [...this.entries]) this.drop(entry);
  }

  private revoke(entry: Entry, why: RevokeReason): void {
    if (entry.done) return;
    this.drop(entry);
    entry.holder.revoke(why);
  }

  private drop(entry: Entry): void {
    entry.done = true;
    clearTimeout(entry.timer);
    this.entries.delete(entry);
  }

  private arm(entry: Entry): void {
    clearTimeout(entry.timer);
    entry.timer = undefined;
    const at = entry.credential.expiresAt;
    if (!entry.expires || at === undefined) return;
    const fire = () => {
      const left = at - this.options.now();
      if (left > 0) return void (entry.timer = setTimeout(fire, Math.min(MAX_DELAY, Math.max(left, MIN_REARM_MS))).unref());
      if (entry.credential.expiresAt === at) this.revoke(entry, 'expired');
    };
    entry.timer = setTimeout(fire, Math.min(MAX_DELAY, Math.max(0, at - this.options.now()))).unref();
  }
}
