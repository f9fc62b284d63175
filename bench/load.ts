/**
 * bench:load — 1,000 concurrent SSE streams against the embedded default (local model, embedded
 * index, demo data) on loopback, with 1, 2 and 4 ranker replicas side by side in one run, each
 * on a fresh system with its own nats-server, and `askbus up` itself (one process, as a new user
 * starts it); then a memory soak under steady load.
 *
 * Scenarios: `instant` (the local model scores at once, so CPU is the limit) and `delay` (each
 * ranker call first waits --delay-ms, standing in for a model's latency). Per scenario and
 * ranker count: a burst of --streams streams opened at once, then a closed loop of --loop-clients
 * (default 200) clients for --loop-seconds. The soak (--soak-minutes, --soak-streams,
 * --soak-rankers) samples memory every --sample-seconds. Writes bench/results/load.json and
 * load.md (--quick: load-quick.*, --url: load-url.*). ASKBUS_LOAD_CPU_PROF_DIR=<dir> also writes
 * a CPU profile of the system process.
 *
 *   npm run bench:load                              full run, 10-minute soak
 *   npm run bench:load -- --soak-minutes 0          comparison only
 *   npm run bench:load -- --quick                   100 streams, 0.5-minute soak
 *   npm run bench:load -- --url http://127.0.0.1:8000   a running system (loopback only; no soak)
 *   npm run bench:load -- --up --soak-minutes 0    only the `askbus up` column (load-up.*)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { burst, closedLoop, StreamClient, DEMO_QUERIES, type StreamSample } from './load-client';
import {
  RANKER_REPLICA,
  SYSTEM_PROCESS,
  UP_PROCESS,
  startLoadSystem,
  startUpSystem,
  type LoadSystem,
  type TrackedProcess,
} from './load-cluster';
import { cpuMeter } from './load-cpu';
import { listenOverflows } from './load-net';
import { RefusedTarget, assertLoopbackUrl, ensureFdLimit, openFilesLimit } from './load-guard';
import { flatCriterion, startMemorySampler } from './load-memory';
import {
  scenarioTable,
  soakTable,
  type ConfigResult,
  type ScenarioResult,
  type SoakResult,
} from './load-report';
import { summarizeLoad } from './load-stats';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    streams: { type: 'string' },
    rankers: { type: 'string', default: '1,2,4' },
    scenarios: { type: 'string', default: 'instant,delay' },
    'delay-ms': { type: 'string', default: '2000' },
    'loop-seconds': { type: 'string' },
    'loop-clients': { type: 'string' },
    'soak-minutes': { type: 'string' },
    'soak-streams': { type: 'string' },
    'soak-rankers': { type: 'string', default: '2' },
    'sample-seconds': { type: 'string' },
    'flat-heap-mb-per-min': { type: 'string', default: '1' },
    'flat-rss-mb-per-min': { type: 'string', default: '2' },
    'timeout-seconds': { type: 'string', default: '120' },
    url: { type: 'string' },
    up: { type: 'boolean', default: false },
  },
});

function num(name: string, value: string | undefined, fallback: number, min = 0): number {
  const n = value === undefined ? fallback : Number(value);
  if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number ≥ ${min}, got "${value}"`);
  return n;
}

const quick = args.quick;
const opts = {
  streams: num('streams', args.streams, quick ? 100 : 1000, 1),
  rankers: args.rankers.split(',').map((r) => num('rankers', r, 1, 1)),
  scenarios: args.scenarios.split(',').filter(Boolean),
  delayMs: num('delay-ms', args['delay-ms'], 2000),
  loopSeconds: num('loop-seconds', args['loop-seconds'], quick ? 5 : 20),
  loopClients: 0,
  soakMinutes: num('soak-minutes', args['soak-minutes'], quick ? 0.5 : 10),
  soakStreams: num('soak-streams', args['soak-streams'], quick ? 50 : 500, 1),
  soakRankers: num('soak-rankers', args['soak-rankers'], 2, 1),
  sampleSeconds: num('sample-seconds', args['sample-seconds'], quick ? 5 : 10, 1),
  flat: {
    heapMBPerMin: num('flat-heap-mb-per-min', args['flat-heap-mb-per-min'], 1),
    rssMBPerMin: num('flat-rss-mb-per-min', args['flat-rss-mb-per-min'], 2),
  },
  timeoutMs: num('timeout-seconds', args['timeout-seconds'], 120, 1) * 1000,
};
// Fewer clients than the burst: with 1,000 clients in lockstep a 20 s window holds two rounds.
opts.loopClients = num('loop-clients', args['loop-clients'], Math.min(opts.streams, 200), 1);
for (const s of opts.scenarios) {
  if (s !== 'instant' && s !== 'delay') throw new Error(`--scenarios takes instant and/or delay, not "${s}"`);
}
// Smoke runs and runs against a given URL must not overwrite the full run's results.
const out = args.url ? 'load-url' : quick ? 'load-quick' : args.up ? 'load-up' : 'load';
const log = (line: string): void => console.log(line);
const seconds = (ms: number) => Math.round(ms / 100) / 10;

/** The system being loaded, stopped on Ctrl-C so no nats-server or service is left behind. */
let current: LoadSystem | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`bench:load: ${signal}, stopping the system`);
    void (current?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
  });
}

