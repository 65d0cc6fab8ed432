// Server ids (URI namespaces): the pattern, the check, and the derivation from a config key. Pure.

/** Server ids: lower-case letters, digits, `.` and `-`; `+` and `_` are reserved. */
export const SERVER_ID_PATTERN = /^[a-z0-9][a-z0-9.-]{0,62}$/;

/** True when `id` is a valid server id. */
export function isServerId(id: string): boolean {
  return SERVER_ID_PATTERN.test(id);
}

/**
 * The server id (URI namespace) a config key stands for: lower-cased, `_` turned into `-`, nothing
 * else changed, so keys as clients write them (`Memory`, `brave_search`) work. The result may still
 * be invalid (`My Server` gives `my server`): check it with {@link isServerId}.
 *
 * @example deriveServerId('Brave_Search') // 'brave-search'
 */
export function deriveServerId(key: string): string {
  return key.toLowerCase().replaceAll('_', '-');
}
