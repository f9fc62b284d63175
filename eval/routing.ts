/**
 * eval:routing — tool selection on a labelled set over the demo sites (eval/routing.jsonl:
 * query → expected tool). Every tool of the site's item type is scored by the model (the local
 * deterministic provider, behind a per-call latency of 0.5–1.5 × ASKBUS_EVAL_LATENCY_MS fixed by
 * the prompt, so cancellation is real), with NLWeb's early termination (first score ≥ 90) and
 * without it. Prints accuracy, the confusions, and the LLM calls early termination saved.
 *
 *   npm run eval:routing
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Llm, LocalAdapter } from '@askbus/llm';
import { LatencyAdapter, jitteredLatency } from '@askbus/llm/testing';
import { defaultSelectionSettings, selectTools, type SelectionSettings } from '@askbus/router';
import { loadTools, toolsFor } from '@askbus/tools';

interface Case {
  site: string;
  query: string;
  expected: string;
}
const SITE_TYPES: Record<string, string> = { movies: 'Movie', cars: 'Car', all: 'Thing' };
const latencyMs = Number(process.env.ASKBUS_EVAL_LATENCY_MS ?? 40);

const file = fileURLToPath(new URL('./routing.jsonl', import.meta.url));
const cases = readFileSync(file, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as Case);
const config = loadTools();

async function run(settings: SelectionSettings) {
  const rows = await Promise.all(
    cases.map(async (c) => {
      const adapter = new LatencyAdapter(new LocalAdapter(), jitteredLatency(latencyMs));
      const llm = new Llm(adapter, { concurrency: 16 });
      const type = SITE_TYPES[c.site] ?? 'Thing';
      const { ranked, stats } = await selectTools(
        llm,
        toolsFor(config, c.site, type),
        c.query,
        type,
        new AbortController().signal,
        settings,
      );
      return {
        ...c,
        got: ranked[0]!.tool.name,
        score: ranked[0]!.score,
        stats,
        cancelled: adapter.cancelled,
      };
    }),
  );
  const correct = rows.filter((r) => r.got === r.expected).length;
  const sum = (f: (r: (typeof rows)[number]) => number) => rows.reduce((n, r) => n + f(r), 0);
  return {
    rows,
    accuracy: correct / rows.length,
    correct,
    calls: sum((r) => r.stats.calls),
    answered: sum((r) => r.stats.completed),
    saved: sum((r) => r.stats.saved),
    meanMs: sum((r) => r.stats.elapsedMs) / rows.length,
  };
}

const early = await run(defaultSelectionSettings);
const full = await run({ ...defaultSelectionSettings, earlyStop: null });

const byTool = new Map<string, { n: number; ok: number }>();
for (const r of early.rows) {
  const t = byTool.get(r.expected) ?? { n: 0, ok: 0 };
  t.n++;
  if (r.got === r.expected) t.ok++;
  byTool.set(r.expected, t);
}
console.log(
  `routing eval: ${cases.length} queries over ${[...new Set(cases.map((c) => c.site))].join(', ')}`,
);
console.log(
  `accuracy ${(early.accuracy * 100).toFixed(1)}% (${early.correct}/${cases.length}); without early termination ${(full.accuracy * 100).toFixed(1)}%`,
);
for (const [tool, { n, ok }] of byTool) console.log(`  ${tool.padEnd(10)} ${ok}/${n}`);
for (const r of early.rows.filter((x) => x.got !== x.expected)) {
  console.log(`  miss: [${r.site}] "${r.query}" → ${r.got} (${r.score}), expected ${r.expected}`);
}
console.log(
  `LLM calls: ${early.calls} started; early termination at ≥ ${defaultSelectionSettings.earlyStop} cancelled ${early.saved} (${((100 * early.saved) / early.calls).toFixed(1)}%) before they answered; answers waited for: ${early.answered} vs ${full.answered} without it`,
);
console.log(
  `mean selection time at ${latencyMs} ms ± 50% per call: ${early.meanMs.toFixed(1)} ms with early termination, ${full.meanMs.toFixed(1)} ms without`,
);
