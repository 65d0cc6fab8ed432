// Namespace codec: `<server-id>+<upstream-uri>` <-> { server, uri }, with at most one unprefixed server. Pure.
export { deriveServerId, isServerId, SERVER_ID_PATTERN } from '../uri/server-id.js';

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
 * upstream URI already looks namespaced: an upstream can never speak for another. This is the
 * prefixed form every server has internally (cache and relay keys); what clients see comes from a
 * {@link UriCodec}, which leaves an unprefixed server's URIs as they are.
 *
 * @example encodeUri('docs', 'file:///a.md') // 'docs+file:///a.md'
 */
export function encodeUri(server: string, uri: string): string {
  return server + NAMESPACE_DELIMITER + uri;
}

/**
 * Splits a federated URI at the first `+`. Returns undefined unless the prefix is one of
 * `knownIds` and the upstream part is non-empty. Never percent-decodes (`%2B` is not a delimiter).
 * Knows nothing of an unprefixed server: clients' URIs are decoded with a {@link UriCodec}.
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

/**
 * The URIs clients see for one set of servers, both ways. Every path that shows a client a URI
 * (list items, templates, `contents[].uri`, `updated` notifications) encodes with it, and every
 * path that takes one (read, subscribe, unsubscribe, completion) decodes with it.
 */
export interface UriCodec {
  /** The servers whose URIs it routes. */
  readonly ids: ReadonlySet<string>;
  /** The one server whose URIs are served unchanged (`prefix: false`), if any. */
  readonly unprefixed: string | undefined;
  /** `<server>+<uri>`, or `uri` itself for the unprefixed server. */
  encode(server: string, uri: string): string;
  /**
   * `<id>+<rest>` with `id` a prefixed server and `rest` non-empty routes to `id`; anything else
   * routes, unchanged, to the unprefixed server, or is undefined (not found) when there is none.
   */
  decode(federated: string): NamespacedUri | undefined;
}

/**
 * A codec for `ids`, serving `unprefixed` (one of them) without a namespace.
 *
 * The unprefixed server has no namespace, so its own id followed by `+` is not one: its URI
 * `self+x` is served as `self+x` and routes back to it. The one ambiguity is a URI of the
 * unprefixed server that starts with `<other-id>+`, where `other-id` is a prefixed server: it
 * is listed as it is, but a client that reads it reaches `other-id` (a prefixed server always
 * wins), so the unprefixed server can never speak for another.
 *
 * @example
 * const uris = createUriCodec(['docs', 'everything'], 'everything');
 * uris.encode('everything', 'test://a') // 'test://a'
 * uris.decode('test://a')               // { server: 'everything', uri: 'test://a' }
 * uris.decode('docs+file:///a.md')      // { server: 'docs', uri: 'file:///a.md' }
 */
export function createUriCodec(ids: Iterable<string>, unprefixed?: string): UriCodec {
  const all = new Set(ids);
  if (unprefixed !== undefined && !all.has(unprefixed)) throw new Error(`unprefixed server "${unprefixed}" is not one of the ids`);
  const prefixed = new Set(all);
  if (unprefixed !== undefined) prefixed.delete(unprefixed);
  return {
    ids: all,
    unprefixed,
    encode: (server, uri) => (server === unprefixed ? uri : encodeUri(server, uri)),
    decode(federated) {
      const target = decodeUri(federated, prefixed);
      if (target !== undefined || unprefixed === undefined || federated.length === 0) return target;
      return { server: unprefixed, uri: federated };
    },
  };
}
