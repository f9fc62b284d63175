/**
 * eval:answers — answer quality per site, judged against the data's own fields.
 *
 * Starts the whole system as `npm run up` does (own nats-server, every service, the demo sites
 * movies and cars, the embedded retriever, no LLM), loads two sites of kinds the demo never had
 * (penguins: Observations; earthquakes: Events) with `askbus load`, asks every question of
 * eval/answers/<site>.jsonl over REST /ask (streaming=false) and prints, per site and overall,
 * precision@5 on constraint questions, routing accuracy, and item accuracy for details and
 * compare questions. Writes eval/results/answers.json and answers.md. It measures; it exits 0
 * whatever the numbers.
 *
 *   npm run eval:answers                       all sites, all questions
 *   npm run eval:answers -- --site penguins    one site (repeatable), printing every miss
 *   npm run eval:answers -- --kind details     one kind, printing every miss
 *   npm run eval:answers -- --verbose          every miss of a full run
 *   npm run eval:answers -- --check            no system: each question's relevant rows
 *   npm run eval:answers -- --use-env          keep ASKBUS_LLM_* / ASKBUS_EMBEDDINGS / backend from the environment
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pLimit from 'p-limit';
import { z } from 'zod';
import { KINDS, readQuestions, type Question } from './answers/questions';
import { markdown, missText, routingByKindText, textTable, type SiteResult } from './answers/report';
import {
  expectedFor,
  isMiss,
  judge,
  problemsOf,
  readAnswer,
  summarize,
  type Expected,
} from './answers/score';
import { SITES, type EvalSite } from './answers/sites/index';

const here = fileURLToPath(new URL('.', import.meta.url));

const Args = z.object({
  site: z.array(z.enum(Object.keys(SITES) as [string, ...string[]])).default([]),
  kind: z.array(z.enum(KINDS)).default([]),
  verbose: z.boolean().default(false),
  check: z.boolean().default(false),
  'use-env': z.boolean().default(false),
  concurrency: z.coerce.number().int().min(1).max(16).default(2),
  out: z.string().optional(),
});

function parseCli(): z.infer<typeof Args> {
  const { values } = parseArgs({
    options: {
      site: { type: 'string', multiple: true },
      kind: { type: 'string', multiple: true },
      verbose: { type: 'boolean' },
      check: { type: 'boolean' },
      'use-env': { type: 'boolean' },
      concurrency: { type: 'string' },
      out: { type: 'string' },
    },
  });
  const split = (xs: string[] | undefined) => xs?.flatMap((x) => x.split(',')).filter(Boolean);
  const args = Args.safeParse({ ...values, site: split(values.site), kind: split(values.kind) });
  if (!args.success) {
    console.error(`eval:answers: ${z.prettifyError(args.error)}`);
    process.exit(2);
  }
  return args.data;
}

interface Prepared {
  site: EvalSite;
  questions: Array<{ q: Question; expected: Expected }>;
}

/** Sites and their questions, each question's predicates resolved to item URLs; stops on a bad set. */
function prepare(args: z.infer<typeof Args>): Prepared[] {
  const names = args.site.length ? args.site : Object.keys(SITES);
  const problems: string[] = [];
  const prepared = names.map((name) => {
    const site = SITES[name]!();
    const questions = readQuestions(join(here, 'answers', `${name}.jsonl`))
      .filter((q) => args.kind.length === 0 || args.kind.includes(q.kind))
      .map((q) => {
        const expected = expectedFor(q, site.records, site.readDate ? { readDate: site.readDate } : {});
        problems.push(...problemsOf(q, expected).map((p) => `${name} ${p}`));
        return { q, expected };
      });
    return { site, questions };
  });
  if (problems.length) {
    console.error(`eval:answers: questions that cannot be judged:\n  ${problems.join('\n  ')}`);
    process.exit(2);
  }
  return prepared;
}

function printCheck(prepared: Prepared[]): void {
  for (const { site, questions } of prepared) {
    console.log(`${site.site}: ${site.records.length} items, ${questions.length} questions`);
    for (const { q, expected } of questions) {
      const sizes = expected.relevant
        ? `${expected.relevant.size} relevant`
        : expected.items
          ? expected.items.map((s) => (s.size === 1 ? '1 item' : `${s.size} items`)).join(' + ')
          : '';
      const named =
        expected.items?.map((s) => site.records.find((r) => s.has(r.url))?.name).join(' | ') ?? '';
      console.log(
        `  ${q.id.padEnd(5)} ${q.kind.padEnd(10)} ${sizes.padEnd(14)} ${q.query}${named ? `  → ${named}` : ''}`,
      );
    }
  }
}

async function run(args: z.infer<typeof Args>, prepared: Prepared[]): Promise<void> {
  const { startSystem, loadWithCli, ask } = await import('./answers/system');
  if (!args['use-env']) {
    for (const v of ['ASKBUS_LLM_PROVIDER', 'ASKBUS_EMBEDDINGS', 'ASKBUS_RETRIEVER_BACKEND'])
      delete process.env[v];
  }
  // The router then names the tool it chose (NLWeb's tool_selection), for the miss listing.
  process.env.ASKBUS_ROUTER_DEBUG = '1';
  const t0 = performance.now();
  const system = await startSystem();
  const dir = mkdtempSync(join(tmpdir(), 'askbus-eval-answers-'));
  const results: SiteResult[] = [];
  try {
    for (const { site } of prepared) {
      if (!site.items) continue;
      const out = await loadWithCli(system.natsUrl, dir, site.site, site.items);
      console.log(out.split('\n')[0]);
    }
    const limit = pLimit(args.concurrency);
    for (const { site, questions } of prepared) {
      const outcomes = await Promise.all(
        questions.map(({ q, expected }) =>
          limit(async () =>
            judge(q, expected, readAnswer(await ask(system.running.url, site.site, q.query))),
          ),
        ),
      );
      results.push({ site: site.site, summary: summarize(outcomes), outcomes });
    }
  } finally {
    await system.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const seconds = (performance.now() - t0) / 1000;
  const overall = summarize(results.flatMap((r) => r.outcomes));
  const filtered = args.site.length > 0 || args.kind.length > 0;

  if (filtered || args.verbose) {
    for (const r of results) for (const o of r.outcomes.filter(isMiss)) console.log(missText(r.site, o));
    console.log('');
  }
  console.log(textTable(results, overall));
  console.log(`routing by kind:\n${routingByKindText(results)}`);
  console.log(`${overall.questions} questions in ${seconds.toFixed(0)} s`);

  const meta = {
    date: new Date().toISOString(),
    system: args['use-env']
      ? 'askbus up with the environment’s settings'
      : 'askbus up defaults: embedded retriever, local (no LLM)',
    questions: `${overall.questions} (${filtered ? `filtered: ${[...args.site, ...args.kind].join(', ')}` : 'all'})`,
    seconds: seconds.toFixed(0),
  };
  const out = args.out ?? (filtered ? undefined : join(here, 'results', 'answers.json'));
  if (!out) {
    console.log('a filtered run: results not written (give --out FILE to keep them)');
    return;
  }
  mkdirSync(join(out, '..'), { recursive: true });
  writeFileSync(out, `${JSON.stringify({ ...meta, overall, sites: results }, null, 2)}\n`);
  writeFileSync(out.replace(/\.json$/, '') + '.md', markdown(results, overall, meta));
  console.log(`wrote ${out} and ${out.replace(/\.json$/, '')}.md`);
}

const args = parseCli();
const prepared = prepare(args);
if (args.check) printCheck(prepared);
else await run(args, prepared);
process.exit(0);
