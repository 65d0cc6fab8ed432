// How many requests of some methods reached an SDK v2 Server's Protocol: an observation (the SDK still runs them) that shows what a lane took.
import { vi } from 'vitest';
import { Server as SdkServer } from '@modelcontextprotocol/server';

/**
 * Counts the requests of `methods` that reach `Server.prototype._onrequest` from now on. `restore`
 * drops the other spies first (a spy over a spy of the same method would call itself); pass false
 * to count a second set of methods beside the first.
 *
 * @example const reads = sdkRequestCount(['resources/read']); … reads.count()
 */
export function sdkRequestCount(methods: readonly string[], restore = true): { count: () => number } {
  if (restore) vi.restoreAllMocks();
  const proto = SdkServer.prototype as unknown as { _onrequest: (m: { method?: string }, e?: unknown) => void };
  const original = proto._onrequest;
  let n = 0;
  vi.spyOn(proto, '_onrequest').mockImplementation(function (this: unknown, message, extra) {
    if (message.method !== undefined && methods.includes(message.method)) n++;
    return original.call(this, message, extra);
  });
  return { count: () => n };
}
