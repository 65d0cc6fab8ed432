// Requests an upstream makes back to the user, bridged across eras: the four cells, capabilities, routing, cancellation and audit, with real SDK clients and servers in process.
import { describe, expect, it } from 'vitest';
import { PASS } from '../helpers/passthrough.js';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { legacyInputUpstream, modernInputUpstream, newInputLog, startBridgeRig, type ClientAnswers } from '../helpers/input-upstreams.js';
import { memoryAudit } from '../helpers/memory-audit.js';
import { rpcError } from '../helpers/rpc-error.js';
import { deferred, within } from '../helpers/gate.js';

const ADA = { principal: 'ada', roles: [], transport: 'stdio' as const };
const BOB = { principal: 'bob', roles: [], transport: 'stdio' as const };
const name = (n: string): ClientAnswers => ({ elicit: () => ({ action: 'accept', content: { name: n } }) });
const ELICIT = { elicitation: { form: {} } };

/** The result as the proxy sent it, through the SDK v2 client's own input_required driver. */
const read = (c: ModernClient, uri: string) =>
  c.request({ method: 'resources/read', params: { uri } } as never, PASS as never) as Promise<{ contents: { text: string }[] }>;
const textOf = (r: { contents: unknown[] }) => (r.contents[0] as { text: string }).text;

function rig(audit = memoryAudit()) {
  const log = newInputLog();
  const modernLog = newInputLog();
  return {
    log,
    modernLog,
    audit,
    start: (config?: Record<string, unknown>) =>
      startBridgeRig({
        upstreams: {
          old: { era: 'legacy', make: () => legacyInputUpstream(log) },
          new: { era: 'modern', make: () => modernInputUpstream(modernLog) },
        },
        audit,
        ...(config ? { config } : {}),
      }),
  };
}

describe('the four cells', () => {
  it('2025 upstream → 2025 client: the elicitation is forwarded to the caller and its answer relayed back', async () => {
    const r = rig();
    await using p = await r.start();
    const c = await p.legacyClient(ADA, ELICIT, name('Ada'));
    expect(textOf(await c.readResource({ uri: 'old+ask://name' }))).toBe('hello Ada');
    expect(p.proxy.bridge.stats()).toEqual({ inFlight: 0, held: 0 });
  });

  it('2025 upstream → 2026 client: answered input_required, the upstream call held, resumed by the retry', async () => {
    const r = rig();
    await using p = await r.start();
    const c = await p.modernClient(ADA, ELICIT, name('Ada'));
    expect(textOf(await read(c, 'old+ask://name'))).toBe('hello Ada');
    expect(r.log.reads.count).toBe(1); // one upstream call, held across the client's two requests
    // Two rounds of input on one held call.
    expect(textOf(await read(c, 'old+twice://x'))).toBe('hello Ada Ada');
    expect(p.proxy.bridge.stats()).toEqual({ inFlight: 0, held: 0 });
  });

  it('2026 upstream → 2025 client: asked with elicitation/create, then the upstream retried with inputResponses and its requestState', async () => {
    const r = rig();
    await using p = await r.start();
    const c = await p.legacyClient(ADA, ELICIT, name('Ada'));
    expect(textOf(await c.readResource({ uri: 'new+ask://name' }))).toBe('hello Ada (state modern-state-ask://name)');
    expect(r.modernLog.reads.count).toBe(2);
  });

  it('2026 upstream → 2026 client: forwarded, the upstream state sealed inside the gateway’s', async () => {
    const r = rig();
    await using p = await r.start();
    const c = await p.modernClient(ADA, ELICIT, name('Ada'));
    expect(textOf(await read(c, 'new+ask://name'))).toBe('hello Ada (state modern-state-ask://name)');
    const first = (await c.request(
      { method: 'resources/read', params: { uri: 'new+ask://name' } } as never,
      PASS as never,
      {
        allowInputRequired: true,
      } as never,
    )) as { resultType: string; inputRequests: Record<string, { method: string }>; requestState: string };
    expect(first.resultType).toBe('input_required');
    expect(Object.keys(first.inputRequests)).toEqual(['name']);
    expect(first.requestState).not.toContain('modern-state');
    expect(Buffer.from(first.requestState, 'base64url').toString('latin1')).not.toContain('modern-state');
  });
});

