/**
 * bench:rank — ranking with a language model over real NATS: an OpenAI-compatible fake model
 * (real HTTP, 200 ms injected latency, answers computed by the local scorer), 1, 2 and 4
 * ranker replicas (each its own NATS connection and its own provider limit), one call per item
 * (NLWeb) and batches of 8 items per call, side by side in one run. Per query: time to first
 * result, total time and LLM calls. Writes bench/results/rank.json.
 *
 *   npm run bench:rank   (ASKBUS_BENCH_ROUNDS=2, ASKBUS_BENCH_LATENCY_MS=200, ASKBUS_LLM_CONCURRENCY=8)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { contracts, type RetrievedItem, type StoredItem } from '@askbus/contracts';
import { connectBus, startNatsServer, type Bus } from '@askbus/bus';
import { latencySummary, mean } from './stats';
import { loadDemoSites } from '@askbus/demo-data';
import { createLlm } from '@askbus/llm';
import { analyzeItem, parseQuery, scoreItem } from '@askbus/search-core';
import { startRanker, type RankerHandle } from '@askbus/ranker';
import { startRouter } from '@askbus/router';
import { startFakeLlm } from './fake-llm-server';

const queries: { site: string; query: string }[] = [
  { site: 'movies', query: 'westerns with clint eastwood' },
  { site: 'movies', query: 'science fiction movies by ridley scott' },
  { site: 'movies', query: 'funny animated films for kids' },
  { site: 'movies', query: 'highly rated dramas from the 1990s' },
  { site: 'cars', query: 'fuel efficient japanese cars' },
  { site: 'cars', query: 'powerful american v8 from the 1970s' },
];
const rounds = Number(process.env.ASKBUS_BENCH_ROUNDS ?? 2);
const latencyMs = Number(process.env.ASKBUS_BENCH_LATENCY_MS ?? 200);
const concurrency = Number(process.env.ASKBUS_LLM_CONCURRENCY ?? 8);
const numCandidates = 50;
const routerBatch = 10; // items per ranker call (the router's ASKBUS_RANK_BATCH)
const configs = [1, 2, 4].flatMap((replicas) => [1, 8].map((llmBatch) => ({ replicas, llmBatch })));

interface Sample {
  firstResultMs: number;
  totalMs: number;
  llmCalls: number;
  results: number;
}

/** The retriever's part, done once up front: the 50 best candidates of each query's site. */
function candidatesFor(): Map<string, RetrievedItem[]> {
  const sites = new Map(loadDemoSites().map((s) => [s.site, s.items]));
  const analyzed = new Map<string, { item: StoredItem; a: ReturnType<typeof analyzeItem> }[]>();
  for (const [site, items] of sites)
    analyzed.set(
      site,
      items.map((item) => ({ item, a: analyzeItem(item) })),
    );
  const out = new Map<string, RetrievedItem[]>();
  for (const { site, query } of queries) {
    const parsed = parseQuery(query);
    const ranked = analyzed
      .get(site)!
      .map(({ item, a }) => ({ ...item, retrievalScore: scoreItem(parsed, a).score }))
      .sort((x, y) => y.retrievalScore - x.retrievalScore)
      .slice(0, numCandidates);
    out.set(query, ranked);
  }
  return out;
}

