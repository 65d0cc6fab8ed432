// One audit record: its fields, its hash in the chain, and the single JSON line it is written as. Pure.
import * as crypto from 'node:crypto';
import { createHash, createHmac, type KeyObject } from 'node:crypto';
import type { Caller, CallerTransport } from '../caller.js';

/** The `prev` of the first record of a chain: 64 zeros. */
export const GENESIS_HASH = '0'.repeat(64);

/**
 * Longest string a record keeps, in UTF-16 code units. A longer value (a hostile URI, a huge JWT
 * claim) keeps its first 2048 units and its field's name is listed in the record's `truncated`.
 */
export const MAX_FIELD_CHARS = 2048;

/** Most roles a record lists; more are cut and `roles` is listed in `truncated`. */
export const MAX_ROLES = 64;

/** What policy decided. */
export type AuditDecision = 'allow' | 'deny';

/**
 * How the access ended: `ok`, `tool_error` (a tool answered `isError: true`), `not_found`, `denied`, `rate_limited`, `timeout`, `cancelled`, or
 * `error:<code>` with the error's stable code (`error:UPSTREAM_ERROR`). A relayed elicitation ends
 * as the user's answer: `accept`, `decline` or `cancel`.
 */
export type AuditOutcome =
  'ok' | 'tool_error' | 'not_found' | 'denied' | 'rate_limited' | 'timeout' | 'cancelled' | 'accept' | 'decline' | 'cancel' | `error:${string}`;

/** Whether the read cache answered: `hit`, `miss` (asked the upstream), or `bypass` (not cacheable). */
export type AuditCacheUse = 'hit' | 'miss' | 'bypass';

/**
 * What a request path reports about one access decision. There is deliberately no field for
 * contents, parameters or credentials: a record cannot carry them.
 */
export interface AuditEntry {
  /** Who asked; only `session`, `principal`, `roles` and `transport` are recorded. */
  readonly caller: Caller;
  /** The JSON-RPC method (`resources/read`, `resources/list`, ...). */
  readonly method: string;
  /** The namespaced URI the client named (`docs+file:///a.md`); omitted for lists. */
  readonly uri?: string;
  /** The server id the URI routes to, when it routes to one. */
  readonly server?: string;
  /** The URI as the upstream knows it (`file:///a.md`). */
  readonly upstreamUri?: string;
  readonly decision: AuditDecision;
  /** The id of the rule that decided, or `default`. */
  readonly rule: string;
  readonly outcome: AuditOutcome;
  /** Whether the read cache answered; omitted where no cache is involved. */
  readonly cache?: AuditCacheUse;
  /** Bytes of the answer's contents (counted, never recorded). */
  readonly bytes?: number;
  /** Time from the request to its answer, in milliseconds (kept to the microsecond). */
  readonly durationMs: number;
  /** Lists: items returned to the client. */
  readonly returned?: number;
  /** Lists: items policy removed. */
  readonly filtered?: number;
  /** Tools and prompts: the name the client sent (`github__create_issue`). */
  readonly name?: string;
  /** Tools and prompts: hex SHA-256 of the canonical JSON (RFC 8785) of the arguments. */
  readonly argumentsSha256?: string;
  /** Tools and prompts, only with `audit.arguments: true`: the canonical JSON of the arguments. */
  readonly arguments?: string;
}

/**
 * One line of the audit log, as `JSON.parse` reads it back. Optional fields are absent when they do
 * not apply. `hash = hex(sha256(prev + JCS(record without hash)))` (see {@link chainHash}).
 */