describe('what is declined', () => {
  it('a caller without the capability: the upstream’s request is declined with a clear error, in each era', async () => {
    const r = rig();
    await using p = await r.start();
    const bare = await p.legacyClient(ADA, {});
    expect(textOf(await bare.readResource({ uri: 'old+ask://name' }))).toBe(
      'error: MCP error -32600: elicitation/create declined: the calling client did not declare the capability',
    );
    const e = await rpcError(bare.readResource({ uri: 'new+ask://name' }));
    expect([e.code, e.message]).toEqual([-32600, 'MCP error -32600: elicitation/create declined: the calling client did not declare the capability']);
    expect(e.data).toEqual({ method: 'elicitation/create', reason: 'capability' });
    const modernBare = await p.modernClient(BOB, {});
    expect(textOf(await read(modernBare, 'old+ask://name'))).toContain('elicitation/create declined: the calling client did not declare the capability');
  });

  it('sampling: relayed to a 2025 client, declined towards a 2026 client (deprecated in 2026-07-28)', async () => {
    const r = rig();
    await using p = await r.start();
    const sample = { sample: () => ({ role: 'assistant', model: 'm', content: { type: 'text', text: 'from the user’s model' } }) };
    const old = await p.legacyClient(ADA, { sampling: {} }, sample);
    expect(textOf(await old.readResource({ uri: 'old+sample://x' }))).toBe('sampled from the user’s model');
    expect(textOf(await old.readResource({ uri: 'new+sample://x' }))).toBe('sampled');
    const modern = await p.modernClient(BOB, { sampling: {} }, sample);
    expect(textOf(await read(modern, 'old+sample://x'))).toContain('sampling/createMessage declined: sampling is deprecated in 2026-07-28');
    const e = await rpcError(read(modern, 'new+sample://x'));
    expect([e.code, e.data]).toEqual([-32600, { method: 'sampling/createMessage', reason: 'deprecated' }]);
  });

  it('roots/list: answered by the calling client that declared roots, in either era', async () => {
    const r = rig();
    await using p = await r.start();
    const roots = { roots: () => ({ roots: [{ uri: 'file:///ada', name: 'home' }] }) };
    const old = await p.legacyClient(ADA, { roots: {} }, roots);
    expect(textOf(await old.readResource({ uri: 'old+roots://x' }))).toBe('roots file:///ada');
    expect(textOf(await old.readResource({ uri: 'new+roots://x' }))).toBe('roots file:///ada');
    const modern = await p.modernClient(BOB, { roots: {} }, roots);
    expect(textOf(await read(modern, 'old+roots://x'))).toBe('roots file:///ada');
    expect(textOf(await read(modern, 'new+roots://x'))).toBe('roots file:///ada');
    // Without the capability: a 2026 upstream's question is refused with -32021, naming what is missing.
    const bare = await p.modernClient(BOB, {}, {});
    const e = await rpcError(read(bare, 'new+roots://x'));
    expect([e.code, e.data]).toEqual([-32021, { requiredCapabilities: { roots: {} } }]);
  });

  it('a request that belongs to no calling session is declined and logged', async () => {
    const r = rig();
    await using p = await r.start();
    const c = await p.legacyClient(ADA, ELICIT, name('Ada'));
    expect(textOf(await c.readResource({ uri: 'old+plain://x' }))).toBe('plain');
    r.log.askUnsolicited();
    await within(r.log.unsolicitedDone.until(1), 'the unsolicited request to end');
    expect(r.log.unsolicited).toEqual(['error: MCP error -32600: elicitation/create declined: no single call in flight on this connection asked for it']);
    expect(p.logs.some((l) => l.msg === 'upstream request declined: no calling session' && l.server === 'old')).toBe(true);
  });
});

