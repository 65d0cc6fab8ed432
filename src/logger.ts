// Builds the pino logger: stderr (pretty on a TTY, JSON otherwise), a file, or an injected stream.
import { createRequire } from 'node:module';
import pino, { type DestinationStream, type Logger } from 'pino';

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
  return pino(base, pino.destination({ dest: 2, sync: true }));
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
