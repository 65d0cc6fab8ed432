// The keyed audit chain's key, read from the environment variable the config or the command line names.
import { createSecretKey, type KeyObject } from 'node:crypto';
import { ErrorCodes, ProxyError } from '../errors.js';

/** Fewest bytes an audit key may have (32 random bytes are recommended: `openssl rand -hex 32`). */
export const MIN_AUDIT_KEY_BYTES = 16;

/**
 * The key held by the environment variable `name` (its UTF-8 bytes, as they are). Throws
 * `ProxyError(CONFIG_INVALID)` naming `where` and the variable when it is unset, empty, or shorter
 * than {@link MIN_AUDIT_KEY_BYTES}; the message never holds the value.
 *
 * @example auditKeyFromEnv('MCP_AUDIT_KEY', process.env, 'audit.keyEnv')
 */
export function auditKeyFromEnv(name: string, env: NodeJS.ProcessEnv, where: string): KeyObject {
  const value = env[name];
  if (value === undefined || value === '') {
    throw new ProxyError(ErrorCodes.CONFIG_INVALID, `${where}: environment variable ${name} is not set (it must hold the audit key)`);
  }
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length < MIN_AUDIT_KEY_BYTES) {
    throw new ProxyError(
      ErrorCodes.CONFIG_INVALID,
      `${where}: environment variable ${name} holds ${bytes.length} bytes; an audit key needs at least ${MIN_AUDIT_KEY_BYTES} (use \`openssl rand -hex 32\`)`,
    );
  }
  return createSecretKey(bytes);
}
