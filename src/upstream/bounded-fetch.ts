// A fetch wrapper bounding what an HTTP upstream can make the proxy hold: bytes per message and JSON nesting depth.
import { errorAnswer, JsonRpc, MARK_TOO_DEEP, MARK_TOO_LARGE } from '../errors.js';
import { exceedsDepth } from '../wire/json-depth.js';
import type { RpcId } from './message-sniffer.js';
import { boundEventStream, type Refusal } from './sse-bounds.js';

export { MARK_TOO_DEEP, MARK_TOO_LARGE };

/** Options of {@link createBoundedFetch}. */
export interface BoundedFetchOptions {
  /** Largest JSON body, SSE event or other body accepted, in bytes. */
  maxResponseBytes: number;
  /** Deepest nesting of objects and arrays accepted in a JSON-RPC message. */
  maxDepth: number;
  /** The fetch to wrap. Default: the global fetch. */
  fetch?: typeof fetch;
  /** Hears every message or body that was refused, with a reason for logs. */
  onDrop?: (reason: string) => void;
}

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

const decoder = new TextDecoder();

/**
 * Wraps `fetch` for the SDK's HTTP client transports so that no upstream message larger than
 * `maxResponseBytes` or nested deeper than `maxDepth` reaches them, and none is ever buffered past
 * the limit:
 *
 * - a 2xx `application/json` body is read with a byte count (refused early on `content-length`);
 *   a refused one becomes a JSON-RPC error (-32603, `data.limit` and {@link MARK_TOO_LARGE} or
 *   {@link MARK_TOO_DEEP}) for each request id of the POST, or an empty 202 when it had none;
 * - a 2xx `text/event-stream` passes event by event: an event over the limit is discarded up to the
 *   blank line that ends it and replaced by such an error for the request it answers (its own `id`
 *   when it is recognisably a response, else the POST's first unanswered request); events that
 *   answer nothing (notifications, GET streams without a recognisable response) are dropped;
 * - any other body passes unchanged, but errors its stream once it exceeds the limit.
 *
 * Bodies that pass are not parsed: a JSON body costs one decode and one {@link exceedsDepth} scan.
 *
 * @example new StreamableHTTPClientTransport(url, { fetch: createBoundedFetch({ maxResponseBytes: 1 << 25, maxDepth: 1000 }) })
 */
export function createBoundedFetch(options: BoundedFetchOptions): typeof fetch {
  const base = options.fetch ?? fetch;
  const limits: Limits = { bytes: options.maxResponseBytes, depth: options.maxDepth, onDrop: options.onDrop ?? noop };
  return async (input, init) => {
    const response = await base(input, init);
    if (!response.body || NULL_BODY_STATUSES.has(response.status) || response.status === 0) return response;
    const type = mediaType(response.headers.get('content-type'));
    if (response.ok && type === 'application/json') return boundJson(response, init, limits);
    if (response.ok && type === 'text/event-stream') {
      const body = boundEventStream(response.body, {
        maxEventBytes: limits.bytes,
        maxDepth: limits.depth,
        requestIds: requestIds(init).ids,
        refusal: (id, why) => refusal(id, why, limits),
        onDrop: limits.onDrop,
      });
      return rebuild(response, body, response.headers);
    }
    return rebuild(response, response.body.pipeThrough(byteLimit(limits)), response.headers);
  };
}

interface Limits {
  bytes: number;
  depth: number;
  onDrop: (reason: string) => void;
}

function noop(): void {}

/** The `type/subtype` of a Content-Type header, lowercased; undefined when absent or ambiguous (joined duplicates). */
function mediaType(header: string | null): string | undefined {
  if (!header || header.includes(',')) return undefined;
  return header.split(';', 1)[0]?.trim().toLowerCase();
}

/** The ids of the requests in a POST body the SDK sent (one JSON-RPC message or a batch). */
function requestIds(init: RequestInit | undefined): { ids: RpcId[]; batch: boolean } {
  const body = init?.body;
  if (typeof body !== 'string' || (init?.method ?? 'GET').toUpperCase() !== 'POST') return { ids: [], batch: false };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { ids: [], batch: false };
  }
  const batch = Array.isArray(parsed);
  const ids: RpcId[] = [];
  for (const m of batch ? (parsed as unknown[]) : [parsed]) {
    if (typeof m !== 'object' || m === null || typeof (m as { method?: unknown }).method !== 'string') continue;
    const id = (m as { id?: unknown }).id;
    if (typeof id === 'string' || typeof id === 'number') ids.push(id);
  }
  return { ids, batch };
}