const raisedExit = ensureFdLimit(Math.max(opts.streams, opts.soakStreams), log);
if (raisedExit !== undefined) process.exit(raisedExit);

/** Warms JIT, index pages and NATS routes in every process before anything is measured. */
async function warmUp(url: URL): Promise<void> {
  const client = new StreamClient(url, { timeoutMs: opts.timeoutMs });
  try {
    await burst(client, DEMO_QUERIES.length * 2);
    await burst(client, Math.min(200, opts.streams));
  } finally {
    client.close();
  }
}

/** CPU groups of a system's processes plus this one (the load generator). */
function cpuGroups(processes: TrackedProcess[]): Record<string, number[]> {
  const pids = (role: TrackedProcess['role']) => processes.filter((p) => p.role === role).map((p) => p.pid);
  return { system: pids('system'), rankers: pids('ranker'), nats: pids('nats'), client: [process.pid] };
}

async function measure(url: URL, rankers: number, system?: LoadSystem): Promise<ConfigResult> {
  const groups = cpuGroups(system?.processes ?? []);
  await warmUp(url);
  const before = system?.log.warnings ?? 0;
  // A client of its own, so every burst stream opens a new connection, as new visitors would.
  const burstClient = new StreamClient(url, { timeoutMs: opts.timeoutMs });
  const burstCpu = cpuMeter(groups);
  const overflows = listenOverflows();
  const b = await burst(burstClient, opts.streams).finally(() => burstClient.close());
  const result: ConfigResult = {
    rankers,
    burst: {
      ...summarizeLoad(b.samples, b.wallMs / 1000),
      wallSeconds: seconds(b.wallMs),
      peakOpen: burstClient.peakOpen,
      peakStreaming: burstClient.peakStreaming,
      cpu: burstCpu.stop(),
      listenOverflows: listenOverflows() - overflows,
    },
    childWarnings: 0,
    childLastWarnings: [],
  };
  log(
    `  burst: ${result.burst.completed}/${opts.streams} completed in ${result.burst.wallSeconds} s, ` +
      `peak ${result.burst.peakStreaming} streaming, end p50 ${result.burst.ms.endMessage.p50} ms p99 ${result.burst.ms.endMessage.p99} ms` +
      (result.burst.failed ? `, errors ${JSON.stringify(result.burst.errors)}` : ''),
  );
  if (opts.loopSeconds > 0) {
    const loopClient = new StreamClient(url, { timeoutMs: opts.timeoutMs });
    const loopCpu = cpuMeter(groups);
    const l = await closedLoop(loopClient, opts.loopClients, opts.loopSeconds).finally(() =>
      loopClient.close(),
    );
    result.closedLoop = {
      ...summarizeLoad(l.samples, l.windowMs / 1000),
      cpu: loopCpu.stop(),
      clients: opts.loopClients,
      windowSeconds: seconds(l.windowMs),
      lateStreams: l.lateStreams,
      peakStreaming: loopClient.peakStreaming,
    };
    log(
      `  closed loop: ${result.closedLoop.streamsPerSec} streams/s, end p50 ${result.closedLoop.ms.endMessage.p50} ms` +
        (result.closedLoop.failed ? `, errors ${JSON.stringify(result.closedLoop.errors)}` : ''),
    );
  }
  result.childWarnings = (system?.log.warnings ?? 0) - before;
  result.childLastWarnings = system?.log.last ?? [];
  return result;
}