export interface AuditRecord {
  /** When the record was written: ISO 8601, UTC, milliseconds (`2026-05-01T12:00:00.000Z`). */
  time: string;
  /** Position in the chain: 1 for its first record, then +1 per record, across restarts and rotations. */
  seq: number;
  session: string;
  principal: string;
  roles: string[];
  transport: CallerTransport;
  method: string;
  uri?: string;
  server?: string;
  upstreamUri?: string;
  decision: AuditDecision;
  rule: string;
  outcome: AuditOutcome;
  cache?: AuditCacheUse;
  bytes?: number;
  durationMs: number;
  returned?: number;
  filtered?: number;
  name?: string;
  argumentsSha256?: string;
  arguments?: string;
  /** Names of the fields cut to {@link MAX_FIELD_CHARS} (or {@link MAX_ROLES}); absent when none was. */
  truncated?: string[];
  /** Scaled out (`redis.chain`): the replica whose chain this record is in; absent on a single gateway. */
  chain?: string;
  /** The previous record's `hash` ({@link GENESIS_HASH} for the first record of a chain). */
  prev: string;
  /** This record's hash: hex SHA-256 of `prev` followed by the JCS form of the record without `hash` (and `mac`). */
  hash: string;
  /**
   * With `audit.keyEnv`: hex HMAC-SHA256, under that key, of the previous record's `mac` (64 zeros
   * for the first keyed record) followed by the same JCS form `hash` is over (see {@link chainMac}).
   * Absent on a log written without a key.
   */
  mac?: string;
}

/** The chain's link: hex SHA-256 of `prev` followed by `body` (the JCS form of a record without `hash`). */
export function chainHash(prev: string, body: string): string {
  return sha256Hex(prev + body); // one input is cheaper than two
}

/**
 * Hex SHA-256 of a string's UTF-8 bytes: Node's one-shot `crypto.hash` where it exists (20.12 and
 * later; half the CPU of a `Hash` object for a record-sized input), else `createHash`. Same bytes either way.
 */
export const sha256Hex: (data: string) => string =
  typeof crypto.hash === 'function' ? (data) => crypto.hash('sha256', data, 'hex') : (data) => createHash('sha256').update(data).digest('hex');

/**
 * The keyed chain's link: hex HMAC-SHA256 under `key` of `prevMac` followed by `body` (the same JCS
 * form {@link chainHash} is over). `body` holds `prev`, so each MAC also binds the plain chain.
 */
export function chainMac(key: KeyObject, prevMac: string, body: string): string {
  return createHmac('sha256', key)
    .update(prevMac + body)
    .digest('hex');
}

/**
 * The one line (without its newline) a record is written as, from `body`, the JCS form of the
 * record without `hash` and `mac`: `body` with {@link escapeLineBreakers} applied, and `"hash"`, then
 * `"mac"` when there is one, appended last. `audit verify` rebuilds this from the parsed record and
 * requires the line's bytes to be exactly it, so the bytes hashed are the bytes read.
 */
export function recordLine(body: string, hash: string, mac?: string): string {
  const tail = mac === undefined ? `,"hash":"${hash}"}` : `,"hash":"${hash}","mac":"${mac}"}`;
  return `${escapeLineBreakers(body.slice(0, -1))}${tail}`;
}

/** A written record: its fields, and the line (with its trailing newline) that holds them. */
export interface SealedRecord {
  readonly record: AuditRecord;
  readonly line: string;
}

/**
 * Builds the record for `entry` at position `seq` after `prev`, and its line ({@link recordLine}).
 * The line is the record's JCS form (RFC 8785, see `jcs.ts`) with `"hash"` (and, with `keyed`,
 * `"mac"` chained from `keyed.prevMac`) appended last, so the bytes before `,"hash"` are the hashed
 * ones, except for the characters {@link escapeLineBreakers} writes escaped. Serialises once.
 *
 * @example sealRecord(entry, { seq: 1, prev: GENESIS_HASH, time: Date.now() }).line
 */
