// Which protocol era one HTTP request belongs to, decided from its method, headers and parsed body. Pure.
import { Revisions } from '../protocol.js';
import { hasModernClaim } from './claim.js';

/**
 * True for MCP 2026-07-28 traffic: a POST whose JSON-RPC message carries the per-request envelope
 * claim (`params._meta["io.modelcontextprotocol/protocolVersion"]`), or whose `MCP-Protocol-Version`
 * header names 2026-07-28 or later (the modern path then owns the error for a missing envelope).
 * Everything else (GET and DELETE session operations, `initialize`, claim-less POSTs, batches,
 * bodies that are not JSON) is 2025-11-25 traffic. The same rule as SDK v2's `isLegacyRequest`,
 * without building a web `Request`.
 */
export function isModernRequest(method: string | undefined, protocolHeader: string | undefined, body: unknown): boolean {
  if (method !== 'POST') return false;
  if (typeof protocolHeader === 'string' && protocolHeader >= Revisions.modern) return true;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  return hasModernClaim((body as { params?: unknown }).params);
}
