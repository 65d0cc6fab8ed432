// What the 2026-07-28 edge fast lane borrows from the SDK's Server: its wire codec (envelope check, result encoding, error codes), its input-required seam and its Protocol's entry, reached once per connection.
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  type ClientCapabilities,
  type Server,
} from '@modelcontextprotocol/server';
import { withFields } from '../copy.js';
import { MAX_ITEM_NAME, Revisions } from '../protocol.js';
import type { ClassifiedHandler, MessageKind } from '../wire/compose.js';
import { protocolEntry } from '../wire/dispatch.js';
import { isPlainObject, keyCount } from '../wire/envelope.js';
import { answersInput } from './input-bridge.js';
import { hasMethods } from './sdk-internals.js';

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
   * of exactly `uri` (a string) and `_meta`, the `_meta` exactly the envelope keys (this revision,
   * capabilities that are empty, and optionally a `clientInfo` of exactly a string `name` and
   * `version`), accepted by the SDK's own `checkInboundEnvelope`. Undefined for anything else.
   */
  plainRead(params: Record<string, unknown>): ClientCapabilities | undefined;
  /**
   * The same for a `tools/call`: params of exactly `name` (a string of at most {@link MAX_ITEM_NAME}
   * units), `_meta` (the same envelope as {@link ModernWire.plainRead}'s) and optionally `arguments`
   * (a plain object without an own `__proto__` key: the facade's params schema drops one, so the SDK
   * path's call would differ), which the facade would pass on, lifted of the envelope, as
   * `{ name, arguments }`.
   */
  plainCall(params: Record<string, unknown>): ClientCapabilities | undefined;
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
  /**
   * Whether a request pins a stdio connection to the modern instance when serveStdio's entry reaches
   * it: any method but `server/discover`, its params carrying a valid 2026-07-28 envelope claim (this
   * revision, accepted by the SDK's own `checkInboundEnvelope`), which the opening exchange classifies
   * as modern.
   */
  pins(method: string, params: unknown): boolean;
  /**
   * The Server's Protocol entry (`_onrequest`, `_onnotification`), once the Server is connected; else
   * undefined. On a connection serveStdio has pinned to this Server, a message its entry does not
   * serve itself ({@link servedAtEntry}) goes on to exactly this, with no `extra`: delivering it here
   * skips the entry's queue and its classifications, and changes nothing else.
   */
  connectedEntry(): ClassifiedHandler | undefined;
}

/**
 * Whether SDK v2's `serveStdio` entry serves `message` itself on a connection pinned to a modern
 * instance, rather than pass it on to the instance's Protocol: an `initialize` (it answers a 2025
 * handshake with its rejection), a `subscriptions/listen` (its listen router), a
 * `notifications/cancelled` (it may end a listen), and any response.
 */
export function servedAtEntry(message: object, kind: MessageKind): boolean {
  const { method } = message as { method?: unknown };
  if (kind === 'request') return method === 'initialize' || method === 'subscriptions/listen';
  if (kind === 'notification') return method === 'notifications/cancelled';
  return true;
}

/** How many accepted `clientInfo` pairs are remembered (a client sends one; the bound keeps a hostile one from growing it). */
const MEMO = 8;
/** The memo's key for an envelope without `clientInfo` (optional in the SDK's envelope schema); no name and version pair can spell it. */
const NO_CLIENT_INFO = '\u0001';

/**
 * The SDK's protocol steps of `server` (a 2026-07-28 instance), or undefined when they are not where
 * SDK 2.4 has them: the lane then stays closed and every request goes to the SDK.
 */
