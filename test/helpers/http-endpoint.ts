// The HTTP endpoint in-process tests serve a harness's proxy on: 127.0.0.1, an OS-assigned port, a silent log, no sweep timer.
import { HttpSchema } from '../../src/config/schema.js';
import { createHttpEndpoint, type HttpEndpoint, type HttpEndpointOptions } from '../../src/serve/http/endpoint.js';
import { createLogger } from '../../src/logger.js';

/** `createHttpEndpoint` for `proxy` with the test defaults; `http` is merged into the parsed `http` block, `options` over the rest. */
export function testEndpoint(
  proxy: HttpEndpointOptions['proxy'],
  http: Record<string, unknown> = {},
  options: Partial<Omit<HttpEndpointOptions, 'proxy' | 'config'>> = {},
): HttpEndpoint {
  return createHttpEndpoint({
    proxy,
    config: HttpSchema.parse({ port: 0, ...http }),
    logger: createLogger({ level: 'silent' }),
    maxQueuedBytes: 1 << 20,
    sweepEveryMs: 0,
    ...options,
  });
}
