// One Lua script run in Redis by its SHA: one EVALSHA round trip, the source sent again only after a NOSCRIPT (a fresh or restarted Redis).
import { createHash } from 'node:crypto';
import type { SharedLink } from './link.js';

/**
 * A Lua script the replicas run atomically in Redis. {@link LuaScript.run} sends `EVALSHA` (one
 * round trip); a Redis that does not know the script (`NOSCRIPT`: fresh, or restarted) gets its
 * source once with `EVAL`. {@link preloadScripts} loads scripts whenever the link comes up, so
 * requests never pay for that second round trip.
 */
export class LuaScript {
  readonly sha: string;

  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /** Runs the script on one key. Rejects when Redis is down, refuses, or does not answer within `timeoutMs`. */
  async run(link: SharedLink, key: string, args: readonly string[], timeoutMs: number): Promise<unknown> {
    try {
      return await link.command(['EVALSHA', this.sha, '1', key, ...args], timeoutMs);
    } catch (err) {
      if (!String((err as { message?: unknown } | null)?.message).includes('NOSCRIPT')) throw err;
      return await link.command(['EVAL', this.source, '1', key, ...args], timeoutMs);
    }
  }
}

/** Loads `scripts` whenever the link comes up (a restarted Redis has forgotten them). */
export function preloadScripts(link: SharedLink, scripts: readonly LuaScript[], timeoutMs: number): void {
  link.onState((up) => {
    if (!up) return;
    for (const s of scripts) link.command(['SCRIPT', 'LOAD', s.source], timeoutMs).catch(() => undefined);
  });
}