export function sealRecord(
  entry: AuditEntry,
  at: { seq: number; prev: string; time: number; keyed?: { key: KeyObject; prevMac: string }; chain?: string | undefined },
): SealedRecord {
  let truncated: Set<string> | undefined; // allocated only when a field is cut
  const clip = (name: string, value: string): string => {
    if (value.length <= MAX_FIELD_CHARS) return value;
    (truncated ??= new Set()).add(name);
    // Never split a surrogate pair.
    const end = isHighSurrogate(value.charCodeAt(MAX_FIELD_CHARS - 1)) ? MAX_FIELD_CHARS - 1 : MAX_FIELD_CHARS;
    return value.slice(0, end);
  };
  const { caller } = entry;
  const roles = caller.roles.length <= MAX_ROLES && caller.roles.every((r) => r.length <= MAX_FIELD_CHARS) ? [...caller.roles] : clipRoles(caller.roles, clip);
  if (caller.roles.length > MAX_ROLES) (truncated ??= new Set()).add('roles');
  // Keys in RFC 8785 order (sorted by UTF-16 code units) and values that are only strings, finite
  // numbers and arrays of strings: JSON.stringify of this object is its JCS form, at a third of the
  // cost of the general canonicalize() (the unit tests hold the two equal). Keep new keys in order.
  const record: Omit<AuditRecord, 'hash'> & { hash?: string; mac?: string } = {
    arguments: entry.arguments === undefined ? undefined : clip('arguments', entry.arguments),
    argumentsSha256: entry.argumentsSha256,
    bytes: count(entry.bytes),
    cache: entry.cache,
    chain: at.chain,
    decision: entry.decision,
    durationMs: Number.isFinite(entry.durationMs) ? Math.round(entry.durationMs * 1000) / 1000 : 0,
    filtered: count(entry.filtered),
    hash: undefined, // set below: left out of the JSON hashed; here so every record has one shape
    mac: undefined,
    method: clip('method', entry.method),
    name: entry.name === undefined ? undefined : clip('name', entry.name),
    outcome: clip('outcome', entry.outcome) as AuditOutcome,
    prev: at.prev,
    principal: clip('principal', caller.principal),
    returned: count(entry.returned),
    roles,
    rule: clip('rule', entry.rule),
    seq: at.seq,
    server: entry.server === undefined ? undefined : clip('server', entry.server),
    session: clip('session', caller.session),
    time: isoTime(at.time),
    transport: caller.transport,
    truncated: undefined,
    upstreamUri: entry.upstreamUri === undefined ? undefined : clip('upstreamUri', entry.upstreamUri),
    uri: entry.uri === undefined ? undefined : clip('uri', entry.uri),
  };
  if (truncated) record.truncated = [...truncated].sort();
  const body = JSON.stringify(record);
  const hash = chainHash(at.prev, body);
  record.hash = hash;
  let mac: string | undefined;
  if (at.keyed) record.mac = mac = chainMac(at.keyed.key, at.keyed.prevMac, body);
  return { record: record as AuditRecord, line: `${recordLine(body, hash, mac)}\n` };
}

/**
 * Characters written as `\uXXXX` escapes although JSON allows them raw: DEL and the C1 controls
 * (U+007F–U+009F, U+0085 is a line break to some readers), LINE and PARAGRAPH SEPARATOR
 * (U+2028/U+2029), and the bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069)
 * that can make a line display as another. `JSON.stringify` already escapes U+0000–U+001F.
 */
const LINE_BREAKERS = /[\u007f-\u009f\u2028-\u202e\u2066-\u2069]/;
const LINE_BREAKERS_ALL = new RegExp(LINE_BREAKERS.source, 'g');

/**
 * Escapes {@link LINE_BREAKERS} in serialised JSON (they can only occur inside strings), so a hostile
 * value can neither split nor disguise a line. `JSON.parse` reads the escapes back to the same string.
 */
export function escapeLineBreakers(json: string): string {
  if (!LINE_BREAKERS.test(json)) return json;
  return json.replace(LINE_BREAKERS_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

let lastTime = Number.NaN;
let lastIso = '';
/** `new Date(ms).toISOString()`, remembered for the last millisecond: busy logs write many records in one. */
function isoTime(ms: number): string {
  if (ms !== lastTime) {
    lastIso = new Date(ms).toISOString();
    lastTime = ms;
  }
  return lastIso;
}

function clipRoles(roles: readonly string[], clip: (name: string, value: string) => string): string[] {
  return roles.slice(0, MAX_ROLES).map((r) => clip('roles', r));
}

function count(n: number | undefined): number | undefined {
  return n !== undefined && Number.isFinite(n) ? n : undefined;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
