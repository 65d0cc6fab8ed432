// Log and JSON-lines files as tests read them: pino records from a process's stderr, audit and fixture records from a file.
import { existsSync, readFileSync } from 'node:fs';

/** One pino record from the proxy's log. */
export type LogRecord = Record<string, unknown> & { level: number; msg: string };

/** Parses JSON log lines; a line that is not JSON fails the test (the proxy logs JSON when not on a TTY). */
export function parseLogLines(text: string): LogRecord[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as LogRecord;
      } catch {
        throw new Error(`log line is not JSON: ${line}`);
      }
    });
}

/** The JSON records of a JSON-lines file (one object a line; an empty or missing file has none). */
export function readJsonLines<T = Record<string, unknown>>(file: string): T[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}
