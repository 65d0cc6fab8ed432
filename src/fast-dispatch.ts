// Cheaper dispatch of incoming JSON-RPC messages for an SDK Protocol (Server or Client), with the SDK's own as fallback.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

/** The SDK 1.x Protocol methods this relies on (TypeScript-private, present at run time). */
interface ProtocolInternals {
  _onrequest(message: unknown, extra?: unknown): void;
  _onresponse(message: unknown): void;
  _onnotification(message: unknown): void;
}

const isId = (v: unknown): boolean => typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v));
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * SDK 1.x's Protocol classifies every incoming message by trying zod schemas in turn: a request is
 * first parsed as a result and as an error response, two failing parses that build issue objects
 * (about 4.5 us per request, 15% of a relayed read). This installs an `onmessage` that classifies
 * well-formed messages by shape and hands them to the same Protocol methods; anything unusual goes
 * to the SDK's own dispatcher unchanged, so validation and error reporting stay the SDK's. Request
 * params are still validated by each handler's schema.
 *
 * Call after `connect()`. Returns false (and changes nothing) when the Protocol lacks the methods,
 * e.g. after an SDK change; a test asserts it returns true for the pinned SDK.
 */
export function installFastDispatch(protocol: object, transport: Transport): boolean {
  const p = protocol as unknown as Partial<ProtocolInternals>;
  const sdkDispatch = transport.onmessage;
  if (typeof p._onrequest !== 'function' || typeof p._onresponse !== 'function' || typeof p._onnotification !== 'function' || !sdkDispatch) {
    return false;
  }
  const internals = p as ProtocolInternals;
  transport.onmessage = (message, extra) => {
    const m = message as unknown as Record<string, unknown>;
    if (m.jsonrpc === '2.0') {
      const hasId = 'id' in m;
      if (typeof m.method === 'string' && (m.params === undefined || isPlainObject(m.params))) {
        if (hasId && isId(m.id)) return internals._onrequest(message, extra);
        if (!hasId) return internals._onnotification(message);
      } else if (hasId && isId(m.id) && !('method' in m)) {
        if ('result' in m && !('error' in m) && isPlainObject(m.result)) return internals._onresponse(message);
      }
    }
    sdkDispatch.call(transport, message, extra as never);
  };
  return true;
}
