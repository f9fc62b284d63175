/**
 * bench:ask — the full service path (HTTP → gateway → NATS → router → retriever + rankers)
 * against the same pipeline called in one process, side by side in one run, on the movies site.
 * Prints time to first result and total latency (p50, p99) and their ratios, and writes
 * bench/results/ask.json (ASKBUS_BENCH_OUT names another file).
 *
 * ASKBUS_BENCH_MODEL_MS=L stands in for a ranking model's latency: each ranking call waits L ms
 * before it scores, on both paths (the rankers' ASKBUS_RANK_DELAY_MS; a wait in the in-process
 * scorer). The one-process run also times retrieval (understanding and search, until the
 * candidates are in hand), so time to first result can be read against retrieval + L.
 *
 *   npm run bench:ask            (ASKBUS_BENCH_ROUNDS=20, ASKBUS_BENCH_WARMUP=60 by default)
 *   ASKBUS_BENCH_MODEL_MS=200 npm run bench:ask
 *   ASKBUS_BENCH_PROFILE=/tmp/prof npm run bench:ask   (also writes a CPU profile of each path,
 *                                                      measured apart after the timed rounds)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Agent, get as httpGet } from 'node:http';
import { Session } from 'node:inspector/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AskRequest, type Message } from '@askbus/contracts';
import { startDemoSystem, takeSseData } from '@askbus/cli';
import { inProcessPipeline } from './in-process';
import { defaultSearchSettings, runAsk } from '@askbus/router';
import { latencySummary, mean, percentile } from './stats';

const queries = [
  'westerns with clint eastwood',
  'science fiction movies by ridley scott',
  'funny animated films for kids',
  'highly rated dramas from the 1990s',
  'horror movies',
  'steven spielberg adventure',
  'romantic comedy',
  'war movies',
];
const rounds = Number(process.env.ASKBUS_BENCH_ROUNDS ?? 20);
const modelMs = Number(process.env.ASKBUS_BENCH_MODEL_MS ?? 0);
/**
 * Rounds run on both paths before measuring. V8 goes on compiling hot code on its helper threads
 * for the first few hundred queries; on 2 cores that compilation competes with the query for the
 * CPU, and the service path (bus, NATS client, HTTP) has more code to compile than one process.
 * After one round the service path's helper threads still took ~4.5 ms of CPU per query, after
 * 80 rounds ~1.7 ms; a server runs warm, so the bench measures warm. With a model latency the
 * query's CPU matters little against it, and fewer rounds keep the run short.
 */
const warmupRounds = Number(process.env.ASKBUS_BENCH_WARMUP ?? (modelMs > 0 ? 5 : 60));
const outFile = process.env.ASKBUS_BENCH_OUT;
const profileDir = process.env.ASKBUS_BENCH_PROFILE;

/** Runs `work` under the V8 CPU profiler and writes `<dir>/<name>.cpuprofile` (DevTools format). */
async function profiled(dir: string, name: string, work: () => Promise<void>): Promise<void> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  try {
    await work();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}

interface Sample {
  firstResultMs: number;
  totalMs: number;
  results: number;
  /**
   * CPU time of this process while the query ran (user + system, ms): every service runs in
   * this process, so on the service path it is the query's cost to all of them but nats-server.
   * Far less sensitive to a busy machine than latency.
   */
  cpuMs: number;
}

const cpuMsSince = (start: NodeJS.CpuUsage): number => {
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
};

/**
 * One query over HTTP: read the SSE stream as it arrives, note when the first result lands.
 * node:http with a keep-alive agent, not fetch: the client runs in this process too, and fetch's
 * web streams cost about 2 ms of CPU a query that would be counted against the services.
 */
