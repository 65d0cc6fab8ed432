// What the upstream fast path borrows from the SDK's Client on a 2026-07-28 connection: its per-request `_meta` envelope, its wire codec's decoding and its input-required seam, reached once per connection.
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  SdkError,
  SdkErrorCode,
  type Client,
  type JSONRPCMessage,
} from '@modelcontextprotocol/client';
import type { z } from 'zod';
import { withFields } from '../copy.js';
import { Revisions } from '../protocol.js';
import { hasMethods } from './sdk-internals.js';

/** A raw result as the SDK's 2026 codec decodes it (`decodeResult`). */
interface Decoded {
  kind: string;
  result?: unknown;
  error?: Error;
}

/** One notification's validation by the codec (`validateNotification`). */
type Validated = { ok: true; value: { params?: Record<string, unknown> } } | { ok: false };

/** The SDK 2.x codec functions the fast path calls (TypeScript-private, present at run time; pinned by a test). */
interface ClientCodec {
  era: string;
  hasRequestMethod(method: string): boolean;
  decodeResult(method: string, raw: unknown): Decoded;
  validateNotification(method: string, raw: unknown): Validated;
}

/** The SDK 2.x Client internals the fast path calls (pinned by a test). */
interface ClientInternals {
  _wireCodec(): ClientCodec;
  _outboundMetaEnvelope(): Record<string, unknown> | undefined;
  _resolveNonCompleteResult(decoded: Decoded, flow: unknown): Promise<unknown>;
  _requestWithSchemaViaCodec(codec: ClientCodec, request: unknown, schema: unknown, options: unknown): Promise<unknown>;
}

/**
 * The request options the SDK Client's funnel would have held for a fast-path request (what
 * `Upstream.exchange` hands `client.request`): its input-required seam reads them.
 */
export interface SdkRequestOptions {
  timeout: number;
  signal?: AbortSignal;
  maxTotalTimeout?: number;
  resetTimeoutOnProgress?: boolean;
  onprogress?: (progress: Record<string, unknown>) => void;
}

/** What a fast-path request was, for its answer's decoding. */
export interface SentRequest {
  method: string;
  /** The params handed to the Client (tracing included; no envelope, no progress token). */
  params: Record<string, unknown> | undefined;
  /** Date.now() when it was sent (the SDK's `flowStartedAt`). */
  sentAt: number;
  /** The Client's `allowInputRequired`: an `input_required` answer is handed back as it is (its manual mode). */
  allowInputRequired: boolean;
}

/** The SDK Client's protocol steps on one 2026-07-28 connection, as the upstream fast path uses them. */
export interface ModernUpstreamWire {
  /**
   * Whether the Client cancels a request by aborting its own stream (the transport has one per
   * request, as both HTTP clients do) rather than by `notifications/cancelled` (stdio).
   */
  readonly perRequestStream: boolean;
  /** Whether `method` is one of this era's: any other the Client refuses itself, so it is left to it. */
  sends(method: string): boolean;
  /**
   * The request as the Client writes it: `{ method, params, jsonrpc, id }`, the envelope first in
   * `params._meta` (the caller's own keys win), then, for a long call, `progressToken: id`.
   */
  request(id: number, method: string, params: Record<string, unknown> | undefined, progress: boolean): JSONRPCMessage;
  /** The cancellation the Client writes for request `id` (enveloped too). */
  cancelled(id: number, reason: string): JSONRPCMessage;
  /**
   * The answer `raw` to `sent` as the Client hands it to its caller: a `complete` result lifted of
   * `resultType` and checked against `schema` (or the SDK's error: InvalidResult, UnsupportedResultType);
   * an `input_required` one as the Client's manual mode gives it (`allowInputRequired`), else through
   * the Client's own seam (its auto-fulfilment, or its error), with `optionsOf(sent)` as the request's options. Throws what the Client would reject with; may return a promise.
   */
  decode<S extends SentRequest>(sent: S, raw: unknown, schema: z.ZodType, optionsOf: (sent: S) => SdkRequestOptions): unknown;
  /** A progress notification's params as the Client hands them to `onprogress` (no token), or undefined when the Client drops it. */
  progress(params: Record<string, unknown>): Record<string, unknown> | undefined;
}

/** The reserved `_meta` keys the Client lifts off an inbound message before it validates it. */
// eslint-disable-next-line @typescript-eslint/no-deprecated -- the SDK still lifts the log level with the others
const ENVELOPE_KEYS = [PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY, LOG_LEVEL_META_KEY];
const PROGRESS = 'notifications/progress';
const CANCELLED = 'notifications/cancelled';

/**
 * The SDK's protocol steps of `client` once it negotiated 2026-07-28, or undefined when it did not
 * or they are not where SDK 2.4 has them: every request then goes through the Client.
 */
