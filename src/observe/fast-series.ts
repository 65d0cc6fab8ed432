// Counters and histograms for the hot path: plain fields updated per request, turned into prom-client's metric shape only when scraped.

type Labels = Record<string, string>;

/** One labelled counter series. */
export interface CounterSeries {
  value: number;
}

/** One labelled histogram series: per-bucket counts (not cumulative), sum and count. */
export interface HistogramSeries {
  buckets: number[];
  sum: number;
  count: number;
}

/** What prom-client's registry reads from a metric (`registerMetric`). */
interface MetricShape {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: { labels: Labels; value: number; metricName?: string }[];
}

/**
 * A counter whose series are looked up once by the caller (a key of its label values) and then
 * incremented as a plain field: no label hashing per increment, as prom-client's own `inc` does.
 *
 * @example
 * const requests = new FastCounter('x_total', 'Requests.');
 * requests.series('read\0ok', { method: 'read', outcome: 'ok' }).value++;
 */
export class FastCounter {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  private readonly all = new Map<string, { labels: Labels; series: CounterSeries }>();

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  /** The series of `key` (made with `labels` the first time). */
  series(key: string, labels: Labels): CounterSeries {
    let s = this.all.get(key);
    if (!s) this.all.set(key, (s = { labels, series: { value: 0 } }));
    return s.series;
  }

  get(): MetricShape {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: [...this.all.values()].map((s) => ({ labels: s.labels, value: s.series.value })),
    };
  }
}

/** A histogram on fixed buckets, its series looked up once by the caller like {@link FastCounter}'s. */
export class FastHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly all = new Map<string, { labels: Labels; series: HistogramSeries }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
  ) {}

  series(key: string, labels: Labels): HistogramSeries {
    let s = this.all.get(key);
    if (!s) this.all.set(key, (s = { labels, series: { buckets: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 } }));
    return s.series;
  }

  /** Adds one observation of `value` to `series`. */
  observe(series: HistogramSeries, value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    series.buckets[i]!++;
    series.sum += value;
    series.count++;
  }

  get(): MetricShape {
    const values: MetricShape['values'] = [];
    for (const { labels, series } of this.all.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += series.buckets[i]!;
        values.push({ labels: { ...labels, le: String(le) }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { ...labels, le: '+Inf' }, value: series.count, metricName: `${this.name}_bucket` });
      values.push({ labels, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: series.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
