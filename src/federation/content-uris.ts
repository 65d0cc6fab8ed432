// URIs inside tool results and prompt messages (resource links, embedded resources), put in their server's namespace. Pure.

type Block = Record<string, unknown>;
const isObject = (v: unknown): v is Block => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `block` with its URI namespaced by `encode`: a `resource_link`'s `uri`, an embedded `resource`'s
 * `resource.uri`; any other block is returned as it is. Never changes `block` itself.
 *
 * @example namespacedBlock({ type: 'resource_link', uri: 'file:///a' }, (u) => `docs+${u}`) // { type: 'resource_link', uri: 'docs+file:///a' }
 */
export function namespacedBlock(block: unknown, encode: (uri: string) => string): unknown {
  if (!isObject(block)) return block;
  if (block.type === 'resource_link' && typeof block.uri === 'string') return { ...block, uri: encode(block.uri) };
  if (block.type === 'resource' && isObject(block.resource) && typeof block.resource.uri === 'string') {
    return { ...block, resource: { ...block.resource, uri: encode(block.resource.uri) } };
  }
  return block;
}

/** A list of content blocks (or one block), each namespaced ({@link namespacedBlock}). */
export function namespacedContent(content: unknown, encode: (uri: string) => string): unknown {
  return Array.isArray(content) ? content.map((b) => namespacedBlock(b, encode)) : namespacedBlock(content, encode);
}
