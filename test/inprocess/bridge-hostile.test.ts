// The bridge under a hostile client: tampered and replayed requestState, expired and too many held calls, answers to questions never asked.
import { describe, expect, it } from 'vitest';
import { PASS } from '../helpers/passthrough.js';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { legacyInputUpstream, modernInputUpstream, newInputLog, startBridgeRig } from '../helpers/input-upstreams.js';
import { rpcError } from '../helpers/rpc-error.js';
import { within } from '../helpers/gate.js';
import type { SetTimer } from '../../src/federation/listing.js';

const ADA = { principal: 'ada', roles: [], transport: 'stdio' as const };
const MALLORY = { principal: 'mallory', roles: [], transport: 'stdio' as const };
const ELICIT = { elicitation: { form: {} } };
const INVALID = [-32602, 'Invalid or expired requestState'];

interface Asked {
  resultType: string;
  inputRequests: Record<string, { method: string }>;
  requestState: string;
}

/** One leg by hand (no auto-fulfilment): the first, or a retry with `state` and `answers`. */
const leg = (c: ModernClient, uri: string, state?: string, answers?: Record<string, unknown>) =>
  c.request(
    {
      method: 'resources/read',
      params: { uri, ...(state !== undefined ? { requestState: state } : {}), ...(answers ? { inputResponses: answers } : {}) },
    } as never,
    PASS as never,
    { allowInputRequired: true } as never,
  ) as Promise<Asked & { contents?: { text: string }[] }>;
const accept = (name: string) => ({ action: 'accept', content: { name } });
const codeOf = async (p: Promise<unknown>) => {
  const e = await rpcError(p);
  return [e.code, e.message.replace(/^MCP error -?\d+: /, '')];
};

