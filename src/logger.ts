// Builds the pino logger: stderr (pretty on a TTY, JSON otherwise), a file, or an injected stream.
import { createRequire } from 'node:module';
import pino, { type DestinationStream, type Logger } from 'pino';
import { createTurnBatch, type TurnBatch } from './turn-batch.js';

export type { Logger } from 'pino';

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** pino level: fatal, error, warn, info, debug, trace or silent. Default: "info". */
  level?: string;
  /** Write JSON lines to this file instead of stderr. */
  file?: string;
  /** Write to this stream instead (tests). Takes precedence over `file`. */
  destination?: DestinationStream;
  /** Human-readable output. Default: true when stderr is a TTY and no file or destination is given. */
  pretty?: boolean;
  /**
   * JSON lines to stderr written once per event-loop turn, the turn's lines together, instead of one
   * write per line (see `createTurnBatch`); same lines in the same order. Only for a process where
   * nothing else writes to stderr while it runs (`serve`, with no audit log on stderr). Default: false.
   */
  batch?: boolean;
}

/** Paths redacted wherever they appear in a log record: credentials never reach a log. */
export const REDACT_PATHS = [
  'headers.authorization',
  'headers.Authorization',
  '*.headers.authorization',
  '*.headers.Authorization',
  'env',
  '*.env',
  'token',
  '*.token',
];

/**
 * Creates the process logger. stdout is never used: on stdio it carries JSON-RPC only.
 *
 * @example createLogger({ level: 'debug', file: '/var/log/mcp-federate.log' })
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const base = {
    level: options.level ?? 'info',
    base: { name: 'mcp-federate' },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
  if (options.destination) return pino(base, options.destination);
  if (options.file) return pino(base, pino.destination({ dest: options.file, mkdir: true, sync: false }));
  const wantPretty = options.pretty ?? process.stderr.isTTY;
  if (wantPretty) {
    // Loaded only for a TTY: it is the one log dependency a piped or file log never needs.
    const pretty = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
    return pino(base, pretty({ destination: 2, sync: true, colorize: true }));
  }
  return pino(base, options.batch ? stderrBatch() : pino.destination({ dest: 2, sync: true }));
}

/** The one batch in front of stderr, shared by every batched logger so their lines keep their order. */
let batched: TurnBatch | undefined;

function stderrBatch(): TurnBatch {
  if (batched) return batched;
  const stderr = pino.destination({ dest: 2, sync: true });
  const batch = createTurnBatch((text) => stderr.write(text));
  // Whatever ends the process writes the turn's lines first: process.exit, and an uncaught
  // exception before Node prints it (the lines that led to it come before its stack, as unbatched).
  process.once('exit', () => batch.flushSync());
  process.on('uncaughtExceptionMonitor', () => batch.flushSync());
  return (batched = batch);
}

/** Writes the batched stderr log's held lines now (before the process writes to stderr itself); a no-op without one. */
export function flushStderrLog(): void {
  batched?.flushSync();
}

/** Flushes a logger's destination when it supports it (file destinations are asynchronous). */
export function flushLogger(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    try {
      logger.flush((_err?: Error) => resolve());
    } catch {
      resolve();
    }
  });
}