const agent = new Agent({ keepAlive: true, maxSockets: 4 });
function overHttp(base: string, query: string): Promise<Sample> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  return new Promise<Sample>((resolve, reject) => {
    const req = httpGet(`${base}/ask?site=movies&query=${encodeURIComponent(query)}`, { agent }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return reject(new Error(`HTTP ${res.statusCode}`));
      }
      res.setEncoding('utf8');
      let buffer = '';
      let firstResultMs = NaN;
      let results = 0;
      res.on('data', (chunk: string) => {
        const { data, rest } = takeSseData(buffer + chunk);
        buffer = rest;
        for (const d of data) {
          const msg = JSON.parse(d) as { message_type: string; content?: unknown };
          if (msg.message_type === 'result' && Array.isArray(msg.content)) {
            if (Number.isNaN(firstResultMs)) firstResultMs = performance.now() - t0;
            results += msg.content.length;
          }
        }
      });
      res.on('end', () =>
        resolve({ firstResultMs, totalMs: performance.now() - t0, results, cpuMs: cpuMsSince(cpu0) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** The same query through the same pipeline code, with the retriever and scorer called directly. */
async function inProcess(run: (q: string) => AsyncIterable<Message>, query: string): Promise<Sample> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let firstResultMs = NaN;
  let results = 0;
  for await (const msg of run(query)) {
    if (msg.message_type === 'result' && Array.isArray(msg.content)) {
      if (Number.isNaN(firstResultMs)) firstResultMs = performance.now() - t0;
      results += msg.content.length;
    }
  }
  return { firstResultMs, totalMs: performance.now() - t0, results, cpuMs: cpuMsSince(cpu0) };
}

const summarize = (samples: Sample[]) => ({
  n: samples.length,
  ...latencySummary(samples),
  meanResults: mean(samples.map((s) => s.results)),
  cpuMs: {
    p50: percentile(
      samples.map((s) => s.cpuMs),
      50,
    ),
    mean: mean(samples.map((s) => s.cpuMs)),
  },
});

async function main(): Promise<void> {
  const system = await startDemoSystem({ rankDelayMs: modelMs });
  const { running, dataDir } = system;
  const { ports, model, routing } = await inProcessPipeline(join(dataDir, 'index'));
  // the tools the one-process runs were routed to (the services route the same way)
  const routedTo = new Map<string, number>();
  const routed = {
    ...routing,
    onRouted: (s: { tool: string }) => routedTo.set(s.tool, (routedTo.get(s.tool) ?? 0) + 1),
  };
  // retrieval times of the one-process runs (from the query's start to the candidates in hand)
  let started = 0;
  let retrievalMs: number[] = [];
  const local: typeof ports = {
    ...ports,
    retrieve: async (req, signal) => {
      const out = await ports.retrieve(req, signal);
      retrievalMs.push(performance.now() - started);
      return out;
    },
    score: async function* (query, items, signal, understanding) {
      if (modelMs > 0) await new Promise((r) => setTimeout(r, modelMs));
      yield* ports.score(query, items, signal, understanding);
    },
  };
  const runLocal = (query: string) => {
    started = performance.now();
    return runAsk(
      AskRequest.parse({ queryId: 'bench', query, site: ['movies'] }),
      local,
      new AbortController().signal,
      defaultSearchSettings,
      undefined,
      model,
      routed,
    );
  };

  try {
    // Warm both paths (JIT, index pages, connections) before measuring.
    for (let r = 0; r < warmupRounds; r++) {
      for (const q of queries) {
        await overHttp(running.url, q);
        await inProcess(runLocal, q);
      }
    }
    const service: Sample[] = [];
    const single: Sample[] = [];
    retrievalMs = [];
    // Interleaved, so both paths see the same machine conditions.
    for (let r = 0; r < rounds; r++) {
      for (const q of queries) {
        service.push(await overHttp(running.url, q));
        single.push(await inProcess(runLocal, q));
      }
    }
    const a = summarize(service);
    const b = summarize(single);
    const ratio = (x: number, y: number) => Math.round((x / y) * 100) / 100;
    const fmt = (v: number) => v.toFixed(2).padStart(9);
    console.log(
      `bench:ask — ${rounds} rounds × ${queries.length} movie queries after ${warmupRounds} warm-up rounds, ${cpus().length} cores, 2 rankers, model latency ${modelMs} ms`,
    );
    console.log('                          first result p50   p99 |   total p50      p99 | results');
    console.log(
      `services over NATS+HTTP  ${fmt(a.firstResult.p50)} ${fmt(a.firstResult.p99)} | ${fmt(a.total.p50)} ${fmt(a.total.p99)} | ${a.meanResults.toFixed(1)}`,
    );
    console.log(
      `one process              ${fmt(b.firstResult.p50)} ${fmt(b.firstResult.p99)} | ${fmt(b.total.p50)} ${fmt(b.total.p99)} | ${b.meanResults.toFixed(1)}`,
    );
    const ratios = {
      firstResultP50: ratio(a.firstResult.p50, b.firstResult.p50),
      firstResultP99: ratio(a.firstResult.p99, b.firstResult.p99),
      totalP50: ratio(a.total.p50, b.total.p50),
      totalP99: ratio(a.total.p99, b.total.p99),
    };
    console.log(
      `ratio services/one-process: first result p50 ${ratios.firstResultP50}×, p99 ${ratios.firstResultP99}×; total p50 ${ratios.totalP50}×, p99 ${ratios.totalP99}× (ms above)`,
    );
    console.log(
      `CPU per query (this process, p50): services ${a.cpuMs.p50.toFixed(2)} ms, one process ${b.cpuMs.p50.toFixed(2)} ms (${ratio(a.cpuMs.p50, b.cpuMs.p50)}×)`,
    );
    console.log(
      `one-process routing: ${[...routedTo].map(([tool, n]) => `${tool} ${n}`).join(', ')} (results per query: services ${a.meanResults.toFixed(2)}, one process ${b.meanResults.toFixed(2)})`,
    );
    const retrieval = { p50: percentile(retrievalMs, 50), p99: percentile(retrievalMs, 99) };
    const floor = retrieval.p50 + modelMs;
    const ttfrOverRetrievalPlusModel = {
      services: ratio(a.firstResult.p50, floor),
      oneProcess: ratio(b.firstResult.p50, floor),
    };
    console.log(
      `retrieval (one process) p50 ${retrieval.p50.toFixed(2)} ms; first result p50 / (retrieval p50 + ${modelMs} ms): services ${ttfrOverRetrievalPlusModel.services}×, one process ${ttfrOverRetrievalPlusModel.oneProcess}×`,
    );
    const out = join(fileURLToPath(new URL('.', import.meta.url)), 'results');
    mkdirSync(out, { recursive: true });
    const file = outFile ?? join(out, 'ask.json');
    writeFileSync(
      file,
      JSON.stringify(
        {
          bench: 'ask',
          date: new Date().toISOString(),
          rounds,
          warmupRounds,
          queries,
          cores: cpus().length,
          unit: 'ms',
          modelMs,
          services: a,
          oneProcess: b,
          ratios,
          retrieval,
          ttfrOverRetrievalPlusModel,
          oneProcessRouting: Object.fromEntries(routedTo),
        },
        null,
        2,
      ) + '\n',
    );
    console.log(`wrote ${file}`);
    if (profileDir) {
      // Each path alone, so each profile holds one path's work (the timed rounds above interleave).
      await profiled(profileDir, 'services', async () => {
        for (let r = 0; r < rounds; r++) for (const q of queries) await overHttp(running.url, q);
      });
      await profiled(profileDir, 'one-process', async () => {
        for (let r = 0; r < rounds; r++) for (const q of queries) await inProcess(runLocal, q);
      });
      console.log(`wrote ${profileDir}/services.cpuprofile and one-process.cpuprofile`);
    }
  } finally {
    await system.stop();
  }
}

await main();
