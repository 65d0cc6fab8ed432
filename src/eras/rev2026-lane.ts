// What the 2026-07-28 edge fast lane borrows from the SDK's Server: its wire codec (envelope check, result encoding, error codes) and its input-required seam, reached once per connection.
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  type ClientCapabilities,
  type Server,
} from '@modelcontextprotocol/server';
import { Revisions } from '../protocol.js';
import { isPlainObject } from '../wire/envelope.js';
import { answersInput } from './input-bridge.js';

/** The SDK 2.x codec functions the lane calls (TypeScript-private, present at run time; pinned by a test). */
interface WireCodec {
  era: string;
  checkInboundEnvelope(material: { envelope?: Record<string, unknown> }): string | undefined;
  encodeResult(method: string, result: Record<string, unknown>, serverInfo: unknown): Record<string, unknown>;
  encodeErrorCode(code: number): number;
}

/** The SDK 2.x Server internals the lane calls (pinned by a test). */
interface ServerInternals {
  _wireCodec(): WireCodec;
  _outboundServerInfo(): unknown;
  _invokeInputRequiredCapableHandler(method: string, handler: () => unknown, request: unknown, ctx: unknown): Promise<Record<string, unknown>>;
}

/** The SDK's own protocol steps for one modern Server, as the lane uses them. */
export interface ModernWire {
  /**
   * The client capabilities of `params`' envelope when the request is one the lane may take: params
   * of exactly `uri` (a string) and `_meta`, the `_meta` exactly the three envelope keys (this
   * revision, a `clientInfo` of exactly a string `name` and `version`, capabilities that ask for no
   * input), accepted by the SDK's own `checkInboundEnvelope`. Undefined for anything else.
   */
  plainRead(params: Record<string, unknown>): ClientCapabilities | undefined;
  /** The result as the SDK's Protocol answers it (`encodeResult`: `resultType`, cache defaults, `serverInfo` in `_meta`). */
  encode(method: string, result: Record<string, unknown>): Record<string, unknown>;
  /** An error code as the SDK's Protocol answers it (`encodeErrorCode`). */
  errorCode(code: number): number;
  /**
   * An outcome passed through the Server's input-required seam, as the SDK's handler wrapper passes
   * the facade handler's: an `input_required` result is checked against the envelope's capabilities,
   * a thrown `-32042` becomes the era's internal error; anything else comes out as it went in.
   */
  seam(method: string, outcome: () => unknown, envelope: Record<string, unknown>): Promise<Record<string, unknown>>;
}

/** How many accepted `clientInfo` pairs are remembered (a client sends one; the bound keeps a hostile one from growing it). */
const MEMO = 8;

/**
 * The SDK's protocol steps of `server` (a 2026-07-28 instance), or undefined when they are not where
 * SDK 2.4 has them: the lane then stays closed and every request goes to the SDK.
 */
export function modernWire(server: Server): ModernWire | undefined {
  const s = server as unknown as Partial<ServerInternals>;
  if (typeof s._wireCodec !== 'function' || typeof s._outboundServerInfo !== 'function' || typeof s._invokeInputRequiredCapableHandler !== 'function') {
    return undefined;
  }
  const internals = s as ServerInternals;
  const codec = internals._wireCodec() as Partial<WireCodec> | undefined; // checked: an SDK change may have moved it
  if (
    codec?.era !== Revisions.modern ||
    typeof codec.checkInboundEnvelope !== 'function' ||
    typeof codec.encodeResult !== 'function' ||
    typeof codec.encodeErrorCode !== 'function'
  ) {
    return undefined;
  }
  const checked = codec as WireCodec;
  // The SDK's envelope check is a pure function of the envelope: for the one shape taken here it
  // depends only on the client's name and version, so an accepted pair is remembered.
  const accepted = new Set<string>();
  const plainRead = (params: Record<string, unknown>): ClientCapabilities | undefined => {
    if (typeof params.uri !== 'string' || keyCount(params) !== 2) return undefined;
    const meta = params._meta;
    if (!isPlainObject(meta) || keyCount(meta) !== 3 || meta[PROTOCOL_VERSION_META_KEY] !== Revisions.modern) return undefined;
    const info = meta[CLIENT_INFO_META_KEY];
    const caps = meta[CLIENT_CAPABILITIES_META_KEY];
    if (!isPlainObject(info) || !isPlainObject(caps) || keyCount(caps) !== 0 || answersInput(caps)) return undefined;
    const { name, version } = info;
    if (typeof name !== 'string' || typeof version !== 'string' || keyCount(info) !== 2) return undefined;
    const key = `${name}\u0000${version}`;
    if (accepted.has(key)) return caps;
    if (checked.checkInboundEnvelope({ envelope: meta }) !== undefined) return undefined;
    if (accepted.size >= MEMO) accepted.clear();
    accepted.add(key);
    return caps;
  };
  return {
    plainRead,
    encode: (method, result) => checked.encodeResult(method, result, internals._outboundServerInfo()),
    errorCode: (code) => checked.encodeErrorCode(code),
    seam: (method, outcome, envelope) =>
      internals._invokeInputRequiredCapableHandler.call(server, method, outcome, { method }, { mcpReq: { requestState: () => undefined, envelope } }),
  };
}

/** Whether `result` is an `input_required` answer (as the SDK tells it). */
export function isInputRequired(result: Record<string, unknown>): boolean {
  return result.resultType === 'input_required';
}

function keyCount(value: Record<string, unknown>): number {
  let n = 0;
  for (const _ in value) n++;
  return n;
}
