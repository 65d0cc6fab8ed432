// Leases from the shared token buckets: take up to k tokens in one atomic script call, or give unused ones back. Same bucket and arithmetic as token-bucket.ts.
import type { SharedLink } from './link.js';
import { LuaScript } from './lua-script.js';
import { REFILL_LUA, STORE_LUA } from './token-bucket.js';

/**
 * KEYS[1]: the bucket (as TOKEN_BUCKET_LUA's). ARGV: burst, refill per ms, `want` (≥ 1), `reserve`.
 * While the bucket holds at least `reserve` tokens (and `want`), it grants `want`; below that (the
 * bucket is nearly empty) one, as a single take would, or none and how long until one is there.
 * Returns {granted, retryAfterMs, roomy}: `roomy` is 1 when the bucket held `reserve` or more, so
 * the caller may lease again.
 */
export const TOKEN_LEASE_LUA = `${REFILL_LUA}
local want = tonumber(ARGV[3])
local reserve = tonumber(ARGV[4])
local roomy = 0
local granted = 0
local retry = 0
if tokens >= reserve - 1e-6 then roomy = 1 end
if roomy == 1 and tokens >= want - 1e-6 then
  granted = want
elseif tokens >= 1 - 1e-6 then
  granted = 1
else
  retry = math.max(1, math.ceil((1 - tokens) / perMs))
end
tokens = math.max(0, tokens - granted)
${STORE_LUA}
return {granted, retry, roomy}
`;

/**
 * KEYS[1]: the bucket. ARGV: burst, refill per ms, `count`. Puts `count` unused leased tokens back,
 * capped at burst (a bucket that refilled meanwhile keeps no more than a full one). An absent
 * bucket is full already: nothing to do. Returns 1 when tokens were added, else 0.
 */
export const GIVE_BACK_LUA = `${REFILL_LUA}
if absent then return 0 end
tokens = math.min(burst, tokens + tonumber(ARGV[3]))
${STORE_LUA}
return 1
`;

/** {@link TOKEN_LEASE_LUA} and {@link GIVE_BACK_LUA}, run by their SHAs. */
export const TOKEN_LEASE = new LuaScript(TOKEN_LEASE_LUA);
export const GIVE_BACK = new LuaScript(GIVE_BACK_LUA);

/** One bucket as the scripts see it. */
export interface BucketShape {
  readonly burst: number;
  /** Refill per millisecond. */
  readonly perMs: number;
}

/** The answer to one lease request. */
export interface LeaseAnswer {
  /** Tokens granted: `want`, 1 (the bucket is nearly empty), or 0. */
  readonly granted: number;
  /** With none granted: how long until one is there. Else 0. */
  readonly retryAfterMs: number;
  /** The bucket held at least `reserve` tokens: leasing may go on. */
  readonly roomy: boolean;
}

/**
 * Leases up to `want` tokens from the bucket at `key` in one `EVALSHA` (see {@link TOKEN_LEASE_LUA}).
 * Rejects when Redis is down, refuses, or does not answer within `timeoutMs`: the caller falls back.
 */
export async function leaseTokens(link: SharedLink, key: string, bucket: BucketShape, want: number, reserve: number, timeoutMs: number): Promise<LeaseAnswer> {
  const reply = await TOKEN_LEASE.run(link, key, [String(bucket.burst), String(bucket.perMs), String(want), String(reserve)], timeoutMs);
  const [granted, retry, roomy] = Array.isArray(reply) ? (reply as unknown[]) : [];
  if (typeof granted !== 'number' || typeof retry !== 'number' || typeof roomy !== 'number') throw new Error('unexpected token lease reply');
  return { granted, retryAfterMs: retry, roomy: roomy === 1 };
}

/** Gives `count` unused leased tokens back to the bucket at `key` in one `EVALSHA` (see {@link GIVE_BACK_LUA}). */
export async function giveBackTokens(link: SharedLink, key: string, bucket: BucketShape, count: number, timeoutMs: number): Promise<void> {
  await GIVE_BACK.run(link, key, [String(bucket.burst), String(bucket.perMs), String(count)], timeoutMs);
}
