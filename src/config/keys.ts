// Top-level keys of a config file: ours, another client's (set aside), or a typo of ours (an error). Pure.

/** An unknown key this close to one of ours (see {@link editDistance}) is taken for a typo of it. */
export const TYPO_DISTANCE = 2;

/** A config file's top level, sorted. */
export interface TopLevelKeys {
  /** The entries whose keys are ours, in file order. */
  ours: Record<string, unknown>;
  /** Keys that are not ours nor close to ours: another client's settings (`globalShortcut`, `inputs`). */
  ignored: string[];
  /** Keys close to one of ours, each with the one it is closest to. */
  typos: { key: string; suggestion: string }[];
}

/**
 * Sorts the top-level entries of `raw` against `known` (our own top-level keys). A whole client
 * config file (Claude Desktop's, VS Code's `mcp.json`) then loads: its other keys are set aside,
 * while `cahce` or `servres` still fail instead of silently losing a setting.
 */
export function sortTopLevelKeys(raw: Record<string, unknown>, known: readonly string[]): TopLevelKeys {
  const result: TopLevelKeys = { ours: {}, ignored: [], typos: [] };
  for (const [key, value] of Object.entries(raw)) {
    if (known.includes(key)) {
      result.ours[key] = value;
      continue;
    }
    const suggestion = closest(key, known);
    if (suggestion === undefined) result.ignored.push(key);
    else result.typos.push({ key, suggestion });
  }
  return result;
}

/** The known key within {@link TYPO_DISTANCE} of `key` (ignoring case), the closest first; undefined if none. */
export function closest(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = TYPO_DISTANCE + 1;
  for (const candidate of known) {
    const d = editDistance(key.toLowerCase(), candidate.toLowerCase());
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
