// Per-principal counts of held things (sessions, listens, requests in flight), each bounded: a principal at its bound is refused.

/**
 * Counts what each principal holds of one kind, with one bound for every principal. `acquire`
 * returns a release function (idempotent) or undefined when the principal already holds `max`.
 * Principals holding nothing take no memory.
 *
 * @example
 * const sessions = new PrincipalCounter(100);
 * const release = sessions.acquire('alice'); // undefined: alice holds 100 already
 */
export class PrincipalCounter {
  private readonly held = new Map<string, number>();

  constructor(readonly max: number) {}

  /** Takes one for `principal`; undefined (nothing taken) when it is at `max`. */
  acquire(principal: string): (() => void) | undefined {
    const n = this.held.get(principal) ?? 0;
    if (n >= this.max) return undefined;
    this.held.set(principal, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(principal) ?? 1) - 1;
      if (left <= 0) this.held.delete(principal);
      else this.held.set(principal, left);
    };
  }

  /** What `principal` holds now. */
  count(principal: string): number {
    return this.held.get(principal) ?? 0;
  }

  /** What each principal holds now (for metrics). */
  entries(): IterableIterator<[string, number]> {
    return this.held.entries();
  }

  /** Principals holding at least one. */
  get principals(): number {
    return this.held.size;
  }
}
