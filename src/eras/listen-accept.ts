// The core of a 2026-07-28 listen, shared by stdio and HTTP: each requested URI accepted (decided and held) in turn, the held ones kept once each. Pure apart from `accept`.

/**
 * Accepts each of `uris` (each once, in order) through `accept`, which decides and holds one URI
 * and returns it as held (its canonical federated form), or undefined when it is refused or
 * unknown; a rejection counts as a refusal. Stops early when `wanted()` turns false (the listen
 * went away). Returns the held URIs, each once, in request order: the listen's narrowed filter.
 *
 * @example await acceptEach(['docs+file:///a', 'docs+FILE:///a'], accept) // ['docs+file:///a']
 */
export async function acceptEach(
  uris: Iterable<string>,
  accept: (uri: string) => Promise<string | undefined>,
  wanted: () => boolean = () => true,
): Promise<string[]> {
  const held = new Set<string>();
  for (const uri of new Set(uris)) {
    if (!wanted()) break;
    const one = await accept(uri).catch(() => undefined); // decided again for every listen
    if (one !== undefined) held.add(one);
  }
  return [...held];
}