async function main(): Promise<void> {
  const started = performance.now();
  const nats = await startNatsServer();
  const fake = await startFakeLlm({ latencyMs });
  const candidates = candidatesFor();
  const connect = (service: string): Promise<Bus> =>
    connectBus({ servers: nats.url, service, log: (level, msg) => level === 'error' && console.error(msg) });

  const retriever = await connect('retriever');
  retriever.serve(contracts.search, async (req) => ({ items: candidates.get(req.query) ?? [] }));
  const router = await connect('router');
  startRouter(router, { search: { rankBatchSize: routerBatch, numCandidates } });
  const caller = await connect('gateway');

  const results: Array<{
    replicas: number;
    llmBatch: number;
    firstResult: { p50: number; p99: number };
    total: { p50: number; p99: number };
    llmCallsPerQuery: number;
    resultsPerQuery: number;
    requestsPerReplica: number[];
    failures: number;
  }> = [];

  for (const { replicas, llmBatch } of configs) {
    const buses: Bus[] = [];
    const handles: RankerHandle[] = [];
    for (let i = 0; i < replicas; i++) {
      const bus = await connect('ranker');
      handles.push(
        startRanker(bus, {
          llm: createLlm({ provider: 'openai', baseURL: fake.baseURL, apiKey: 'bench', concurrency }),
          llmBatchSize: llmBatch,
        }),
      );
      buses.push(bus);
    }
    await Promise.all([...buses, retriever, router].map((b) => b.nc.flush()));

    const ask = async (site: string, query: string, queryId: string): Promise<Sample> => {
      const before = fake.requests;
      const t0 = performance.now();
      let firstResultMs = NaN;
      let count = 0;
      for await (const m of caller.stream(
        contracts.ask,
        { queryId, query, site: [site] },
        { timeoutMs: 60_000 },
      )) {
        if (m.message_type === 'result' && Array.isArray(m.content)) {
          if (Number.isNaN(firstResultMs)) firstResultMs = performance.now() - t0;
          count += m.content.length;
        }
        if (m.message_type === 'error') throw new Error(`${query}: ${m.error}`);
      }
      return {
        firstResultMs,
        totalMs: performance.now() - t0,
        llmCalls: fake.requests - before,
        results: count,
      };
    };

    await ask(queries[0]!.site, queries[0]!.query, `warm-${replicas}-${llmBatch}`); // connections, JIT
    for (const h of handles) h.stats.requests = 0;
    const samples: Sample[] = [];
    for (let r = 0; r < rounds; r++) {
      for (const [i, { site, query }] of queries.entries()) {
        samples.push(await ask(site, query, `b-${replicas}-${llmBatch}-${r}-${i}`));
      }
    }
    results.push({
      replicas,
      llmBatch,
      ...latencySummary(samples),
      llmCallsPerQuery: mean(samples.map((s) => s.llmCalls)),
      resultsPerQuery: mean(samples.map((s) => s.results)),
      requestsPerReplica: handles.map((h) => h.stats.requests),
      failures: handles.reduce((n, h) => n + h.llm.counters.failures, 0),
    });
    for (const b of buses) await b.drain(1_000);
  }

  const base = results[0]!;
  const fmt = (v: number, w = 7): string => (Number.isNaN(v) ? 'n/a' : v.toFixed(0)).padStart(w);
  const x = (a: number, b: number): string => `${(a / b).toFixed(2)}×`.padStart(7);
  console.log(
    `bench:rank — ${rounds} rounds × ${queries.length} queries, ${numCandidates} candidates, ${routerBatch} items per ranker call, ` +
      `fake LLM ${latencyMs} ms, provider concurrency ${concurrency} per replica, ${cpus().length} cores`,
  );
  console.log(
    'replicas  llm batch | first result p50    p99 |  total p50    p99 | LLM calls/query | results | vs 1×1 total | calls per replica',
  );
  for (const r of results) {
    console.log(
      `${String(r.replicas).padStart(8)}  ${String(r.llmBatch).padStart(9)} | ${fmt(r.firstResult.p50, 16)} ${fmt(r.firstResult.p99, 6)} | ` +
        `${fmt(r.total.p50, 10)} ${fmt(r.total.p99, 6)} | ${r.llmCallsPerQuery.toFixed(1).padStart(15)} | ${r.resultsPerQuery.toFixed(1).padStart(7)} | ` +
        `${x(base.total.p50, r.total.p50).padStart(12)} | ${r.requestsPerReplica.join('/')}${r.failures ? ` (${r.failures} LLM failures)` : ''}`,
    );
  }
  const out = join(fileURLToPath(new URL('.', import.meta.url)), 'results');
  mkdirSync(out, { recursive: true });
  const file = join(out, 'rank.json');
  writeFileSync(
    file,
    JSON.stringify(
      {
        bench: 'rank',
        date: new Date().toISOString(),
        rounds,
        queries,
        cores: cpus().length,
        unit: 'ms',
        fakeLlmLatencyMs: latencyMs,
        providerConcurrencyPerReplica: concurrency,
        numCandidates,
        itemsPerRankerCall: routerBatch,
        results,
        speedupTotalP50VsOneReplicaBatch1: Object.fromEntries(
          results.map((r) => [
            `${r.replicas}x${r.llmBatch}`,
            Math.round((base.total.p50 / r.total.p50) * 100) / 100,
          ]),
        ),
        fakeLlmRequests: fake.requests,
        runtimeMs: Math.round(performance.now() - started),
      },
      null,
      2,
    ) + '\n',
  );
  console.log(`wrote ${file} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  for (const b of [caller, router, retriever]) await b.drain(1_000);
  await fake.close();
  await nats.stop();
}

await main();
