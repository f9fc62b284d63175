/** Summaries of bench:load samples: latency percentiles, throughput, errors, memory slopes. */
import { percentile } from './stats';
import type { StreamSample } from './load-client';

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function percentiles(values: number[]): Percentiles {
  const round = (v: number) => Math.round(v * 10) / 10;
  return {
    p50: round(percentile(values, 50)),
    p90: round(percentile(values, 90)),
    p99: round(percentile(values, 99)),
    max: round(percentile(values, 100)),
  };
}

export interface LoadSummary {
  streams: number;
  completed: number;
  failed: number;
  errors: Record<string, number>;
  results: number;
  /** Completed streams per second over the phase's wall time or window. */
  streamsPerSec: number;
  resultsPerSec: number;
  ms: { headers: Percentiles; firstResult: Percentiles; endMessage: Percentiles; closed: Percentiles };
}

/** Latencies over the completed streams; errors by kind over all of them. */
export function summarizeLoad(samples: StreamSample[], seconds: number): LoadSummary {
  const ok = samples.filter((s) => !s.error);
  const errors: Record<string, number> = {};
  for (const s of samples) if (s.error) errors[s.error] = (errors[s.error] ?? 0) + 1;
  const results = ok.reduce((n, s) => n + s.results, 0);
  const perSec = (n: number) => Math.round((n / Math.max(seconds, 1e-9)) * 10) / 10;
  return {
    streams: samples.length,
    completed: ok.length,
    failed: samples.length - ok.length,
    errors,
    results,
    streamsPerSec: perSec(ok.length),
    resultsPerSec: perSec(results),
    ms: {
      headers: percentiles(ok.map((s) => s.headersMs)),
      firstResult: percentiles(ok.map((s) => s.firstResultMs)),
      endMessage: percentiles(ok.map((s) => s.endMessageMs)),
      closed: percentiles(ok.map((s) => s.closedMs)),
    },
  };
}

/** Least-squares slope of y over x (NaN with fewer than two distinct x). */
export function slope(points: [number, number][]): number {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const [x, y] of points) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
  }
  return sxx === 0 ? NaN : sxy / sxx;
}

export const ratio = (x: number, base: number): number =>
  Number.isFinite(x) && Number.isFinite(base) && base !== 0 ? Math.round((x / base) * 100) / 100 : NaN;
