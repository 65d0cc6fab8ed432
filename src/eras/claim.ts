// Whether a message claims MCP 2026-07-28 (its params carry the per-request `_meta` envelope's protocol version). Pure.
import { PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { Revisions } from '../protocol.js';
import { LEGACY, MODERN, type Era } from './era.js';

export type { Era } from './era.js';

/** The revision of the legacy era. */
export const LEGACY_REVISION = '2025-11-25';

/** The revision of the modern era (the SDK exports no constant for it). */
export const MODERN_REVISION = Revisions.modern;

/** The `_meta` key of the 2026-07-28 per-request envelope that names the revision (the SDK's constant). */
export const PROTOCOL_VERSION_META = PROTOCOL_VERSION_META_KEY;

/**
 * True when `params._meta` holds `io.modelcontextprotocol/protocolVersion` (SDK 2.x's envelope
 * claim): such a message belongs to the 2026-07-28 era, whose entry then validates the envelope.
 * Everything else (an `initialize`, a claim-less request or notification) is 2025-11-25 traffic.
 */
export function hasModernClaim(params: unknown): boolean {
  if (typeof params !== 'object' || params === null) return false;
  const meta = (params as { _meta?: unknown })._meta;
  return typeof meta === 'object' && meta !== null && PROTOCOL_VERSION_META in meta;
}

/**
 * The era a connection's first message opens (a stdio client, as SDK 2.x's `serveStdio` decides):
 * 2026-07-28 with the envelope claim (`server/discover`, any 2026 request), else 2025-11-25.
 */
export function eraOfFirstMessage(message: { params?: unknown }): Era {
  return hasModernClaim(message.params) ? MODERN : LEGACY;
}