/** The JSON-RPC error that stands in for a refused answer to request `id`. */
function refusal(id: RpcId, why: Refusal, limits: Limits): object {
  return refusedAnswer(id, why, limits.bytes, limits.depth);
}

/**
 * The JSON-RPC error that stands in for an answer to request `id` refused for its size (`bytes`, the
 * limit) or its nesting (`depth`): `-32603` with `data.limit` and the mark `Upstream` translates.
 */
export function refusedAnswer(id: RpcId, why: Refusal, bytes: number, depth: number): object {
  return why === 'large'
    ? errorAnswer(id, JsonRpc.INTERNAL_ERROR, 'Upstream response too large', { limit: bytes, [MARK_TOO_LARGE]: true })
    : errorAnswer(id, JsonRpc.INTERNAL_ERROR, 'Upstream response nested too deeply', { limit: depth, [MARK_TOO_DEEP]: true });
}

function reason(why: Refusal, what: string, limits: Limits): string {
  return why === 'large' ? `${what} over maxResponseBytes (${limits.bytes})` : `${what} nested deeper than maxDepth (${limits.depth})`;
}

/** A new Response with `body`, keeping the original's status, headers, url and redirected flag. */
function rebuild(original: Response, body: ConstructorParameters<typeof Response>[0], headers: Headers, status = original.status): Response {
  const response = new Response(body, { status, statusText: status === original.status ? original.statusText : '', headers });
  Object.defineProperties(response, { url: { value: original.url }, redirected: { value: original.redirected } });
  return response;
}

/** The original headers minus those that described the wire encoding of a body now replaced. */
function bodyHeaders(original: Response, contentType?: string): Headers {
  const headers = new Headers(original.headers);
  headers.delete('content-length');
  headers.delete('content-encoding');
  headers.delete('transfer-encoding');
  if (contentType) headers.set('content-type', contentType);
  return headers;
}

async function boundJson(response: Response, init: RequestInit | undefined, limits: Limits): Promise<Response> {
  const body = response.body as ReadableStream<Uint8Array>;
  const encoding = response.headers.get('content-encoding');
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  // Behind a content-encoding the header counts compressed bytes, so it only bounds identity bodies.
  if ((!encoding || encoding === 'identity') && declared > limits.bytes) {
    await body.cancel().catch(noop);
    return refuseJson(response, init, 'large', limits);
  }
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limits.bytes) {
      await reader.cancel().catch(noop);
      return refuseJson(response, init, 'large', limits);
    }
    chunks.push(value);
  }
  const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  // Only text longer than 2 * maxDepth can be too deep (and bytes >= characters).
  if (total > 2 * limits.depth && exceedsDepth(decoder.decode(bytes), limits.depth)) return refuseJson(response, init, 'deep', limits);
  return rebuild(response, bytes, bodyHeaders(response));
}

function refuseJson(response: Response, init: RequestInit | undefined, why: Refusal, limits: Limits): Response {
  limits.onDrop(reason(why, 'JSON response', limits));
  const { ids, batch } = requestIds(init);
  if (ids.length === 0) return rebuild(response, null, bodyHeaders(response), 202);
  const errors = ids.map((id) => refusal(id, why, limits));
  const text = JSON.stringify(batch ? errors : errors[0]);
  return rebuild(response, text, bodyHeaders(response, 'application/json'), 200);
}

/** Passes a body through unchanged, erroring it once it exceeds the limit. */
function byteLimit(limits: Limits): TransformStream<Uint8Array, Uint8Array> {
  let total = 0;
  return new TransformStream({
    transform(chunk, controller) {
      total += chunk.byteLength;
      if (total > limits.bytes) {
        limits.onDrop(reason('large', 'response body', limits));
        controller.error(new Error(`Upstream response body exceeds maxResponseBytes (${limits.bytes})`));
        return;
      }
      controller.enqueue(chunk);
    },
  });
}