export function modernUpstreamWire(client: Client): ModernUpstreamWire | undefined {
  if (client.getNegotiatedProtocolVersion() !== Revisions.modern) return undefined;
  const internals: unknown = client;
  if (!hasMethods<ClientInternals>(internals, ['_wireCodec', '_outboundMetaEnvelope', '_resolveNonCompleteResult', '_requestWithSchemaViaCodec']))
    return undefined;
  const codec: unknown = internals._wireCodec(); // checked: an SDK change may have moved it
  if (!hasMethods<ClientCodec>(codec, ['hasRequestMethod', 'decodeResult', 'validateNotification']) || codec.era !== Revisions.modern) return undefined;
  const checked = codec;
  // The envelope is the connection's (its version, our client info and capabilities): the Client builds the same one per message.
  const envelope = internals._outboundMetaEnvelope();
  if (envelope === undefined) return undefined;
  const perRequestStream = (client.transport as { hasPerRequestStream?: unknown } | undefined)?.hasPerRequestStream === true;
  const known = new Map<string, boolean>();
  return {
    perRequestStream,
    sends(method) {
      let ok = known.get(method);
      if (ok === undefined) known.set(method, (ok = checked.hasRequestMethod(method)));
      return ok;
    },
    request(id, method, params, progress) {
      const p = params ?? {};
      const meta = mergedMeta(envelope, p._meta);
      if (progress) meta.progressToken = id;
      return { method, params: withFields(p, { _meta: meta }), jsonrpc: '2.0', id };
    },
    cancelled(id, reason) {
      return { jsonrpc: '2.0', method: CANCELLED, params: { requestId: id, reason, _meta: { ...envelope } } };
    },
    decode(sent, raw, schema, optionsOf) {
      let decoded: Decoded;
      try {
        decoded = checked.decodeResult(sent.method, raw);
      } catch (err) {
        throw err instanceof Error ? err : new Error(String(err));
      }
      if (decoded.kind === 'invalid') throw decoded.error!; // the codec sets it on every invalid decode
      if (decoded.kind === 'input_required') {
        if (sent.allowInputRequired) return manualInputRequired(decoded);
        const { method, params } = sent;
        const request = { method, params };
        const flowOptions = optionsOf(sent);
        const flow = {
          codec: checked,
          request,
          resultSchema: schema,
          options: flowOptions,
          flowStartedAt: sent.sentAt,
          retry: (next: unknown, legOptions: unknown) =>
            internals._requestWithSchemaViaCodec.call(client, checked, next === undefined ? { method } : { method, params: next }, schema, legOptions),
        };
        return internals._resolveNonCompleteResult.call(client, decoded, flow);
      }
      return validated(sent.method, decoded.result, schema);
    },
    progress(params) {
      const outcome = checked.validateNotification(PROGRESS, { jsonrpc: '2.0', method: PROGRESS, params: liftedEnvelope(params) });
      if (!outcome.ok) return undefined;
      const { progressToken: _token, ...rest } = outcome.value.params ?? {};
      return rest;
    },
  };
}

/** An `input_required` answer as the Client's manual mode hands it back (the SDK's `manualInputRequiredValue`). */
function manualInputRequired(decoded: Decoded): Record<string, unknown> {
  const { inputRequests, requestState, _meta } = decoded as Decoded & { inputRequests?: unknown; requestState?: unknown; _meta?: unknown };
  return {
    resultType: 'input_required',
    inputRequests,
    ...(requestState !== undefined && { requestState }),
    ...(_meta !== undefined && { _meta }),
  };
}

/** `{ ...envelope, ...meta }` as the Client merges them (the caller's keys win), made the fast way where that is safe. */
function mergedMeta(envelope: Record<string, unknown>, meta: unknown): Record<string, unknown> {
  if (typeof meta === 'object' && meta !== null && Object.hasOwn(meta, '__proto__')) return { ...envelope, ...meta };
  const merged: Record<string, unknown> = Object.assign({}, envelope, meta);
  return merged;
}

/** `params` without the reserved envelope keys in its `_meta` (dropped when nothing else is left), as the Client lifts them. */
function liftedEnvelope(params: Record<string, unknown>): Record<string, unknown> {
  const meta = params._meta;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta) || !ENVELOPE_KEYS.some((key) => key in meta)) return params;
  const rest: Record<string, unknown> = { ...(meta as Record<string, unknown>) };
  for (const key of ENVELOPE_KEYS) delete rest[key];
  const lifted = { ...params };
  if (Object.keys(rest).length > 0) lifted._meta = rest;
  else delete lifted._meta;
  return lifted;
}

/** A Standard Schema issue as the SDK's `validateStandardSchema` prints it. */
function formatIssue(issue: { message: string; path?: readonly (PropertyKey | { key: PropertyKey })[] | undefined }): string {
  if (!issue.path?.length) return issue.message;
  return `${issue.path.map((p) => String(typeof p === 'object' ? p.key : p)).join('.')}: ${issue.message}`;
}

/** `result` checked against `schema` as the Client's funnel checks it: its value, or the SDK's InvalidResult error. */
function validated(method: string, result: unknown, schema: z.ZodType): unknown {
  const outcome = schema['~standard'].validate(result);
  const settle = (o: Awaited<typeof outcome>): unknown => {
    if (o.issues && o.issues.length > 0)
      throw new SdkError(SdkErrorCode.InvalidResult, `Invalid result for ${method}: ${o.issues.map(formatIssue).join(', ')}`);
    return (o as { value: unknown }).value;
  };
  return outcome instanceof Promise ? outcome.then(settle) : settle(outcome);
}
