/**
 * Where the CPU went during a phase: seconds used by each of our processes (/proc/<pid>/stat)
 * and by the whole machine (/proc/stat), so a reader can see what was the bottleneck and how
 * much of the machine other work took.
 */
import { readFileSync } from 'node:fs';

/** Linux reports CPU times in clock ticks; USER_HZ is 100 on every mainstream architecture. */
const TICKS_PER_SECOND = 100;

/** utime + stime of a process, in seconds (0 when it is gone). */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3 (state).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** Busy CPU seconds of the whole machine, summed over cores (not idle, iowait or steal). */
export function machineBusySeconds(): number {
  try {
    const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
    const n = ticks.map(Number);
    // user nice system idle iowait irq softirq steal guest guest_nice; guest is inside user already
    const [user, nice, system, , , irq, softirq] = n;
    return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0)) / TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

export interface CpuShare {
  /** CPU seconds per group of our processes. */
  seconds: Record<string, number>;
  /** Busy seconds of the machine not used by our processes (other work on the machine). */
  elsewhere: number;
  wallSeconds: number;
}

/** Starts counting; `stop()` returns the seconds each group used since. */
export function cpuMeter(groups: Record<string, number[]>): { stop(): CpuShare } {
  const t0 = performance.now();
  const m0 = machineBusySeconds();
  const start = Object.fromEntries(
    Object.entries(groups).map(([g, pids]) => [g, pids.map((p) => processCpuSeconds(p))]),
  );
  return {
    stop() {
      const round = (v: number) => Math.round(v * 10) / 10;
      const seconds: Record<string, number> = {};
      for (const [g, pids] of Object.entries(groups)) {
        seconds[g] = round(pids.reduce((sum, p, i) => sum + processCpuSeconds(p) - start[g]![i]!, 0));
      }
      const ours = Object.values(seconds).reduce((a, b) => a + b, 0);
      return {
        seconds,
        elsewhere: round(Math.max(0, machineBusySeconds() - m0 - ours)),
        wallSeconds: round((performance.now() - t0) / 1000),
      };
    },
  };
}
