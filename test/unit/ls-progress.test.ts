// `ls` progress: one line per upstream in the order they settle; a spinner on a TTY, cleared at the end.
import { describe, expect, it } from 'vitest';
import { showSettling, type SettlingUpstream, type Ticker } from '../../src/ls-progress.js';

/** An upstream whose first connection attempt the test settles by hand. */
function upstream(id: string) {
  let settle!: () => void;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  const u = { id, status: 'connecting', protocolVersion: undefined as string | undefined, settled: () => settled };
  return {
    u: u as unknown as SettlingUpstream,
    async ready(protocol: string) {
      Object.assign(u, { status: 'ready', protocolVersion: protocol });
      settle();
      await settled;
      await Promise.resolve();
    },
    async fail() {
      u.status = 'unavailable';
      settle();
      await settled;
      await Promise.resolve();
    },
  };
}

function output(isTTY: boolean) {
  const chunks: string[] = [];
  return { out: { isTTY, write: (t: string) => void chunks.push(t) }, chunks, text: () => chunks.join('') };
}

describe('ls progress', () => {
  it('prints a plain line per upstream as it settles when not on a TTY, and nothing else', async () => {
    const a = upstream('a');
    const b = upstream('b');
    const o = output(false);
    const ticks: (() => void)[] = [];
    showSettling([a.u, b.u], o.out, (_ms, tick) => (ticks.push(tick), () => undefined));
    expect(o.text()).toBe('');
    await b.fail();
    expect(o.text()).toBe('ls: b unavailable\n');
    await a.ready('2026-07-28');
    expect(o.text()).toBe('ls: b unavailable\nls: a ready (2026-07-28)\n');
    expect(ticks).toEqual([]); // no spinner
  });

  it('on a TTY draws a spinner naming the ones still starting, a mark per settled upstream above it, and clears it at the end', async () => {
    const a = upstream('a');
    const b = upstream('b');
    const o = output(true);
    let tick: (() => void) | undefined;
    let stopped = 0;
    const ticker: Ticker = (ms, t) => {
      expect(ms).toBeGreaterThan(0);
      tick = t;
      return () => {
        stopped++;
      };
    };
    const stop = showSettling([a.u, b.u], o.out, ticker);
    expect(o.text()).toBe('⠋ starting a, b (0 of 2 settled)');
    tick!();
    expect(o.chunks.at(-1)).toBe('\r\x1b[2K⠙ starting a, b (0 of 2 settled)');
    await a.ready('2025-11-25');
    expect(o.chunks.at(-1)).toBe('\r\x1b[2K✓ a ready (2025-11-25)\n⠙ starting b (1 of 2 settled)');
    await b.fail();
    expect(o.chunks.slice(-2)).toEqual(['\r\x1b[2K✗ b unavailable\n', '\r\x1b[2K']);
    expect(stopped).toBe(1);
    stop(); // idempotent
    expect(stopped).toBe(1);
  });

  it('stop() before anything settles clears the spinner and prints nothing later', async () => {
    const a = upstream('a');
    const o = output(true);
    const stop = showSettling([a.u], o.out, () => () => undefined);
    stop();
    await a.ready('2025-11-25');
    expect(o.chunks).toEqual(['⠋ starting a (0 of 1 settled)', '\r\x1b[2K']);
  });
});
