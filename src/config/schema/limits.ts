// The `limits` block: read, completion and call rate limits per principal. Pure.
import { z } from 'zod';
import { names, positiveInt } from './fields.js';

/** One rate limit: who it applies to, and how fast they may read. */
export const RateLimitSchema = z
  .strictObject({
    /** Principals this limit applies to. Default: any. */
    principals: names('principals').optional(),
    /** Roles this limit applies to; a caller with any one of them matches. Default: any. */
    roles: names('roles').optional(),
    /** Sustained reads per minute allowed to one principal (across all its sessions). Required. */
    readsPerMinute: positiveInt(),
    /** Reads one principal may make at once after being idle. Default: 10 seconds' worth of `readsPerMinute`, at least 1. */
    burst: positiveInt().optional(),
  })
  .transform((limit) => ({ ...limit, burst: limit.burst ?? Math.max(1, Math.ceil(limit.readsPerMinute / 6)) }));

/** A completion limit: who it applies to, and how fast they may ask for completions. */
export const CompletionLimitSchema = z
  .strictObject({
    /** Principals this limit applies to. Default: any. */
    principals: names('principals').optional(),
    /** Roles this limit applies to; a caller with any one of them matches. Default: any. */
    roles: names('roles').optional(),
    /** Sustained `completion/complete` requests per minute allowed to one principal (across all its sessions). Required. */
    completionsPerMinute: positiveInt(),
    /** Completions one principal may ask for at once after being idle. Default: 10 seconds' worth, at least 1. */
    burst: positiveInt().optional(),
  })
  .transform((limit) => ({ ...limit, burst: limit.burst ?? Math.max(1, Math.ceil(limit.completionsPerMinute / 6)) }));

/** A call limit: who it applies to, and how fast they may call tools and get prompts. */
export const CallLimitSchema = z
  .strictObject({
    /** Principals this limit applies to. Default: any. */
    principals: names('principals').optional(),
    /** Roles this limit applies to; a caller with any one of them matches. Default: any. */
    roles: names('roles').optional(),
    /** Sustained `tools/call` and `prompts/get` requests per minute allowed to one principal (across all its sessions). Required. */
    callsPerMinute: positiveInt(),
    /** Calls one principal may make at once after being idle. Default: 10 seconds' worth, at least 1. */
    burst: positiveInt().optional(),
  })
  .transform((limit) => ({ ...limit, burst: limit.burst ?? Math.max(1, Math.ceil(limit.callsPerMinute / 6)) }));

/**
 * Rate limits per principal. Written as a list, it is the read limits (`reads`). Reads caused by a
 * principal's polled subscriptions and listens count against its read limit too.
 */
const LimitsObjectSchema = z.strictObject({
  /** Read limits; the first entry that matches a caller applies, none: unlimited. Default: []. */
  reads: z.array(RateLimitSchema).default([]),
  /**
   * `completion/complete` limits, same shape with `completionsPerMinute`; the first entry that
   * matches applies, none: unlimited. Over it: `-32000 Rate limit exceeded`, `data.retryAfterMs`. Default: [].
   */
  completions: z.array(CompletionLimitSchema).default([]),
  /**
   * `tools/call` and `prompts/get` limits, same shape with `callsPerMinute`, a bucket of their own
   * beside reads; the first entry that matches applies, none: unlimited. Over it: `-32000 Rate
   * limit exceeded`, `data.retryAfterMs`. Default: [].
   */
  calls: z.array(CallLimitSchema).default([]),
});
const ReadLimitsSchema = z.array(RateLimitSchema);
/** The `limits` block: `{ reads, completions }`, or a list (the read limits alone). */
export const LimitsSchema = z.unknown().transform((value, ctx): z.output<typeof LimitsObjectSchema> => {
  const parsed = Array.isArray(value) ? ReadLimitsSchema.safeParse(value) : LimitsObjectSchema.safeParse(value);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) ctx.addIssue(issue as Parameters<typeof ctx.addIssue>[0]);
    return z.NEVER;
  }
  return Array.isArray(parsed.data) ? { reads: parsed.data, completions: [], calls: [] } : parsed.data;
});

/** One validated read limit (`limits.reads` entry), `burst` filled in. */
export type RateLimitConfig = z.output<typeof RateLimitSchema>;
/** One validated `limits.completions` entry, `burst` filled in. */
export type CompletionLimitConfig = z.output<typeof CompletionLimitSchema>;
/** One validated `limits.calls` entry, `burst` filled in. */
export type CallLimitConfig = z.output<typeof CallLimitSchema>;
/** The validated `limits` block. */
export type LimitsConfig = z.output<typeof LimitsSchema>;
