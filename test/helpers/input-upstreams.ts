// Upstreams that ask the user for input while they serve resources/read, one per era (SDK v1 server requests; SDK v2 input_required), and a proxy in front of them.
import { Server as LegacyServer } from '@modelcontextprotocol/sdk/server/index.js';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport as LegacyInMemory } from '@modelcontextprotocol/sdk/inMemory.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ReadResourceRequestSchema,
  type ClientCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import {
  Client as ModernClient,
  InMemoryTransport as ModernInMemory,
  StreamableHTTPClientTransport as ModernHttpTransport,
} from '@modelcontextprotocol/client';
import { Server as ModernServer } from '@modelcontextprotocol/server';
import type { CallerIdentity, Proxy } from '../../src/proxy.js';
import type { SetTimer } from '../../src/federation/listing.js';
import type { AuditLog } from '../../src/audit/log.js';
import { counter } from './gate.js';
import { startHarness } from './harness.js';
import { textContents as text } from './upstream-server.mjs';

const NAME_SCHEMA = { type: 'object' as const, properties: { name: { type: 'string' as const } }, required: ['name'] };

/** What an input-asking upstream saw: cancellations of its reads, and how its unsolicited request ended. */
export interface InputUpstreamLog {
  /** Hit when a read the upstream was serving is cancelled. */
  cancelled: ReturnType<typeof counter>;
  /** Hit when a read starts (every leg). */
  reads: ReturnType<typeof counter>;
  /** Outcomes of requests the upstream made on its own, outside any call (`error: …` or the answer). */
  unsolicited: string[];
  unsolicitedDone: ReturnType<typeof counter>;
  /** Makes the upstream (its latest connection) ask on its own, outside any call. */
  askUnsolicited: () => void;
  /** Makes every `giveup://` read stop waiting for its answer and fail. */
  giveUp: () => void;
  /** Hit when a `giveup://` read has given up. */
  gaveUp: ReturnType<typeof counter>;
}

export function newInputLog(): InputUpstreamLog {
  let giveUp!: () => void;
  const gaveUpNow = new Promise<void>((resolve) => (giveUp = resolve));
  const log: InputUpstreamLog & { gaveUpNow: Promise<void> } = {
    cancelled: counter(),
    reads: counter(),
    unsolicited: [],
    unsolicitedDone: counter(),
    askUnsolicited: () => undefined,
    giveUp,
    gaveUp: counter(),
    gaveUpNow,
  };
  return log;
}

const errorText = (err: unknown) => `error: ${err instanceof Error ? err.message : String(err)}`;

/**
 * A 2025-11-25 upstream (SDK v1) whose reads ask during the call: `ask://name` elicits a name,
 * `twice://x` elicits twice, `sample://x` samples, `roots://x` lists roots, `plain://x` asks nothing;
 * `log.askUnsolicited()` makes it ask outside any call. A declined or failed request shows in the text.
 */
