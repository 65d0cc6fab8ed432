// A log sink that writes the lines of one event-loop turn together: in order, in one write, at the end of the turn or on exit.
import type { DestinationStream } from 'pino';

/** A {@link DestinationStream} that holds the lines of the current turn; `flushSync` writes them now. */
export interface TurnBatch extends DestinationStream {
  write(line: string): void;
  /** Writes what is held, then calls `done` (pino's `logger.flush`). */
  flush(done?: (err?: Error) => void): void;
  /** Writes what is held, now. Idempotent. */
  flushSync(): void;
  /** Lines written through so far, and writes made (tests, measurements). */
  readonly counts: { lines: number; writes: number };
}

/**
 * Holds each line given to `write` and hands the lines of one event-loop turn to `sink` as one
 * string, in the order they were written, when the turn ends (`schedule`, by default
 * `setImmediate`: after the turn's I/O callbacks and their microtasks). A busy gateway writes one
 * access-log line per request; on a pipe each write is a system call that also wakes the reader,
 * so lines written together cost one call instead of one each. The content and order of the lines
 * are those of the unbatched sink; only the moment they leave moves, to the end of their turn.
 *
 * `sink` must write synchronously (sonic-boom with `sync: true`): `flushSync` is what the process
 * calls on `exit`, so no line written before the process ends is lost to the batching.
 *
 * @example const batch = createTurnBatch((s) => sonic.write(s)); pino(options, batch);
 */
export function createTurnBatch(sink: (text: string) => void, schedule: (fn: () => void) => void = setImmediate): TurnBatch {
  let held = '';
  let scheduled = false;
  const counts = { lines: 0, writes: 0 };
  const flushSync = () => {
    scheduled = false;
    if (held === '') return;
    const text = held;
    held = '';
    counts.writes++;
    sink(text);
  };
  return {
    counts,
    write(line: string) {
      held += line;
      counts.lines++;
      if (!scheduled) {
        scheduled = true;
        schedule(flushSync);
      }
    },
    flush(done) {
      try {
        flushSync();
      } catch (err) {
        return done?.(err as Error);
      }
      done?.();
    },
    flushSync,
  };
}
