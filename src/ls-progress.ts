// `ls` progress on stderr: each upstream's state as it settles, under a spinner on a TTY, as plain lines otherwise.
import type { Upstream } from './upstream/upstream.js';

/** Where progress goes (stderr): a spinner is drawn only when it is a TTY. */
export interface ProgressOutput {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** What progress needs of an upstream. */
export type SettlingUpstream = Pick<Upstream, 'id' | 'settled' | 'status' | 'protocolVersion'>;

/** Repeats the spinner's redraw (injected by tests). Returns the function that stops it. */
export type Ticker = (everyMs: number, tick: () => void) => () => void;

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const CLEAR_LINE = '\r\x1b[2K';

const realTicker: Ticker = (ms, tick) => {
  const t = setInterval(tick, ms);
  t.unref();
  return () => clearInterval(t);
};

/** One upstream's settled state, as a line: `ok ready (2025-11-25)`, `ghost unavailable`. */
function describe(u: SettlingUpstream): string {
  const protocol = u.status === 'ready' ? u.protocolVersion : undefined;
  return `${u.id} ${u.status}${protocol ? ` (${protocol})` : ''}`;
}

/**
 * Reports each upstream as its first connection attempt settles, in the order they settle: on a
 * TTY a line each (`✓ ok ready (2025-11-25)`, `✗ ghost unavailable`) above a spinner naming the
 * ones still starting; otherwise a plain line each (`ls: ok ready (2025-11-25)`). Returns `stop`,
 * which clears the spinner; idempotent, and called by itself once every upstream has settled.
 *
 * @example
 * const stop = showSettling(proxy.pool.upstreams, process.stderr);
 * await proxy.start();
 * stop();
 */
export function showSettling(upstreams: readonly SettlingUpstream[], out: ProgressOutput, ticker: Ticker = realTicker): () => void {
  const pending = new Set(upstreams);
  const tty = out.isTTY === true;
  let frame = 0;
  let stopped = false;
  let stopTicking: (() => void) | undefined;
  const spinner = () =>
    `${FRAMES[frame % FRAMES.length]} starting ${[...pending].map((u) => u.id).join(', ')} (${upstreams.length - pending.size} of ${upstreams.length} settled)`;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    stopTicking?.();
    if (tty) out.write(CLEAR_LINE);
  };
  for (const u of upstreams) {
    void u.settled().then(() => {
      if (stopped || !pending.delete(u)) return;
      if (tty) out.write(`${CLEAR_LINE}${u.status === 'ready' ? '✓' : '✗'} ${describe(u)}\n${pending.size > 0 ? spinner() : ''}`);
      else out.write(`ls: ${describe(u)}\n`);
      if (pending.size === 0) stop();
    });
  }
  if (pending.size === 0) stop();
  else if (tty) {
    out.write(spinner());
    stopTicking = ticker(80, () => {
      frame++;
      out.write(`${CLEAR_LINE}${spinner()}`);
    });
  }
  return stop;
}
