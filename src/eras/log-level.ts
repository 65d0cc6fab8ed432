// The log level a caller wants, carried on its tool calls and prompt gets upstream: a 2026-07-28 upstream logs during a request only at the level its envelope names.
import { LOG_LEVEL_META_KEY, type BaseContext } from '@modelcontextprotocol/server';
import { MODERN, type Era } from './era.js';

/** What a 2025-11-25 caller's calls carry: every message (one frozen object; callers copy it into their params). */
const EVERY_MESSAGE: Readonly<Record<string, unknown>> = Object.freeze({ [LOG_LEVEL_META_KEY]: 'debug' });

/**
 * The reserved `_meta` a call made for this caller carries upstream, or undefined. A 2026-07-28
 * caller's own envelope level (none: it asked for no messages); a 2025-11-25 caller gets every
 * message of its call (`debug`), as a 2025-11-25 server logs until told otherwise. A 2025-11-25
 * upstream ignores the key.
 */
export function callerLogMeta(era: Era, ctx: Pick<BaseContext, 'mcpReq'>): Record<string, unknown> | undefined {
  if (era !== MODERN) return EVERY_MESSAGE;
  const level = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY];
  return typeof level === 'string' ? { [LOG_LEVEL_META_KEY]: level } : undefined;
}
