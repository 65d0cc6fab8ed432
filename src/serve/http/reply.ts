// The HTTP endpoint's small answers: a JSON body (or just the end, once headers are out), one header's value (error bodies come from errors.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Answers `status` with `body` as JSON; once headers are out, only ends the response. */
export const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
};

/** A header's single value (undefined when absent). */
export function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