export function legacyInputUpstream(log: InputUpstreamLog): LegacyServer {
  const server = new LegacyServer({ name: 'legacy-asker', version: '1.0.0' }, { capabilities: { resources: {} } });
  log.askUnsolicited = () =>
    void server
      .elicitInput({ mode: 'form', message: 'Unrelated?', requestedSchema: NAME_SCHEMA })
      .then(
        (r) => log.unsolicited.push(`answered ${r.action}`),
        (err: unknown) => log.unsolicited.push(errorText(err)),
      )
      .finally(() => log.unsolicitedDone.hit());
  server.setRequestHandler(ReadResourceRequestSchema, async (req, extra) => {
    const uri = req.params.uri;
    log.reads.hit();
    extra.signal.addEventListener('abort', () => log.cancelled.hit(), { once: true });
    const related = { relatedRequestId: extra.requestId };
    try {
      if (uri.startsWith('ask:')) {
        const r = await server.elicitInput({ mode: 'form', message: 'Your name?', requestedSchema: NAME_SCHEMA }, related);
        return text(uri, r.action === 'accept' ? `hello ${String(r.content?.name)}` : `no name (${r.action})`);
      }
      if (uri.startsWith('giveup:')) {
        const asked = server.elicitInput({ mode: 'form', message: 'Your name?', requestedSchema: NAME_SCHEMA }, related);
        asked.catch(() => undefined);
        await Promise.race([asked, (log as InputUpstreamLog & { gaveUpNow: Promise<void> }).gaveUpNow]);
        log.gaveUp.hit();
        throw new Error('gave up waiting');
      }
      if (uri.startsWith('twice:')) {
        const a = await server.elicitInput({ mode: 'form', message: 'First name?', requestedSchema: NAME_SCHEMA }, related);
        const b = await server.elicitInput({ mode: 'form', message: 'Last name?', requestedSchema: NAME_SCHEMA }, related);
        return text(uri, `hello ${String(a.content?.name)} ${String(b.content?.name)}`);
      }
      if (uri.startsWith('sample:')) {
        const r = await server.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 10 }, related);
        return text(uri, `sampled ${(r.content as { text?: string }).text}`);
      }
      if (uri.startsWith('roots:')) {
        const r = await server.listRoots(undefined, related);
        return text(uri, `roots ${r.roots.map((root) => root.uri).join(',')}`);
      }
      return text(uri, 'plain');
    } catch (err) {
      return text(uri, errorText(err));
    }
  });
  return server;
}

/**
 * A 2026-07-28 upstream (SDK v2) answering `input_required`: `ask://name` elicits a name with its
 * own `requestState` and echoes the state it got back, `sample://x` samples, `roots://x` asks for
 * roots, `plain://x` asks nothing.
 */
export function modernInputUpstream(log: InputUpstreamLog): ModernServer {
  const server = new ModernServer({ name: 'modern-asker', version: '1.0.0' }, { capabilities: { resources: {} } });
  server.setRequestHandler('resources/read', (req, ctx) => {
    const uri = req.params.uri;
    log.reads.hit();
    const answers = ctx.mcpReq.inputResponses as Record<string, { action?: string; content?: { name?: string }; roots?: { uri: string }[] }> | undefined;
    const state = ctx.mcpReq.requestState<string>();
    const ask = (key: string, request: Record<string, unknown>) => ({
      resultType: 'input_required',
      inputRequests: { [key]: request },
      requestState: `modern-state-${uri}`,
    });
    if (uri.startsWith('ask:')) {
      const a = answers?.name;
      if (!a) return ask('name', { method: 'elicitation/create', params: { mode: 'form', message: 'Your name?', requestedSchema: NAME_SCHEMA } }) as never;
      return text(uri, a.action === 'accept' ? `hello ${a.content?.name} (state ${state})` : `no name (${a.action})`);
    }
    if (uri.startsWith('sample:')) {
      if (!answers?.s)
        return ask('s', {
          method: 'sampling/createMessage',
          params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 },
        }) as never;
      return text(uri, 'sampled');
    }
    if (uri.startsWith('roots:')) {
      if (!answers?.r) return ask('r', { method: 'roots/list' }) as never;
      return text(uri, `roots ${answers.r.roots?.map((r) => r.uri).join(',')}`);
    }
    return text(uri, 'plain');
  });
  return server;
}

/** How a client answers what it is asked. */
export interface ClientAnswers {
  elicit?: (params: Record<string, unknown>, signal: AbortSignal) => Promise<Record<string, unknown>> | Record<string, unknown>;
  sample?: () => Record<string, unknown>;
  roots?: () => Record<string, unknown>;
}

