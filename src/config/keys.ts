// Top-level keys of a config file: ours, a known client file's own (set aside), or unknown (an error, with a suggestion). Pure.

/**
 * Top-level keys that MCP clients' own config files carry beside their server block, set aside so
 * the whole file loads: each with the client that writes it.
 */
export const CLIENT_KEYS: Readonly<Record<string, string>> = {
  inputs: 'VS Code (mcp.json prompts)',
  globalShortcut: 'Claude Desktop',
  preferences: 'Claude Desktop',
};

/** An unknown key this close to one of ours (see {@link editDistance}) is taken for a typo of it. */
export const TYPO_DISTANCE = 2;

/** A config file's top level, sorted. */
export interface TopLevelKeys {
  /** The entries whose keys are ours, in file order. */
  ours: Record<string, unknown>;
  /** A known client's own keys ({@link CLIENT_KEYS}: `globalShortcut`, `inputs`), set aside. */
  ignored: string[];
  /** Every other key: an error; `suggestion` is our key it is closest to, when one is close. */
  unknown: { key: string; suggestion?: string }[];
}

/**
 * Sorts the top-level entries of `raw` against `known` (our own top-level keys). A whole client
 * config file (Claude Desktop's, Claude Code's `.mcp.json`, Cursor's, VS Code's `mcp.json`) then
 * loads: its own keys are set aside, while `audit_log` or `rateLimits` fail instead of silently
 * losing a setting.
 */
export function sortTopLevelKeys(raw: Record<string, unknown>, known: readonly string[]): TopLevelKeys {
  const result: TopLevelKeys = { ours: {}, ignored: [], unknown: [] };
  for (const [key, value] of Object.entries(raw)) {
    if (known.includes(key)) result.ours[key] = value;
    else if (key === '$schema')
      continue; // for editors (schema/mcp-federate.schema.json): nothing to say
    else if (Object.hasOwn(CLIENT_KEYS, key)) result.ignored.push(key);
    else {
      const suggestion = closest(key, known);
      result.unknown.push(suggestion === undefined ? { key } : { key, suggestion });
    }
  }
  return result;
}

/** `unknown field "audit_log" (did you mean "audit"?)`. */
export function unknownKeyMessage(key: string, suggestion: string | undefined): string {
  return `unknown field "${key}"${suggestion === undefined ? '' : ` (did you mean "${suggestion}"?)`}`;
}

/**
 * The known key within {@link TYPO_DISTANCE} of `key` (ignoring case, `_` and `-`), or the one
 * `key` starts or ends with, or that starts or ends with `key`, at 4 characters or more (`audit_log` →
 * `audit`, `rateLimits` → `limits`, `jwks` → `jwksUrl`); undefined if none.
 */
export function closest(key: string, known: readonly string[]): string | undefined {
  const fold = (s: string) => s.toLowerCase().replace(/[_-]/g, '');
  const k = fold(key);
  let best: string | undefined;
  let bestDistance = TYPO_DISTANCE + 1;
  for (const candidate of known) {
    const c = fold(candidate);
    const affix = (c.length >= 4 && (k.startsWith(c) || k.endsWith(c))) || (k.length >= 4 && (c.startsWith(k) || c.endsWith(k)));
    const d = Math.min(editDistance(k, c), affix ? TYPO_DISTANCE : Infinity);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/**
 * Edits (insert, delete or replace a character, or swap two adjacent ones) that turn `a` into `b`:
 * the optimal string alignment distance.
 *
 * @example editDistance('cahce', 'cache') // 1
 */
export function editDistance(a: string, b: string): number {
  // Three rolling rows of the dynamic-programming table: i-2, i-1 and i.
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      current.push(d);
    }
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
}