/** Resolves on the first turn of the event loop where `done()` holds (no timer involved); gives up after a million turns. */
async function turnsUntil(done: () => boolean): Promise<void> {
  for (let turns = 0; !done(); turns++) {
    if (turns > 1_000_000) throw new Error('never happened');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Timers fired by the test, not by time. */
function manualTimers() {
  const armed = new Set<() => void>();
  const setTimer: SetTimer = (_ms, fire) => {
    armed.add(fire);
    return () => armed.delete(fire);
  };
  return {
    setTimer,
    fireAll: () => {
      for (const fire of [...armed]) {
        armed.delete(fire);
        fire();
      }
    },
  };
}

async function start(options: { config?: Record<string, unknown>; timers?: ReturnType<typeof manualTimers>; now?: () => number } = {}) {
  const log = newInputLog();
  const twinLog = newInputLog();
  const modernLog = newInputLog();
  const rig = await startBridgeRig({
    upstreams: {
      old: { era: 'legacy', make: () => legacyInputUpstream(log) },
      twin: { era: 'legacy', make: () => legacyInputUpstream(twinLog) },
      new: { era: 'modern', make: () => modernInputUpstream(modernLog) },
      newtwin: { era: 'modern', make: () => modernInputUpstream(newInputLog()) },
    },
    ...(options.config ? { config: options.config } : {}),
    ...(options.timers ? { bridgeTimer: options.timers.setTimer } : {}),
    ...(options.now ? { wallClock: options.now } : {}),
  });
  return { rig, log, twinLog, modernLog };
}

describe.each([
  ['a held call (2025 upstream)', 'old', 'twin'],
  ['a sealed upstream state (2026 upstream)', 'new', 'newtwin'],
])('%s towards a 2026 client', (_what, server, twin) => {
  it('a tampered requestState is refused; the genuine one still works', async () => {
    const { rig } = await start();
    await using _ = rig;
    const c = await rig.modernClient(ADA, ELICIT);
    const first = await leg(c, `${server}+ask://name`);
    expect(first.resultType).toBe('input_required');
    const key = Object.keys(first.inputRequests)[0]!;
    const bytes = Buffer.from(first.requestState, 'base64url');
    for (const at of [0, 14, bytes.length - 1]) {
      const tampered = Buffer.from(bytes);
      tampered[at] = tampered[at]! ^ 1;
      expect(await codeOf(leg(c, `${server}+ask://name`, tampered.toString('base64url'), { [key]: accept('Eve') }))).toEqual(INVALID);
    }
    expect(await codeOf(leg(c, `${server}+ask://name`, 'not-a-state', { [key]: accept('Eve') }))).toEqual(INVALID);
    const done = await leg(c, `${server}+ask://name`, first.requestState, { [key]: accept('Ada') });
    expect(done.contents?.[0]?.text).toMatch(/^hello Ada/);
  });

  it('replayed against another server, another resource, or as another principal: refused', async () => {
    const { rig } = await start();
    await using _ = rig;
    const ada = await rig.modernClient(ADA, ELICIT);
    const mallory = await rig.modernClient(MALLORY, ELICIT);
    const first = await leg(ada, `${server}+ask://name`);
    const key = Object.keys(first.inputRequests)[0]!;
    const answers = { [key]: accept('Mallory') };
    expect(await codeOf(leg(ada, `${twin}+ask://name`, first.requestState, answers))).toEqual(INVALID);
    expect(await codeOf(leg(ada, `${server}+ask://other`, first.requestState, answers))).toEqual(INVALID);
    expect(await codeOf(leg(mallory, `${server}+ask://name`, first.requestState, answers))).toEqual(INVALID);
    expect((await leg(ada, `${server}+ask://name`, first.requestState, { [key]: accept('Ada') })).contents?.[0]?.text).toMatch(/^hello Ada/);
  });

  it('answers to questions never asked are refused; answers given up front are never taken as the gateway’s', async () => {
    const { rig } = await start();
    await using _ = rig;
    const c = await rig.modernClient(ADA, ELICIT);
    const first = await leg(c, `${server}+ask://name`);
    expect(await codeOf(leg(c, `${server}+ask://name`, first.requestState, { bogus: accept('Eve') }))).toEqual(INVALID);
    // No state (SEP-2322 lets a client pre-supply answers): a 2026 upstream gets them as the client's
    // own data and answers; a 2025 upstream never sees them (its call asks again, or is declined
    // while the first one is held on the same connection), so they are not refused either.
    const upfront = await leg(c, `${server}+ask://name`, undefined, { name: accept('Eve') });
    if (server === 'new') expect(upfront.contents?.[0]?.text).toMatch(/^hello Eve/);
    else expect(JSON.stringify(upfront)).not.toContain('Eve');
  });
});

describe('bounds on held calls', () => {
  it('an expired held call: the upstream call is cancelled, its state freed, the retry refused', async () => {
    const timers = manualTimers();
    const { rig, log } = await start({ timers });
    await using _ = rig;
    const c = await rig.modernClient(ADA, ELICIT);
    const first = await leg(c, 'old+ask://name');
    expect(rig.proxy.bridge.stats()).toEqual({ inFlight: 1, held: 1 });
    timers.fireAll();
    await within(log.cancelled.until(1), 'the held upstream call to be cancelled');
    expect(rig.proxy.bridge.stats()).toEqual({ inFlight: 0, held: 0 });
    expect(await codeOf(leg(c, 'old+ask://name', first.requestState, { 'input-1': accept('Ada') }))).toEqual(INVALID);
  });

  it('a sealed upstream state past bridge.heldCallTtlMs is refused', async () => {
    let now = 1_000_000;
    const { rig } = await start({ now: () => now, config: { bridge: { heldCallTtlMs: 60_000 } } });
    await using _ = rig;
    const c = await rig.modernClient(ADA, ELICIT);
    const first = await leg(c, 'new+ask://name');
    now += 60_001;
    expect(await codeOf(leg(c, 'new+ask://name', first.requestState, { name: accept('Ada') }))).toEqual(INVALID);
  });

  it('a principal past bridge.maxHeldCallsPerPrincipal: the call is cancelled upstream and refused; others are not affected', async () => {
    const { rig, twinLog } = await start({ config: { bridge: { maxHeldCallsPerPrincipal: 1 } } });
    await using _ = rig;
    const ada = await rig.modernClient(ADA, ELICIT);
    // A 2025 upstream connection relays for one bridged call at a time, so the held calls are on two upstreams.
    const held = await leg(ada, 'old+ask://1');
    const e = await rpcError(leg(ada, 'twin+ask://2'));
    expect([e.code, e.message, e.data]).toEqual([-32603, 'Too many held calls', { limit: 1 }]);
    await within(twinLog.cancelled.until(1), 'the refused call to be cancelled upstream');
    expect(rig.proxy.bridge.stats()).toEqual({ inFlight: 1, held: 1 });
    const mallory = await rig.modernClient(MALLORY, ELICIT);
    expect((await leg(mallory, 'twin+ask://1')).resultType).toBe('input_required');
    // Ada's held call still resumes, and frees her slot.
    expect((await leg(ada, 'old+ask://1', held.requestState, { 'input-1': accept('Ada') })).contents?.[0]?.text).toBe('hello Ada');
    expect(rig.proxy.bridge.stats()).toEqual({ inFlight: 1, held: 1 }); // Mallory's
  });

  it('a held call whose upstream call ends on its own frees its principal’s slot', async () => {
    const { rig, log } = await start({ config: { bridge: { maxHeldCallsPerPrincipal: 1 } } });
    await using _ = rig;
    const ada = await rig.modernClient(ADA, ELICIT);
    const held = await leg(ada, 'old+giveup://x');
    expect(rig.proxy.bridge.stats()).toEqual({ inFlight: 1, held: 1 });
    log.giveUp();
    await within(log.gaveUp.until(1), 'the upstream to give up');
    // Its answer arrives on its own, with nobody retrying: re-checked each turn of the event loop, no timer.
    await within(
      turnsUntil(() => rig.proxy.bridge.stats().held === 0),
      'the ended call to free its slot',
    );
    expect(rig.proxy.bridge.stats()).toEqual({ inFlight: 0, held: 0 });
    expect((await leg(ada, 'twin+ask://1')).resultType).toBe('input_required');
    expect(await codeOf(leg(ada, 'old+giveup://x', held.requestState, { 'input-1': accept('Ada') }))).toEqual(INVALID);
  });

  it('a state of an earlier round is refused once the call moved on', async () => {
    const { rig } = await start();
    await using _ = rig;
    const c = await rig.modernClient(ADA, ELICIT);
    const round1 = await leg(c, 'old+twice://x');
    const round2 = await leg(c, 'old+twice://x', round1.requestState, { 'input-1': accept('Ada') });
    expect(round2.resultType).toBe('input_required');
    expect(await codeOf(leg(c, 'old+twice://x', round1.requestState, { 'input-1': accept('Eve') }))).toEqual(INVALID);
    expect((await leg(c, 'old+twice://x', round2.requestState, { 'input-2': accept('Lovelace') })).contents?.[0]?.text).toBe('hello Ada Lovelace');
  });
});