const SCENARIOS = {
  instant: () => ({
    name: 'instant',
    description: 'local model, no simulated latency (CPU is the limit)',
    rankDelayMs: 0,
  }),
  delay: () => ({
    name: 'delay',
    description:
      `local model behind a simulated ${opts.delayMs} ms latency per ranker call (ASKBUS_RANK_DELAY_MS); ` +
      'the wait costs no CPU, so streams stay open longer but a replica adds no capacity',
    rankDelayMs: opts.delayMs,
  }),
} as const;

async function runScenario(key: 'instant' | 'delay'): Promise<ScenarioResult> {
  const scenario = SCENARIOS[key]();
  const configs: ConfigResult[] = [];
  for (const rankers of args.up ? [] : opts.rankers) {
    log(`${scenario.name}, ${rankers} ranker${rankers === 1 ? '' : 's'}: starting the system`);
    const system = (current = await startLoadSystem({ rankers, rankDelayMs: scenario.rankDelayMs }));
    try {
      configs.push(await measure(await assertLoopbackUrl(system.url), rankers, system));
    } finally {
      current = undefined;
      await system.stop();
    }
  }
  // The same burst against `askbus up` itself: one process, as a new user runs it.
  log(`${scenario.name}, askbus up: starting it`);
  const up = (current = await startUpSystem({ rankDelayMs: scenario.rankDelayMs }));
  try {
    const result = await measure(await assertLoopbackUrl(up.url), up.rankers, up);
    configs.push({ ...result, name: 'askbus up' });
  } finally {
    current = undefined;
    await up.stop();
  }
  return { ...scenario, configs };
}

