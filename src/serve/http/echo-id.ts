// Makes one 2026 HTTP answer carry the request's numeric id as the client spelled it (`1e2`, not the SDK's `100`).
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { withRawId } from '../../wire/raw-id.js';

/**
 * The SDK's stateless handler serialises the parsed id (`1e2` becomes `100`, `1.50` becomes
 * `1.5`). For the rare request whose numeric id `value` was written otherwise (`lexeme`), this wraps
 * `res` so that the answer with that id carries `lexeme`: a JSON body is rewritten whole when it
 * ends, an SSE body event by event; everything else passes unchanged. `Content-Length` is dropped
 * (the length changes). Call before the handler writes anything; costs nothing for other requests,
 * which never call it.
 */
export function echoIdAsSent(res: ServerResponse, value: number, lexeme: string): void {
  const writeHead = res.writeHead.bind(res) as (status: number, headers?: OutgoingHttpHeaders) => ServerResponse;
  const write = res.write.bind(res) as (chunk: string) => boolean;
  const end = res.end.bind(res) as (chunk?: string) => ServerResponse;
  let mode: 'json' | 'sse' | 'pass' = 'pass';
  let held = '';
  const decoder = new TextDecoder();
  const text = (chunk: unknown) => (typeof chunk === 'string' ? chunk : chunk instanceof Uint8Array ? decoder.decode(chunk, { stream: true }) : '');
  const rewrite = (json: string): string => {
    try {
      const m = JSON.parse(json) as unknown;
      if (typeof m !== 'object' || m === null) return json;
      const { id, method } = m as { id?: unknown; method?: unknown };
      return method === undefined && id === value ? withRawId(m, lexeme) : json;
    } catch {
      return json;
    }
  };
  /** Complete SSE events of `held`, their `data:` lines rewritten; the incomplete rest stays held. */
  const events = (flush: boolean): string => {
    const cut = flush ? held.length : held.lastIndexOf('\n\n') + 2;
    if (cut < 2 && !flush) return '';
    const done = held.slice(0, cut);
    held = held.slice(cut);
    return done.replace(/^data: (.*)$/gm, (_line, data: string) => `data: ${rewrite(data)}`);
  };

  res.writeHead = ((status: number, headers?: OutgoingHttpHeaders) => {
    const h: OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(headers ?? {})) if (k.toLowerCase() !== 'content-length') h[k] = v;
    const type = String(Object.entries(h).find(([k]) => k.toLowerCase() === 'content-type')?.[1] ?? '').toLowerCase();
    mode = type.startsWith('application/json') ? 'json' : type.startsWith('text/event-stream') ? 'sse' : 'pass';
    return writeHead(status, h);
  }) as typeof res.writeHead;
  res.write = ((chunk: unknown) => {
    if (mode === 'pass') return write(chunk as string);
    held += text(chunk);
    if (mode === 'json') return true;
    const out = events(false);
    return out === '' ? true : write(out);
  }) as typeof res.write;
  res.end = ((chunk?: unknown) => {
    if (mode === 'pass') return end(chunk as string);
    if (chunk !== undefined && typeof chunk !== 'function') held += text(chunk);
    held += decoder.decode();
    const out = mode === 'json' ? rewrite(held) : events(true);
    held = '';
    return end(out);
  }) as typeof res.end;
}
