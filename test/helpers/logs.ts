// JSON lines as tests read them: pino records from a process's stderr or an in-process logger, audit and fixture records from a file.
import { existsSync, readFileSync } from 'node:fs';
import { Writable } from 'node:stream';

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

/** A stream that parses each JSON line written to it into `records` (e.g. a pino destination), calling `onRecord` with each. */
export function jsonLinesSink(onRecord?: (record: Record<string, unknown>) => void): { records: Record<string, unknown>[]; destination: Writable } {
  const records: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split('\n')) {
        if (!line) continue;
        const record = JSON.parse(line) as Record<string, unknown>;
        records.push(record);
        onRecord?.(record);
      }
      cb();
    },
  });
  return { records, destination };
}
