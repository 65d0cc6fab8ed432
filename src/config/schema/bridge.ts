// The `bridge` block: bounds on requests an upstream makes back to the user (elicitation, sampling, roots) across protocol eras. Pure.
import { z } from 'zod';
import { positiveInt } from './fields.js';

/**
 * Bounds on bridging an upstream's requests for user input to the client whose call caused them
 * (see docs/bridging.md). A 2025-11-25 upstream that asks a 2026-07-28 client for input keeps its
 * call open in the gateway (a held call) until the client retries with its answers.
 */
export const BridgeSchema = z.strictObject({
  /**
   * How long a held call waits for the client's retry, in milliseconds, and how long a sealed
   * `requestState` the gateway gave out stays valid. When it runs out the upstream call is cancelled
   * and its state freed; a later retry gets `-32602 Invalid or expired requestState`. Default: 120000.
   */
  heldCallTtlMs: positiveInt().default(120_000),
  /**
   * Most calls one principal may have held at once (across all its sessions). A call that would
   * exceed it is cancelled upstream and answered `-32603 Too many held calls`, `data: { limit }`.
   * Default: 8.
   */
  maxHeldCallsPerPrincipal: positiveInt().default(8),
  /**
   * Most rounds of input one call may ask for (a 2026-07-28 upstream asking a 2025-11-25 client, or a
   * held call asking again); past it the call fails. Default: 8.
   */
  maxRounds: positiveInt().default(8),
  /**
   * How long the gateway waits for a 2025-11-25 client to answer one relayed request (elicitation,
   * sampling, roots), in milliseconds: people answer elicitations, so this is long. Default: 600000.
   */
  askTimeoutMs: positiveInt().default(600_000),
});

/** The validated `bridge` block. */
export type BridgeConfig = z.output<typeof BridgeSchema>;
