/** Nearest-rank percentile of the numbers that are not NaN (NaN when there are none). */
export function percentile(values: number[], p: number): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export const mean = (values: number[]): number =>
  values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);

/** One timed query: when its first result arrived and when it ended (ms). */
export interface TimedQuery {
  firstResultMs: number;
  totalMs: number;
}

/** p50 and p99 of time to first result and of total time. */
export function latencySummary(samples: TimedQuery[]) {
  const first = samples.map((s) => s.firstResultMs);
  const total = samples.map((s) => s.totalMs);
  return {
    firstResult: { p50: percentile(first, 50), p99: percentile(first, 99) },
    total: { p50: percentile(total, 50), p99: percentile(total, 99) },
  };
}