export function modernWire(server: Server): ModernWire | undefined {
  const internals: unknown = server;
  if (!hasMethods<ServerInternals>(internals, ['_wireCodec', '_outboundServerInfo', '_invokeInputRequiredCapableHandler'])) return undefined;
  const codec: unknown = internals._wireCodec(); // checked: an SDK change may have moved it
  if (!hasMethods<WireCodec>(codec, ['checkInboundEnvelope', 'encodeResult', 'encodeErrorCode']) || codec.era !== Revisions.modern) return undefined;
  const checked = codec;
  // The SDK's envelope check is a pure function of the envelope: for the one shape taken here it
  // depends only on the client's name and version, so an accepted pair is remembered.
  const accepted = new Set<string>();
  const plainRead = (params: Record<string, unknown>): ClientCapabilities | undefined =>
    typeof params.uri === 'string' && keyCount(params) === 2 ? plainEnvelope(params._meta) : undefined;
  const plainCall = (params: Record<string, unknown>): ClientCapabilities | undefined => {
    const { name, arguments: args } = params;
    if (typeof name !== 'string' || name.length > MAX_ITEM_NAME) return undefined;
    if (args === undefined ? keyCount(params) !== 2 : keyCount(params) !== 3 || !isPlainObject(args) || Object.hasOwn(args, '__proto__')) return undefined;
    return plainEnvelope(params._meta);
  };
  /** The capabilities of an envelope of exactly the three required keys, asking for nothing, that the SDK accepts. */
  const plainEnvelope = (meta: unknown): ClientCapabilities | undefined => {
    if (!isPlainObject(meta) || meta[PROTOCOL_VERSION_META_KEY] !== Revisions.modern) return undefined;
    const info = meta[CLIENT_INFO_META_KEY];
    const caps = meta[CLIENT_CAPABILITIES_META_KEY];
    if (keyCount(meta) !== (info === undefined ? 2 : 3)) return undefined;
    if (!isPlainObject(caps) || keyCount(caps) !== 0 || answersInput(caps)) return undefined;
    let key = NO_CLIENT_INFO;
    if (info !== undefined) {
      if (!isPlainObject(info)) return undefined;
      const { name, version } = info;
      if (typeof name !== 'string' || typeof version !== 'string' || keyCount(info) !== 2) return undefined;
      key = `${name}\u0000${version}`;
    }
    if (accepted.has(key)) return caps;
    if (checked.checkInboundEnvelope({ envelope: meta }) !== undefined) return undefined;
    if (accepted.size >= MEMO) accepted.clear();
    accepted.add(key);
    return caps;
  };
  let entry: ClassifiedHandler;
  try {
    entry = protocolEntry(server);
  } catch {
    return undefined; // the SDK moved its Protocol's entry points: no lane
  }
  const transportOf = server as unknown as { transport?: unknown };
  return {
    plainRead,
    plainCall,
    pins: (method, params) => {
      if (method === 'server/discover') return false;
      const meta = isPlainObject(params) ? params._meta : undefined;
      return isPlainObject(meta) && meta[PROTOCOL_VERSION_META_KEY] === Revisions.modern && checked.checkInboundEnvelope({ envelope: meta }) === undefined;
    },
    connectedEntry: () => (transportOf.transport === undefined ? undefined : entry),
    encode: (method, result) => {
      const serverInfo = internals._outboundServerInfo();
      return checked.encodeResult(method, preEncoded(method, result, serverInfo), serverInfo);
    },
    errorCode: (code) => checked.encodeErrorCode(code),
    seam: (method, outcome, envelope) =>
      internals._invokeInputRequiredCapableHandler.call(server, method, outcome, { method }, { mcpReq: { requestState: () => undefined, envelope } }),
  };
}

/** The `_meta` key the SDK's encodeResult stamps the server's identity under. */
const SERVER_INFO_META_KEY = 'io.modelcontextprotocol/serverInfo';

/** The methods whose results the SDK's encodeResult gives `ttlMs` / `cacheScope` (its `CACHEABLE_RESULT_METHODS`). */
const CACHEABLE_METHODS = new Set(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'resources/read', 'server/discover']);

/**
 * `result` with what the SDK's `encodeResult` appends already in place, in its order: `resultType:
 * 'complete'` where it has none (its `stampResultType`), then `serverInfo` in `_meta` (its
 * `stampServerInfoMeta`). encodeResult then leaves both as they are, and the answer is byte for byte
 * the same, made with `Object.assign` instead of the SDK's spreads that add a key (slow on Node 20).
 * Where its cache step would still append `ttlMs` / `cacheScope` (a cacheable method's result without
 * them), the result is left to the SDK as it is, so the order stays the SDK's.
 */
export function preEncoded(method: string, result: Record<string, unknown>, serverInfo: unknown): Record<string, unknown> {
  if (serverInfo === undefined) return result;
  if (CACHEABLE_METHODS.has(method) && !(Object.hasOwn(result, 'ttlMs') && Object.hasOwn(result, 'cacheScope'))) return result;
  const meta = result._meta;
  if (meta !== undefined && (!isPlainObject(meta) || meta[SERVER_INFO_META_KEY] !== undefined)) {
    return result.resultType === undefined ? withFields(result, { resultType: 'complete' }) : result;
  }
  const stamped = meta === undefined ? { [SERVER_INFO_META_KEY]: serverInfo } : withFields(meta, { [SERVER_INFO_META_KEY]: serverInfo });
  return result.resultType === undefined ? withFields(result, { resultType: 'complete', _meta: stamped }) : withFields(result, { _meta: stamped });
}

/** Whether `result` is an `input_required` answer (as the SDK tells it). */
export function isInputRequired(result: Record<string, unknown>): boolean {
  return result.resultType === 'input_required';
}
