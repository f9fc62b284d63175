/** The Markdown of bench:load (printed and written to bench/results/<name>.md). */
import { cpus } from 'node:os';
import type { Percentiles, LoadSummary } from './load-stats';
import { ratio } from './load-stats';
import type { ProcessMemory } from './load-memory';
import type { CpuShare } from './load-cpu';

export interface ConfigResult {
  rankers: number;
  /** Its column's name when it is not "N rankers" (askbus up). */
  name?: string;
  burst: LoadSummary & {
    wallSeconds: number;
    peakOpen: number;
    peakStreaming: number;
    cpu: CpuShare;
    /** Connections the kernel dropped for a full accept queue during the burst (machine-wide). */
    listenOverflows: number;
  };
  closedLoop?: LoadSummary & {
    clients: number;
    windowSeconds: number;
    lateStreams: number;
    peakStreaming: number;
    cpu: CpuShare;
  };
  childWarnings: number;
  childLastWarnings: string[];
}

export interface ScenarioResult {
  name: string;
  description: string;
  rankDelayMs: number;
  configs: ConfigResult[];
}

export interface SoakResult {
  minutes: number;
  rankers: number;
  streams: number;
  sampleSeconds: number;
  criterion: string;
  load: LoadSummary & { peakStreaming: number };
  cpu: CpuShare;
  processes: ProcessMemory[];
  allFlat: boolean;
}

const fmtP = (p: Percentiles) => `${p.p50} / ${p.p90} / ${p.p99} / ${p.max}`;
const times = (x: number, base: number) => {
  const r = ratio(x, base);
  return Number.isNaN(r) ? '' : ` (${r}×)`;
};
const errorsText = (e: Record<string, number>) =>
  Object.keys(e).length
    ? Object.entries(e)
        .map(([k, n]) => `${k}: ${n}`)
        .join(', ')
    : 'none';

/** CPU seconds per group and of the rest of the machine, as "system 3.1 · rankers 0.9 · …". */
export const cpuText = (c: CpuShare): string =>
  [...Object.entries(c.seconds), ['elsewhere', c.elsewhere] as const]
    .map(([k, v]) => `${k} ${v}`)
    .join(' · ') + ` (of ${Math.round(c.wallSeconds * cpus().length * 10) / 10} in ${c.wallSeconds} s wall)`;

function row(label: string, cells: string[]): string {
  return `| ${label} | ${cells.join(' | ')} |`;
}