export interface BridgeRig extends AsyncDisposable {
  proxy: Proxy;
  logs: Record<string, unknown>[];
  /**
   * A 2025-11-25 client (SDK v1) declaring `capabilities`, answering with `answers`: connected as
   * `caller` in memory, or, with `over`, by Streamable HTTP to that endpoint (which names the caller).
   */
  legacyClient(caller: CallerIdentity, capabilities: ClientCapabilities, answers?: ClientAnswers, over?: URL): Promise<LegacyClient>;
  /**
   * A client on SDK v2 declaring `capabilities`, answering with `answers`, connected as
   * `legacyClient` is. `mode` is its version negotiation: `auto` (the default) is served 2026-07-28
   * and fulfils input_required itself; `legacy` is the plain 2025-11-25 initialize, the 2025 path
   * driven by SDK v2.
   */
  modernClient(
    caller: CallerIdentity,
    capabilities: Record<string, unknown>,
    answers?: ClientAnswers,
    options?: { mode?: 'auto' | 'legacy'; over?: URL },
  ): Promise<ModernClient>;
}

export interface RigOptions {
  /** Upstreams by id: a 2025-11-25 SDK v1 Server, or a 2026-07-28 SDK v2 Server. */
  upstreams: Record<string, { era: 'legacy'; make: () => LegacyServer } | { era: 'modern'; make: () => ModernServer }>;
  config?: Record<string, unknown>;
  audit?: AuditLog;
  bridgeTimer?: SetTimer;
  wallClock?: () => number;
}

/** A proxy whose upstreams are in-process Servers of either era (the harness, with clients that answer what they are asked). */
export async function startBridgeRig(options: RigOptions): Promise<BridgeRig> {
  const h = await startHarness({
    upstreams: Object.fromEntries(Object.entries(options.upstreams).map(([id, u]) => [id, u.era === 'modern' ? u : u.make])),
    serverFields: Object.fromEntries(Object.entries(options.upstreams).map(([id, u]) => [id, { protocol: u.era === 'modern' ? '2026-07-28' : '2025-11-25' }])),
    ...(options.config ? { config: options.config } : {}),
    ...(options.audit ? { audit: options.audit } : {}),
    ...(options.bridgeTimer ? { bridgeTimer: options.bridgeTimer } : {}),
    ...(options.wallClock ? { wallClock: options.wallClock } : {}),
  });
  const { proxy, logs } = h;
  const clients: { close(): Promise<void> }[] = [];
  return {
    proxy,
    logs,
    async legacyClient(caller, capabilities, answers = {}, over) {
      const client = new LegacyClient({ name: 'legacy-user', version: '1.0.0' }, { capabilities });
      if (answers.elicit) {
        const elicit = answers.elicit;
        client.setRequestHandler(ElicitRequestSchema, (req, extra) => elicit(req.params as Record<string, unknown>, extra.signal) as never);
      }
      if (answers.sample) client.setRequestHandler(CreateMessageRequestSchema, answers.sample);
      if (answers.roots) client.setRequestHandler(ListRootsRequestSchema, answers.roots);
      if (over) await client.connect(new LegacyHttpTransport(over));
      else {
        const [clientSide, serverSide] = LegacyInMemory.createLinkedPair();
        await proxy.connect(serverSide, caller);
        await client.connect(clientSide);
      }
      clients.push(client);
      return client;
    },
    async modernClient(caller, capabilities, answers = {}, { mode = 'auto', over } = {}) {
      const client = new ModernClient({ name: 'modern-user', version: '1.0.0' }, { capabilities, versionNegotiation: { mode } });
      if (answers.elicit) {
        const elicit = answers.elicit;
        client.setRequestHandler('elicitation/create', (req, ctx) => elicit(req.params as Record<string, unknown>, ctx.mcpReq.signal) as never);
      }
      if (answers.sample) client.setRequestHandler('sampling/createMessage', answers.sample as never);
      if (answers.roots) client.setRequestHandler('roots/list', answers.roots as never);
      if (over) await client.connect(new ModernHttpTransport(over));
      else {
        const [clientSide, serverSide] = ModernInMemory.createLinkedPair();
        await proxy.connect(serverSide, caller);
        await client.connect(clientSide);
      }
      clients.push(client);
      return client;
    },
    async [Symbol.asyncDispose]() {
      await Promise.allSettled(clients.map((c) => c.close()));
      await h[Symbol.asyncDispose]();
    },
  };
}
