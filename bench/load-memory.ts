/**
 * Memory over a soak: RSS of every process from /proc/<pid>/status, heap where the process can
 * tell, sampled at a fixed interval; then first/last/max and the least-squares slope over the
 * second half (the first half holds warm-up growth: JIT, caches, pools reaching their size).
 */
import { readFileSync } from 'node:fs';
import type { TrackedProcess } from './load-cluster';
import { slope } from './load-stats';

export interface MemorySample {
  /** Minutes since the soak began. */
  min: number;
  rssMB: number;
  heapMB?: number;
}

/** Resident set size of a process in MB (undefined when it is gone). */
export function rssMB(pid: number): number | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    const kB = Number(line?.split(/\s+/)[1]);
    return Number.isFinite(kB) ? kB / 1024 : undefined;
  } catch {
    return undefined;
  }
}

export interface SeriesVerdict {
  firstMB: number;
  lastMB: number;
  maxMB: number;
  /** Least-squares slope over the samples of the second half, MB per minute. */
  secondHalfSlopeMBPerMin: number;
  secondHalfSamples: number;
  verdict: 'flat' | 'growing' | 'too few samples';
}

export interface ProcessMemory {
  name: string;
  pid: number;
  heapAfterGc: boolean;
  samples: MemorySample[];
  rss: SeriesVerdict;
  heap?: SeriesVerdict;
}

/** Fewer samples than this in the second half: no verdict. */
export const MIN_SECOND_HALF_SAMPLES = 3;
export interface FlatLimits {
  rssMBPerMin: number;
  heapMBPerMin: number;
}

export const flatCriterion = (l: FlatLimits): string =>
  `"flat" = the least-squares slope over the second half of the soak is at most ${l.heapMBPerMin} MB/min ` +
  `for heap and ${l.rssMBPerMin} MB/min for RSS (which also moves with allocator and GC timing), with at ` +
  `least ${MIN_SECOND_HALF_SAMPLES} samples in that half; a shrinking series is flat`;

export function judge(points: [number, number][], totalMin: number, flatMBPerMin: number): SeriesVerdict {
  const round = (v: number) => Math.round(v * 100) / 100;
  const ys = points.map(([, y]) => y);
  const half = points.filter(([x]) => x >= totalMin / 2);
  const s = slope(half);
  return {
    firstMB: round(ys[0] ?? NaN),
    lastMB: round(ys.at(-1) ?? NaN),
    maxMB: round(Math.max(...ys)),
    secondHalfSlopeMBPerMin: round(s),
    secondHalfSamples: half.length,
    verdict:
      half.length < MIN_SECOND_HALF_SAMPLES || !Number.isFinite(s)
        ? 'too few samples'
        : s <= flatMBPerMin
          ? 'flat'
          : 'growing',
  };
}

/** Samples every process every `intervalMs` until stopped; `finish` judges each series. */
export function startMemorySampler(processes: TrackedProcess[], intervalMs: number) {
  const t0 = performance.now();
  const series = new Map<TrackedProcess, MemorySample[]>(processes.map((p) => [p, []]));
  const afterGc = new Map<TrackedProcess, boolean>();
  let busy = false;
  const sampleOnce = async (): Promise<void> => {
    if (busy) return; // a slow heap answer must not stack samples up
    busy = true;
    try {
      const min = (performance.now() - t0) / 60_000;
      await Promise.all(
        processes.map(async (p) => {
          const heap = await p.heap?.();
          const rss = rssMB(p.pid);
          if (rss === undefined) return;
          if (heap) afterGc.set(p, heap.afterGc);
          series.get(p)!.push({ min, rssMB: rss, ...(heap ? { heapMB: heap.usedMB } : {}) });
        }),
      );
    } finally {
      busy = false;
    }
  };
  const first = sampleOnce();
  const timer = setInterval(() => void sampleOnce(), intervalMs);
  return {
    async finish(limits: FlatLimits): Promise<ProcessMemory[]> {
      clearInterval(timer);
      await first;
      await sampleOnce();
      const totalMin = (performance.now() - t0) / 60_000;
      return processes.map((p) => {
        const samples = series.get(p)!;
        const heapPoints = samples.flatMap((s): [number, number][] =>
          s.heapMB === undefined ? [] : [[s.min, s.heapMB]],
        );
        return {
          name: p.name,
          pid: p.pid,
          heapAfterGc: afterGc.get(p) ?? false,
          samples: samples.map((s) => ({
            min: Math.round(s.min * 1000) / 1000,
            rssMB: Math.round(s.rssMB * 10) / 10,
            ...(s.heapMB === undefined ? {} : { heapMB: Math.round(s.heapMB * 10) / 10 }),
          })),
          rss: judge(
            samples.map((s) => [s.min, s.rssMB]),
            totalMin,
            limits.rssMBPerMin,
          ),
          ...(heapPoints.length ? { heap: judge(heapPoints, totalMin, limits.heapMBPerMin) } : {}),
        };
      });
    },
  };
}