export function scenarioTable(s: ScenarioResult, streams: number): string[] {
  const cs = s.configs;
  const base = cs[0]!;
  const label = (c: ConfigResult) => c.name ?? `${c.rankers} ranker${c.rankers === 1 ? '' : 's'}`;
  const lines = [
    `### ${s.name}: ${s.description}`,
    '',
    `**Burst**: ${streams} streaming /ask requests opened at once and held until each ends (ratios vs ${label(base)}).`,
    '',
    row(
      '',
      cs.map((c) => label(c)),
    ),
    row(
      '---',
      cs.map(() => '---'),
    ),
    row(
      'peak requests in flight at once (sent, not yet ended)',
      cs.map((c) => `${c.burst.peakOpen} of ${c.burst.streams}`),
    ),
    row(
      'peak streams open at once (headers received, not yet ended)',
      cs.map((c) => `${c.burst.peakStreaming} of ${c.burst.streams}`),
    ),
    row(
      'connections dropped for a full accept queue (TcpExt ListenOverflows; SYN retried after 1 s, 3 s, 7 s …)',
      cs.map((c) => String(c.burst.listenOverflows)),
    ),
    row(
      'completed / failed',
      cs.map((c) => `${c.burst.completed} / ${c.burst.failed}`),
    ),
    row(
      'wall time, s',
      cs.map((c) => `${c.burst.wallSeconds}${times(c.burst.wallSeconds, base.burst.wallSeconds)}`),
    ),
    row(
      'completed streams/s',
      cs.map((c) => `${c.burst.streamsPerSec}${times(c.burst.streamsPerSec, base.burst.streamsPerSec)}`),
    ),
    row(
      'results/s',
      cs.map((c) => `${c.burst.resultsPerSec}${times(c.burst.resultsPerSec, base.burst.resultsPerSec)}`),
    ),
    row(
      'headers ms p50 / p90 / p99 / max',
      cs.map((c) => fmtP(c.burst.ms.headers)),
    ),
    row(
      'first result ms p50 / p90 / p99 / max',
      cs.map((c) => fmtP(c.burst.ms.firstResult)),
    ),
    row(
      'end-nlweb-response ms p50 / p90 / p99 / max',
      cs.map((c) => fmtP(c.burst.ms.endMessage)),
    ),
    row(
      'end p50, p99 vs base',
      cs.map(
        (c) =>
          `${ratio(c.burst.ms.endMessage.p50, base.burst.ms.endMessage.p50)}×, ${ratio(c.burst.ms.endMessage.p99, base.burst.ms.endMessage.p99)}×`,
      ),
    ),
    row(
      'errors by kind',
      cs.map((c) => errorsText(c.burst.errors)),
    ),
    row(
      'CPU s used: system · rankers · nats · client · elsewhere on the machine',
      cs.map((c) => cpuText(c.burst.cpu)),
    ),
  ];
  if (cs.every((c) => c.closedLoop)) {
    const cl = (c: ConfigResult) => c.closedLoop!;
    lines.push(
      '',
      `**Closed loop**: ${cl(base).clients} clients, each re-asking as soon as its stream ends, for ${cl(base).windowSeconds} s (streams ending inside the window count).`,
      '',
      row(
        '',
        cs.map((c) => label(c)),
      ),
      row(
        '---',
        cs.map(() => '---'),
      ),
      row(
        'peak streams open at once',
        cs.map((c) => String(cl(c).peakStreaming)),
      ),
      row(
        'completed / failed',
        cs.map((c) => `${cl(c).completed} / ${cl(c).failed}`),
      ),
      row(
        'completed streams/s',
        cs.map((c) => `${cl(c).streamsPerSec}${times(cl(c).streamsPerSec, cl(base).streamsPerSec)}`),
      ),
      row(
        'results/s',
        cs.map((c) => `${cl(c).resultsPerSec}${times(cl(c).resultsPerSec, cl(base).resultsPerSec)}`),
      ),
      row(
        'first result ms p50 / p90 / p99 / max',
        cs.map((c) => fmtP(cl(c).ms.firstResult)),
      ),
      row(
        'end-nlweb-response ms p50 / p90 / p99 / max',
        cs.map((c) => fmtP(cl(c).ms.endMessage)),
      ),
      row(
        'errors by kind',
        cs.map((c) => errorsText(cl(c).errors)),
      ),
      row(
        'CPU s used: system · rankers · nats · client · elsewhere on the machine',
        cs.map((c) => cpuText(cl(c).cpu)),
      ),
    );
  }
  const share = (c: CpuShare, group: string): number => {
    const ours = Object.values(c.seconds).reduce((a, b) => a + b, 0);
    return Math.round(((c.seconds[group] ?? 0) / Math.max(ours, 1e-9)) * 100);
  };
  lines.push(
    '',
    `Of the CPU this run's own processes used in the burst, the system process took ` +
      `${cs.map((c) => `${share(c.burst.cpu, 'system')}%`).join(' / ')} and the rankers ` +
      `${cs.map((c) => `${share(c.burst.cpu, 'rankers')}%`).join(' / ')} (${cs.map((c) => label(c)).join(' / ')}).`,
  );
  const warned = cs.filter((c) => c.childWarnings > 0);
  if (warned.length) {
    lines.push(
      '',
      `Warnings/errors printed by the services: ${warned.map((c) => `${label(c)}: ${c.childWarnings}`).join('; ')}.`,
    );
  }
  return lines;
}

export function soakTable(s: SoakResult): string[] {
  const v = (x: ProcessMemory['rss']) =>
    `${x.firstMB} → ${x.lastMB} (max ${x.maxMB}); ${x.secondHalfSlopeMBPerMin} MB/min: **${x.verdict}**`;
  return [
    `### Soak: ${s.minutes} min, ${s.streams} streams kept open (re-opened as they end), ${s.rankers} rankers, instant model`,
    '',
    `${s.load.completed} streams completed (${s.load.streamsPerSec}/s), ${s.load.failed} failed (${errorsText(s.load.errors)}); ` +
      `peak ${s.load.peakStreaming} open at once; end-nlweb-response ms p50 / p90 / p99 / max ${fmtP(s.load.ms.endMessage)}. ` +
      `CPU s: ${cpuText(s.cpu)}.`,
    '',
    `Memory sampled every ${s.sampleSeconds} s. ${s.criterion}.`,
    '',
    '| process | RSS MB first → last (max); 2nd-half slope | heap MB first → last (max); 2nd-half slope |',
    '| --- | --- | --- |',
    ...s.processes.map(
      (p) =>
        `| ${p.name} | ${v(p.rss)} | ${p.heap ? `${v(p.heap)}${p.heapAfterGc ? ' (after gc)' : ' (no forced gc)'}` : 'n/a'} |`,
    ),
    '',
    `Memory ${s.allFlat ? 'stayed **flat**' : 'did **not** stay flat (or too few samples to say)'} by that criterion for every service process.`,
    ...(s.minutes < 2
      ? [
          '',
          `A ${s.minutes}-minute soak is a smoke test: slopes over a few seconds extrapolate noise, not leaks.`,
        ]
      : []),
  ];
}