describe('routing on a shared upstream connection', () => {
  it('asks the caller whose call caused the request, never another session; an ambiguous one is declined', async () => {
    const r = rig();
    await using p = await r.start();
    const adaAsked = deferred();
    const release = deferred<Record<string, unknown>>();
    const bobAsked: unknown[] = [];
    const ada = await p.legacyClient(ADA, ELICIT, {
      elicit: () => {
        adaAsked.resolve();
        return release.promise;
      },
    });
    const bob = await p.legacyClient(BOB, ELICIT, { elicit: (params) => (bobAsked.push(params), { action: 'accept', content: { name: 'Bob' } }) });
    // One after the other: each caller is asked for its own call.
    const adaRead = ada.readResource({ uri: 'old+ask://name' });
    await within(adaAsked.promise, 'ada to be asked');
    // Bob's call is in flight beside Ada's: its request cannot be told apart, so it is declined, and Bob is never asked Ada's.
    expect(textOf(await bob.readResource({ uri: 'old+ask://bob' }))).toContain('declined: no single call in flight');
    release.resolve({ action: 'accept', content: { name: 'Ada' } });
    expect(textOf(await adaRead)).toBe('hello Ada');
    expect(bobAsked).toEqual([]);
    expect(textOf(await bob.readResource({ uri: 'old+ask://bob' }))).toBe('hello Bob');
  });

  it('a caller that can answer nothing is sent plain yet counted: a request during its call is never routed to another caller', async () => {
    const r = rig();
    await using p = await r.start();
    const adaAsked = deferred();
    const release = deferred<Record<string, unknown>>();
    let adaAskedCount = 0;
    const ada = await p.legacyClient(ADA, ELICIT, {
      elicit: () => {
        adaAskedCount++;
        adaAsked.resolve();
        return release.promise;
      },
    });
    const bare = await p.legacyClient(BOB, {});
    const adaRead = ada.readResource({ uri: 'old+ask://name' });
    await within(adaAsked.promise, 'ada to be asked');
    // Bob declared no capability, so his call holds nothing in the bridge; it still counts as a call
    // in flight, so the upstream's question during it is ambiguous and declined, never put to Ada.
    expect(textOf(await bare.readResource({ uri: 'old+ask://bob' }))).toContain('declined: no single call in flight');
    release.resolve({ action: 'accept', content: { name: 'Ada' } });
    expect(textOf(await adaRead)).toBe('hello Ada');
    expect(adaAskedCount).toBe(1);
    expect(p.proxy.bridge.stats()).toEqual({ inFlight: 0, held: 0 });
  });

  it('an answer made with one caller’s input is never shared: a read that joined the call makes its own', async () => {
    const r = rig();
    await using p = await r.start();
    const adaAsked = deferred();
    const release = deferred<Record<string, unknown>>();
    const ada = await p.legacyClient(ADA, ELICIT, {
      elicit: () => {
        adaAsked.resolve();
        return release.promise;
      },
    });
    const bob = await p.legacyClient(BOB, ELICIT, name('Bob'));
    const adaRead = ada.readResource({ uri: 'old+ask://name' });
    await within(adaAsked.promise, 'ada to be asked');
    const bobRead = bob.readResource({ uri: 'old+ask://name' }); // joins Ada's read in the cache
    release.resolve({ action: 'accept', content: { name: 'Ada' } });
    expect(textOf(await adaRead)).toBe('hello Ada');
    expect(textOf(await bobRead)).toBe('hello Bob');
    expect(textOf(await bob.readResource({ uri: 'old+ask://name' }))).toBe('hello Bob'); // nothing stored either
  });
});

describe('cancellation in the middle', () => {
  it('a 2025 client cancels while the upstream waits for its answer: the upstream call is cancelled and nothing is held', async () => {
    const r = rig();
    await using p = await r.start();
    const asked = deferred();
    const c = await p.legacyClient(ADA, ELICIT, {
      elicit: (_params, signal) =>
        new Promise((_, reject) => {
          asked.resolve();
          signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
        }),
    });
    const abort = new AbortController();
    const reading = c.readResource({ uri: 'old+ask://name' }, { signal: abort.signal });
    await within(asked.promise, 'the client to be asked');
    abort.abort();
    await expect(reading).rejects.toThrow();
    await within(r.log.cancelled.until(1), 'the upstream call to be cancelled');
    expect(p.proxy.bridge.stats()).toEqual({ inFlight: 0, held: 0 });
  });
});

describe('audit', () => {
  it('records who was asked and how it ended (accept, decline, cancel), never the content', async () => {
    const r = rig();
    await using p = await r.start();
    const answers = ['accept', 'decline', 'cancel'];
    const c = await p.legacyClient(ADA, ELICIT, {
      elicit: () => ({ action: answers.shift()!, ...(answers.length === 2 ? { content: { name: 'secret-name' } } : {}) }),
    });
    await c.readResource({ uri: 'old+ask://name' });
    await c.readResource({ uri: 'old+ask://name' });
    await c.readResource({ uri: 'new+ask://name' });
    const m = await p.modernClient(BOB, {});
    await read(m, 'old+ask://name');
    const relayed = r.audit.entries.filter((e) => e.method === 'elicitation/create');
    expect(relayed.map((e) => [e.caller.principal, e.server, e.upstreamUri, e.decision, e.rule, e.outcome])).toEqual([
      ['ada', 'old', 'ask://name', 'allow', 'bridge', 'accept'],
      ['ada', 'old', 'ask://name', 'allow', 'bridge', 'decline'],
      ['ada', 'new', 'ask://name', 'allow', 'bridge', 'cancel'],
      ['bob', 'old', 'ask://name', 'deny', 'bridge:capability', 'denied'],
    ]);
    expect(JSON.stringify(r.audit.entries)).not.toContain('secret-name');
  });
});
