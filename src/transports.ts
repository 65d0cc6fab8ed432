// Default upstream transports: stdio children, Streamable HTTP, legacy SSE (with the fallback order).
import { createInterface } from 'node:readline';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isRemote, type ServerConfig } from './config-schema.js';
import type { Logger } from './logger.js';

/** One attempt at a transport; `connect` tries them in order until one initializes. */
export interface TransportCandidate {
  /** "stdio", "streamable-http" or "sse" (for logs). */
  kind: string;
  /** Creates a fresh, unstarted transport. */
  create(): Transport;
}

/**
 * Turns an upstream's config into the transports to try, in order. Injected into the pool so tests
 * can hand in `InMemoryTransport`s instead of processes or sockets.
 */
export type TransportFactory = (id: string, config: ServerConfig, logger: Logger) => TransportCandidate[];

/**
 * The production factory. stdio children get the SDK's safe default environment plus `env`, and
 * their stderr is forwarded line by line to the log (never to our stdout). Remote upstreams get the
 * configured headers only: a downstream client's credentials are never passed through.
 */
export const defaultTransportFactory: TransportFactory = (id, config, logger) => {
  if (!isRemote(config)) {
    return [
      {
        kind: 'stdio',
        create: () => {
          const transport = new StdioClientTransport({
            command: config.command,
            args: config.args,
            env: config.env,
            ...(config.cwd ? { cwd: config.cwd } : {}),
            stderr: 'pipe',
          });
          const stderr = transport.stderr;
          if (stderr) {
            const lines = createInterface({ input: stderr as unknown as NodeJS.ReadableStream, crlfDelay: Infinity });
            lines.on('line', (line) => logger.info({ server: id, stderr: line }, 'upstream stderr'));
          }
          return transport;
        },
      },
    ];
  }
  const url = new URL(config.url);
  const requestInit: RequestInit = { headers: config.headers };
  const streamable: TransportCandidate = {
    kind: 'streamable-http',
    create: () => new StreamableHTTPClientTransport(url, { requestInit }),
  };
  const sse: TransportCandidate = {
    kind: 'sse',
    create: () =>
      new SSEClientTransport(url, {
        requestInit,
        // EventSource's GET carries the same configured headers (e.g. Authorization).
        eventSourceInit: {
          fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...config.headers } }),
        },
      }),
  };
  if (config.transport === 'sse') return [sse];
  if (config.transport === 'streamable-http') return [streamable];
  return [streamable, sse];
};
