// JSON text made once for a value many answers share (a cached read's contents), spliced into each answer that carries it. Pure leaf.

/** Where a shared value keeps its JSON text: a symbol, so `JSON.stringify` and copies never see it. */
const SHARED_JSON: unique symbol = Symbol('mcp-federate.sharedJson');

interface Shared {
  [SHARED_JSON]?: { text?: string };
}

/**
 * Marks `value` as shared: the first answer that carries it as `result.contents` writes its JSON
 * text, and later answers splice that text in. Freeze `value` (and what it holds) right after:
 * the text is only right while nothing changes it.
 *
 * @example shareJson(body.contents); Object.freeze(body.contents)
 */
export function shareJson(value: object): void {
  if (!Object.hasOwn(value, SHARED_JSON)) Object.defineProperty(value, SHARED_JSON, { value: {} });
}

/** The JSON text of a shared value (written on first use); undefined for any other. */
function sharedText(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const box = (value as Shared)[SHARED_JSON];
  if (box === undefined) return undefined;
  return (box.text ??= JSON.stringify(value));
}

/**
 * `JSON.stringify(message)`, with a shared `result.contents` spliced in as its text (written once).
 * The text is the same JSON, fields in another order: `result` first and `contents` first in it.
 *
 * @example stringifyMessage({ jsonrpc: '2.0', id: 1, result: { contents } })
 */
export function stringifyMessage(message: object): string {
  const result = (message as { result?: unknown }).result;
  if (typeof result !== 'object' || result === null) return JSON.stringify(message);
  const contents = sharedText((result as { contents?: unknown }).contents);
  if (contents === undefined) return JSON.stringify(message);
  const { contents: _contents, ...rest } = result as Record<string, unknown>;
  const restText = JSON.stringify(rest);
  const body = restText === '{}' ? `{"contents":${contents}}` : `{"contents":${contents},${restText.slice(1)}`;
  const { result: _result, ...envelope } = message as Record<string, unknown>;
  const envelopeText = JSON.stringify(envelope);
  return envelopeText === '{}' ? `{"result":${body}}` : `{"result":${body},${envelopeText.slice(1)}`;
}
