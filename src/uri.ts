// Namespace codec: `<server-id>+<upstream-uri>` <-> { server, uri }. Pure.

/** Server ids: lower-case letters, digits, `.` and `-`; `+` and `_` are reserved. */
export const SERVER_ID_PATTERN = /^[a-z0-9][a-z0-9.-]{0,62}$/;

/** The delimiter between server id and upstream URI. Legal in an RFC 3986 scheme, so the result stays a URI. */
export const NAMESPACE_DELIMITER = '+';

/** A URI (or URI template) split into the upstream that owns it and that upstream's own URI. */
export interface NamespacedUri {
  /** The configured server id. */
  server: string;
  /** The URI exactly as the upstream knows it. */
  uri: string;
}

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

/**
 * Wraps an upstream URI (or URI template) with its server id. Always wraps, even when the
 * upstream URI already looks namespaced: an upstream can never speak for another.
 *
 * @example encodeUri('docs', 'file:///a.md') // 'docs+file:///a.md'
 */
export function encodeUri(server: string, uri: string): string {
  return server + NAMESPACE_DELIMITER + uri;
}

/**
 * Splits a federated URI at the first `+`. Returns undefined unless the prefix is one of
 * `knownIds` and the upstream part is non-empty. Never percent-decodes (`%2B` is not a delimiter).
 *
 * @example decodeUri('git+ssh://h/r', ids) // { server: 'git', uri: 'ssh://h/r' } when 'git' is configured
 */
export function decodeUri(federated: string, knownIds: ReadonlySet<string>): NamespacedUri | undefined {
  const at = federated.indexOf(NAMESPACE_DELIMITER);
  if (at <= 0) return undefined;
  const server = federated.slice(0, at);
  const uri = federated.slice(at + 1);
  if (uri.length === 0 || !knownIds.has(server)) return undefined;
  return { server, uri };
}
