// The `tools` and `timeouts` blocks: client names of federated tools and prompts, and how long a tool call may run. Pure.
import { z } from 'zod';
import { positiveInt } from './fields.js';

/** Federated tools and prompts. */
export const ToolsSchema = z.strictObject({
  /**
   * Longest tool or prompt name given to clients. A namespaced name (`<id>__<name>`) that would be
   * longer becomes a readable short form (its head plus a hash); so does one whose upstream name
   * has characters outside `[A-Za-z0-9_-]`. Between 16 and 128. Default: 64.
   */
  maxNameLength: z.number().int().min(16).max(128).default(64),
});

/** How long tool calls and prompt gets may take. */
export const TimeoutsSchema = z
  .strictObject({
    /**
     * A `tools/call` or `prompts/get` without an answer (nor progress) for this many milliseconds
     * fails with `-32001`, and the upstream is told it is cancelled. Each progress notification
     * the upstream sends starts it again. Reads and lists keep their server's `timeoutMs`. Default: 120000.
     */
    callMs: positiveInt().default(120_000),
    /** Longest a call may take however much progress it reports, in milliseconds; at least `callMs`. Default: 600000. */
    callMaxMs: positiveInt().default(600_000),
  })
  .refine((t) => t.callMaxMs >= t.callMs, { path: ['callMaxMs'], message: 'must be at least callMs' });

/** The validated `tools` block. */
export type ToolsConfig = z.output<typeof ToolsSchema>;
/** The validated `timeouts` block. */
export type TimeoutsConfig = z.output<typeof TimeoutsSchema>;