async function runSoak(): Promise<SoakResult> {
  log(
    `soak: ${opts.soakMinutes} min, ${opts.soakStreams} streams, ${opts.soakRankers} rankers: starting the system`,
  );
  const system = (current = await startLoadSystem({ rankers: opts.soakRankers, rankDelayMs: 0 }));
  const url = await assertLoopbackUrl(system.url);
  const client = new StreamClient(url, { timeoutMs: opts.timeoutMs });
  try {
    await warmUp(url);
    const self: TrackedProcess = {
      name: 'load generator (this process, not judged)',
      role: 'client',
      pid: process.pid,
      heap: async () => ({ usedMB: process.memoryUsage().heapUsed / 2 ** 20, afterGc: false }),
    };
    const sampler = startMemorySampler([...system.processes, self], opts.sampleSeconds * 1000);
    const soakCpu = cpuMeter(cpuGroups(system.processes));
    let done = 0;
    const progress = setInterval(
      () => log(`  soak: ${done} streams done, ${client.streaming} open`),
      Math.max(30_000, opts.soakMinutes * 6_000),
    );
    let samples: StreamSample[];
    let windowMs: number;
    try {
      ({ samples, windowMs } = await closedLoop(
        client,
        opts.soakStreams,
        opts.soakMinutes * 60,
        () => done++,
      ));
    } finally {
      clearInterval(progress);
    }
    const processes = await sampler.finish(opts.flat);
    const judged = processes.filter((p) => p.pid !== process.pid);
    return {
      minutes: opts.soakMinutes,
      rankers: opts.soakRankers,
      streams: opts.soakStreams,
      sampleSeconds: opts.sampleSeconds,
      criterion: flatCriterion(opts.flat),
      load: { ...summarizeLoad(samples, windowMs / 1000), peakStreaming: client.peakStreaming },
      cpu: soakCpu.stop(),
      processes,
      allFlat: judged.every((p) => p.rss.verdict === 'flat' && (!p.heap || p.heap.verdict === 'flat')),
    };
  } finally {
    client.close();
    current = undefined;
    await system.stop();
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  const fd = openFilesLimit();
  const machine = `${cpus().length} cores (${cpus()[0]?.model.trim() ?? '?'}), ${Math.round(totalmem() / 2 ** 30)} GB`;
  const header = [
    `# bench:load — ${opts.streams} concurrent SSE streams${quick ? ' (--quick)' : ''}`,
    '',
    `${new Date().toISOString()}, ${machine}, Node ${process.version}, ulimit -n ${fd?.soft ?? '?'}. ` +
      "Load generator, nats-server and every service share this machine: the client's own CPU is part of the picture.",
    '',
    ...(args.up
      ? []
      : [`- A **ranker replica** is ${RANKER_REPLICA}.`, `- The **system process** is ${SYSTEM_PROCESS}.`]),
    `- The **askbus up** column is ${UP_PROCESS}; each scenario starts a fresh one.`,
    `- Each ranker count gets a fresh system with its own nats-server and data folder, warmed with ${DEMO_QUERIES.length * 2} + ${Math.min(200, opts.streams)} streams first. ` +
      'Burst streams each open a new connection; closed-loop clients reuse theirs (keep-alive).',
    `- Queries: ${DEMO_QUERIES.length} demo queries over movies and cars, round robin; GET /ask?streaming=true, read as SSE. ` +
      'Latencies are per stream from its request; "end" is the end-nlweb-response message; a stream fails on a non-200, ' +
      `a socket error, an error message, a close without end-nlweb-response, or ${opts.timeoutMs / 1000} s.`,
    '',
  ];
  const lines = [...header];
  let scenarios: ScenarioResult[] = [];
  let soak: SoakResult | undefined;

  if (args.url) {
    // A system someone else started: only the load, no ranker comparison, no memory of its processes.
    const url = await assertLoopbackUrl(args.url);
    log(`loading ${url.origin}`);
    const config = await measure(url, 0);
    scenarios = [
      { name: 'given', description: `the system at ${url.origin}`, rankDelayMs: NaN, configs: [config] },
    ];
  } else {
    for (const key of opts.scenarios as ('instant' | 'delay')[]) scenarios.push(await runScenario(key));
    if (opts.soakMinutes > 0) soak = await runSoak();
  }
  for (const s of scenarios) lines.push(...scenarioTable(s, opts.streams), '');
  lines.push(...(soak ? soakTable(soak) : ['### Soak', '', 'Not run (--soak-minutes 0 or --url).']), '');
  lines.push(`Total run time ${Math.round((performance.now() - started) / 1000)} s.`);
  const md = lines.join('\n') + '\n';
  console.log('\n' + md);

  const dir = join(fileURLToPath(new URL('.', import.meta.url)), 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, `${out}.json`),
    JSON.stringify(
      {
        bench: 'load',
        date: new Date().toISOString(),
        machine,
        node: process.version,
        ulimitN: fd?.soft,
        quick,
        options: opts,
        rankerReplica: RANKER_REPLICA,
        systemProcess: SYSTEM_PROCESS,
        queries: DEMO_QUERIES,
        unit: 'ms',
        scenarios,
        soak: soak ?? null,
      },
      null,
      2,
    ) + '\n',
  );
  writeFileSync(join(dir, `${out}.md`), md);
  log(`wrote bench/results/${out}.json and ${out}.md`);
}

try {
  await main();
} catch (err) {
  // A refused target is the user's mistake, not a crash: its message is the whole story.
  console.error(err instanceof RefusedTarget ? err.message : err);
  process.exit(1);
}
