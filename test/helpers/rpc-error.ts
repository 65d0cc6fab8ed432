// The JSON-RPC error a client request rejected with, for SDK v1 and v2 clients alike.

/** The JSON-RPC error a client request rejected with (throws when it resolved). */
export async function rpcError(p: Promise<unknown>): Promise<{ code: number; message: string; data?: unknown }> {
  try {
    await p;
  } catch (err) {
    const e = err as { code: number; message: string; data?: unknown };
    return { code: e.code, message: e.message, data: e.data };
  }
  throw new Error('expected the request to fail');
}
