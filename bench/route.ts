/**
 * bench:route — tool selection with and without early termination, side by side, against an
 * OpenAI-compatible fake model over real HTTP (bench/fake-llm-server.ts: ASKBUS_BENCH_LATENCY_MS
 * injected per answer, answers computed by the local provider from the task in the prompt) plus a
 * per-call jitter of 0–100 % of that latency fixed by the prompt (real models do not answer in
 * lockstep). Every tool of the site's type is scored at once; with early termination the first
 * score ≥ 90 cancels the rest (their HTTP requests are aborted). Per query: selection latency,
 * scoring calls started, answered, cancelled, and requests the model server saw.
 * Writes bench/results/route.json.
 *
 *   npm run bench:route   (ASKBUS_BENCH_ROUNDS=2, ASKBUS_BENCH_LATENCY_MS=150)
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLlm, Llm, type AdapterRequest } from '@askbus/llm';
import { LatencyAdapter, jitteredLatency } from '@askbus/llm/testing';
import { defaultSelectionSettings, selectTools, type SelectionSettings } from '@askbus/router';
import { loadTools, toolsFor } from '@askbus/tools';
import { startFakeLlm } from './fake-llm-server';

const rounds = Number(process.env.ASKBUS_BENCH_ROUNDS ?? 2);
const latencyMs = Number(process.env.ASKBUS_BENCH_LATENCY_MS ?? 150);
const SITE_TYPES: Record<string, string> = { movies: 'Movie', cars: 'Car', all: 'Thing' };
const cases = readFileSync(fileURLToPath(new URL('../eval/routing.jsonl', import.meta.url)), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as { site: string; query: string; expected: string });

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 10) / 10;
};

async function main(): Promise<void> {
  const fake = await startFakeLlm({ latencyMs });
  const config = loadTools();
  // jitteredLatency(x) is 0.5–1.5 × x; with x = latency / 2, 2 × it − latency / 2 is 0–1 × latency.
  const jitter = jitteredLatency(latencyMs / 2);
  const extra = (req: AdapterRequest): number => Math.max(0, 2 * jitter(req) - latencyMs / 2);
  const variants: { name: string; settings: SelectionSettings }[] = [
    { name: 'early_termination', settings: defaultSelectionSettings },
    { name: 'no_early_termination', settings: { ...defaultSelectionSettings, earlyStop: null } },
  ];
  const out: Record<string, unknown>[] = [];
  for (const { name, settings } of variants) {
    const samples: {
      ms: number;
      calls: number;
      answered: number;
      saved: number;
      serverRequests: number;
      ok: boolean;
    }[] = [];
    for (let round = 0; round < rounds; round++) {
      // One query at a time, so each latency is its own.
      for (const c of cases) {
        const adapter = new LatencyAdapter(
          createLlm({ provider: 'openai', baseURL: fake.baseURL, apiKey: 'bench', concurrency: 16 }).adapter,
          extra,
        );
        const llm = new Llm(adapter, { concurrency: 16, maxRetries: 0 });
        const type = SITE_TYPES[c.site] ?? 'Thing';
        const before = fake.requests;
        const t0 = performance.now();
        const { ranked, stats } = await selectTools(
          llm,
          toolsFor(config, c.site, type),
          c.query,
          type,
          new AbortController().signal,
          settings,
        );
        const ms = performance.now() - t0;
        await new Promise((r) => setTimeout(r, 5));
        samples.push({
          ms,
          calls: stats.calls,
          answered: stats.completed,
          saved: stats.saved,
          serverRequests: fake.requests - before,
          ok: ranked[0]!.tool.name === c.expected,
        });
      }
    }
    const sum = (f: (s: (typeof samples)[number]) => number): number => samples.reduce((n, s) => n + f(s), 0);
    const row = {
      variant: name,
      queries: samples.length,
      latencyMs: {
        p50: pct(
          samples.map((s) => s.ms),
          50,
        ),
        p90: pct(
          samples.map((s) => s.ms),
          90,
        ),
        mean: Math.round((sum((s) => s.ms) / samples.length) * 10) / 10,
      },
      callsStartedPerQuery: Math.round((sum((s) => s.calls) / samples.length) * 100) / 100,
      answersWaitedForPerQuery: Math.round((sum((s) => s.answered) / samples.length) * 100) / 100,
      callsCancelledPerQuery: Math.round((sum((s) => s.saved) / samples.length) * 100) / 100,
      modelRequestsPerQuery: Math.round((sum((s) => s.serverRequests) / samples.length) * 100) / 100,
      accuracy: Math.round((sum((s) => (s.ok ? 1 : 0)) / samples.length) * 1000) / 1000,
    };
    out.push(row);
    console.log(JSON.stringify(row));
  }
  await fake.close();
  const result = {
    benchmark: 'route',
    date: new Date().toISOString(),
    node: process.version,
    injectedLatencyMs: latencyMs,
    jitter: 'each call waits latency + 0–100 % of it, fixed by the prompt',
    rounds,
    queries: cases.length,
    results: out,
  };
  const dir = fileURLToPath(new URL('./results', import.meta.url));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'route.json'), `${JSON.stringify(result, null, 2)}\n`);
  console.log(`wrote ${join(dir, 'route.json')}`);
}

await main();
