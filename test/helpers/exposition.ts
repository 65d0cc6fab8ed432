// A small reader of the Prometheus text exposition, for assertions on scraped values (promtool checks the format itself).

/** One sample: metric name, labels, value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses every sample line (comments skipped). */
export function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, '$1');
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The value of the one sample `name` whose labels are exactly `labels`; undefined when there is none. */
export function sample(samples: readonly Sample[], name: string, labels: Record<string, string>): number | undefined {
  const want = Object.entries(labels);
  const found = samples.filter((s) => s.name === name && Object.keys(s.labels).length === want.length && want.every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${name}: ${found.length} samples match`);
  return found[0]?.value;
}
