// Namespace codec: `<server-id>+<upstream-uri>` <-> { server, uri }. Pure.
export { deriveServerId, isServerId, SERVER_ID_PATTERN } from '../config/server-id.js';

/** The delimiter between server id and upstream URI. Legal in an RFC 3986 scheme, so the result stays a URI. */
export const NAMESPACE_DELIMITER = '+';

/** A URI (or URI template) split into the upstream that owns it and that upstream's own URI. */
export interface NamespacedUri {
  /** The configured server id. */
  server: string;
  /** The URI exactly as the upstream knows it. */
  uri: string;
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
