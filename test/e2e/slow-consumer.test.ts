// End to end, a client that stops reading: it keeps asking for 1 MiB resources but never reads the
// proxy's stdout. The proxy must bound what it holds for that session (wire.maxQueuedBytes), close
// it with an error record, and, stdio having one session, exit with code 1 - instead of buffering
// every answer in memory. Paced by events: each wave of reads waits for the upstream to have served
// them (the fixture logs each read to its stderr, which the proxy logs) or for the proxy to exit.
import { describe, expect, it } from 'vitest';
import { rssBytes, upstreams } from '../helpers/built-cli.js';
import { rawCli } from '../helpers/cli-stdio.js';
import { within } from '../helpers/gate.js';

const MIB = 1024 * 1024;
const SIZE = MIB;
const MAX_QUEUED = 8 * MIB;
/** Bound on the proxy's resident memory while the backlog builds. */
const RSS_LIMIT = 400 * MIB;
const WAVE = 16;
/** 20 waves of 16 MiB: far past the queue bound, and well past RSS_LIMIT for a proxy that buffers it all. */
const MAX_WAVES = 20;

describe('a client that stops reading stdout', () => {
  it('is disconnected once wire.maxQueuedBytes is queued: bounded RSS, an error record, exit code 1', { timeout: 45_000 }, async () => {
    await using s = rawCli(
      {
        servers: { big: upstreams.fixture('--resources', '9', '--size', String(SIZE), '--any-query', '--log-reads') },
        cache: { enabled: false },
        wire: { maxQueuedBytes: MAX_QUEUED },
      },
      { readStdout: false },
    );
    const pid = s.carrier.pid;
    const exited = s.carrier.exited.then(() => true);
    const servedUpstream = () => s.carrier.logCount((r) => r.msg === 'upstream stderr' && typeof r.stderr === 'string' && r.stderr.startsWith('read '));
    await s.send({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'stalled', version: '1.0.0' } },
    });
    await s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });

    const samples: number[] = [];
    let sent = 0;
    for (let wave = 0; wave < MAX_WAVES && s.carrier.exitCode === undefined; wave++) {
      // Distinct URIs (a query the fixture ignores): no two reads can share one upstream call.
      const reads = Array.from({ length: WAVE }, (_, k) => {
        const n = sent + k;
        return `${JSON.stringify({ jsonrpc: '2.0', id: n + 1, method: 'resources/read', params: { uri: `big+fixture://res/${n % 9}?n=${n}` } })}\n`;
      });
      const written = await s.write(reads.join('')).then(
        () => true,
        () => false, // the proxy is gone (EPIPE): the exit below says why
      );
      if (!written) break;
      sent += WAVE;
      const target = sent;
      const served = s
        .until(() => servedUpstream() >= target, `the upstream to serve ${target} reads`, 15_000)
        .catch((err: unknown) => {
          if (s.carrier.exitCode === undefined) throw err; // a real timeout; an exit is what `exited` reports
        });
      await Promise.race([exited, served]);
      if (s.carrier.exitCode === undefined) samples.push(rssBytes(pid));
    }

    const peak = Math.max(0, ...samples);
    expect(peak, `RSS samples (MiB): ${samples.map((b) => Math.round(b / MIB)).join(' ')}`).toBeLessThan(RSS_LIMIT);
    const { code } = await within(s.carrier.exited, `the proxy to exit after ${sent} unread reads; stderr:\n${s.carrier.tail()}`, 15_000);
    const closed = s.carrier.logs().find((r) => r.level >= 50 && r.msg.includes('not reading'));
    expect(closed, `an error record saying the client is not reading; stderr:\n${s.carrier.tail()}`).toBeDefined();
    expect(code).toBe(1);
    // It was the bound that closed the session, not an early give-up: more than the bound was asked for.
    expect(sent * SIZE).toBeGreaterThan(MAX_QUEUED);
  });
});
