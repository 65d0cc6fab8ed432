// One atomic token bucket in Redis (a Lua script on Redis's own clock): one round trip per take, whichever replica asks.
import type { SharedLink } from './link.js';
import { LuaScript } from './lua-script.js';

/**
 * The refill every bucket script starts with: `tokens` refilled since `at` on Redis's clock (`TIME`),
 * capped at `burst`, and `at` now; an absent bucket is a full one (`absent`). ARGV[1], ARGV[2]: burst,
 * refill per ms.
 */
export const REFILL_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local burst = tonumber(ARGV[1])
local perMs = tonumber(ARGV[2])
local b = redis.call('HMGET', KEYS[1], 't', 'at')
local tokens = tonumber(b[1])
local at = tonumber(b[2])
local absent = tokens == nil or at == nil
if absent then
  tokens = burst
  at = now
else
  tokens = math.min(burst, tokens + math.max(0, now - at) * perMs)
  if now > at then at = now end
end
`;

/** What every bucket script ends with: the bucket stored, expiring once it would be full again. */
export const STORE_LUA = `
redis.call('HSET', KEYS[1], 't', string.format('%.17g', tokens), 'at', string.format('%.17g', at))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / perMs) + 1000)
`;

/**
 * KEYS[1]: the bucket (a hash: `t` tokens, `at` ms). ARGV: burst, refill per ms. Time is Redis's
 * (`TIME`), so replicas with skewed clocks share one bucket. Same arithmetic as the local
 * `RateLimiter`: refill since `at`, capped at burst; take one if at least one is there, else say
 * how long until one is. The key expires once it would be full again (an absent bucket is a full one).
 * Returns {1, 0} or {0, retryAfterMs}.
 */
export const TOKEN_BUCKET_LUA = `${REFILL_LUA}
local ok = 0
local retry = 0
if tokens >= 1 - 1e-6 then
  tokens = math.max(0, tokens - 1)
  ok = 1
else
  retry = math.max(1, math.ceil((1 - tokens) / perMs))
end
${STORE_LUA}
return {ok, retry}
`;

/** {@link TOKEN_BUCKET_LUA}, run by its SHA. */
export const TOKEN_BUCKET = new LuaScript(TOKEN_BUCKET_LUA);

/** The answer of one take: a token, or none and when one will be there. */
export interface BucketAnswer {
  readonly ok: boolean;
  readonly retryAfterMs: number;
}

/**
 * Takes one token from the bucket at `key`: one `EVALSHA` (the first call on a fresh Redis, or after
 * a restart, gets `NOSCRIPT` and sends the script once with `EVAL`). Rejects when Redis is down,
 * refuses, or does not answer within `timeoutMs`: the caller falls back.
 */
export async function takeToken(link: SharedLink, key: string, burst: number, perMs: number, timeoutMs: number): Promise<BucketAnswer> {
  const reply = await TOKEN_BUCKET.run(link, key, [String(burst), String(perMs)], timeoutMs);
  const [ok, retry] = Array.isArray(reply) ? (reply as unknown[]) : [];
  if (typeof ok !== 'number' || typeof retry !== 'number') throw new Error('unexpected token bucket reply');
  return { ok: ok === 1, retryAfterMs: retry };
}
