// The upstreams the fast-lane tests of both eras use: `x://<n>` resources (one that never answers, one that fails) and four tools (one that never answers).
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { counter } from './gate.js';
import { startHarness, type Harness } from './harness.js';
import type { AuditLog } from '../../src/audit/log.js';
import { createUpstreamServer } from './upstream-server.mjs';

/**
 * An upstream with resources `x://<n>` (text `text of x://<n>`); `x://slow` never answers (calls
 * `onSlow`, then `onCancelled` when the read is cancelled); `x://boom` fails; anything else is not found.
 */
export function resourcesUpstream(onCancelled?: () => void, onSlow?: () => void) {
  return createUpstreamServer({
    resources: [{ uri: 'x://1', name: 'one' }],
    read: (uri, signal) => {
      if (uri === 'x://slow') {
        onSlow?.();
        return new Promise(() => signal.addEventListener('abort', () => onCancelled?.()));
      }
      if (uri === 'x://boom') throw new Error('boom');
      if (uri.startsWith('x://')) return { contents: [{ uri, text: `text of ${uri}` }] };
      throw Object.assign(new Error('Resource not found'), { code: -32002 });
    },
  }).server;
}

/**
 * A harness whose upstream `a` serves {@link resourcesUpstream} uncached, with counters of the slow
 * reads started and of those cancelled upstream: the lanes' cancellation tests, lane on or off.
 */
export async function slowReadHarness(fastLane: boolean): Promise<{ h: Harness; slow: ReturnType<typeof counter>; cancelled: ReturnType<typeof counter> }> {
  const cancelled = counter();
  const slow = counter();
  const h = await startHarness({
    upstreams: {
      a: () =>
        resourcesUpstream(
          () => cancelled.hit(),
          () => slow.hit(),
        ),
    },
    serverFields: { a: { cache: false } },
    fastLane,
  });
  return { h, slow, cancelled };
}

/**
 * An upstream with tools `echo` (its arguments as text, and a resource link), `fails` (`isError`),
 * `secret`, and `hang`, which never answers (calls `onHang`, then `onCancelled` when the call is cancelled).
 */
export function toolsUpstream(onHang?: () => void, onCancelled?: () => void): Server {
  const server = new Server({ name: 'tools', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: ['echo', 'fails', 'secret', 'hang'].map((name) => ({ name, inputSchema: { type: 'object' as const } })),
  }));
  server.setRequestHandler(CallToolRequestSchema, (req, extra) => {
    if (req.params.name === 'hang') {
      onHang?.();
      return new Promise<never>(() => extra.signal.addEventListener('abort', () => onCancelled?.()));
    }
    if (req.params.name === 'fails') return { content: [{ type: 'text' as const, text: 'it failed' }], isError: true };
    if (req.params.name === 'echo')
      return {
        content: [
          { type: 'text' as const, text: JSON.stringify(req.params.arguments ?? null) },
          { type: 'resource_link' as const, uri: 'x://1', name: 'one' },
        ],
      };
    throw new Error(`no tool ${req.params.name}`);
  });
  return server;
}

/**
 * The harness of the lanes' differential tests: upstream `a` ({@link resourcesUpstream}, uncached),
 * with `tools` also `t` ({@link toolsUpstream}), `config` (policy, limits), `audit`, the lane on or off.
 */
export function laneHarness(fastLane: boolean, options: { config: Record<string, unknown>; audit: AuditLog; tools?: boolean }): Promise<Harness> {
  return startHarness({
    upstreams: { a: () => resourcesUpstream(), ...(options.tools ? { t: () => toolsUpstream() } : {}) },
    serverFields: { a: { cache: false } },
    config: options.config,
    audit: options.audit,
    fastLane,
  });
}
