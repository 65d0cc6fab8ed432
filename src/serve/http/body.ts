// A request body read whole, bounded in bytes before anything parses it.
import type { IncomingMessage } from 'node:http';

/** The body, or why there is none to use. */
export type BodyOutcome = { ok: true; text: string } | { ok: false; reason: 'too-large' | 'aborted' };

/**
 * Reads `req`'s body up to `maxBytes`. A declared `Content-Length` over the bound is refused before
 * reading; a body that grows past it is refused as soon as it does (the rest is not buffered).
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<BodyOutcome> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve({ ok: false, reason: 'too-large' });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (outcome: BodyOutcome) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      resolve(outcome);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.pause(); // stop buffering; the response closes the connection
        return finish({ ok: false, reason: 'too-large' });
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => finish({ ok: true, text: Buffer.concat(chunks).toString('utf8') }));
    req.once('error', () => finish({ ok: false, reason: 'aborted' }));
    req.once('close', () => finish({ ok: false, reason: 'aborted' }));
  });
}
