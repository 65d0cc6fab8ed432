// The fetch a remote JWKS is read with: its body bounded in bytes, so a hostile or broken key server cannot fill memory.

/** Default bound on a JWKS response body: 1 MiB (real key sets are a few KiB). */
export const DEFAULT_MAX_JWKS_BYTES = 1024 * 1024;

/** The fetch shape jose's `customFetch` takes. */
export type JwksFetch = (url: string, init: RequestInit) => Promise<Response>;

/** A JWKS response larger than the bound: refused, and the rest of the body is not read. */
export class JwksTooLarge extends Error {
  override readonly name = 'JwksTooLarge';
}

/**
 * Wraps `base` so that a body over `maxBytes` is refused: on its `Content-Length` before reading,
 * else as soon as the bytes read pass it (the stream is cancelled, nothing more is buffered). Only a
 * `200` body is read (jose refuses any other status). The time bound is jose's `timeoutDuration`,
 * whose signal also ends a slow body here.
 *
 * @example createRemoteJWKSet(url, { [customFetch]: boundedJwksFetch(1 << 20) })
 */
export function boundedJwksFetch(maxBytes: number = DEFAULT_MAX_JWKS_BYTES, base: JwksFetch = fetch): JwksFetch {
  return async (url, init) => {
    const response = await base(url, init);
    if (response.status !== 200 || !response.body) return response;
    const declared = Number(response.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > maxBytes) {
      await response.body.cancel().catch(() => undefined);
      throw new JwksTooLarge(`JWKS response of ${declared} bytes exceeds ${maxBytes}`);
    }
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw new JwksTooLarge(`JWKS response exceeds ${maxBytes} bytes`);
      }
      chunks.push(value);
    }
    return new Response(Buffer.concat(chunks), { status: response.status, headers: response.headers });
  };
}
