/**
 * eval:retrieval — how well the embedded index finds what the data says is relevant.
 *
 * Loads the demo sites into an in-memory IndexStore (the local WordNet embeddings) and asks
 * every question of eval/retrieval/queries.ts (relevance: a test on each item's fields) three
 * ways: keyword only, vector only, hybrid (what searches use). Prints and writes recall@50 and
 * nDCG@10 per way (eval/results/retrieval.json and .md). Then the approximate vector graph
 * against an exact scan of every vector, on the demo data and on synthetic items (distinct
 * copies of the demo items, `--synthetic N`, default 20,000): the relevance recall@50 of each
 * (the loss must stay within 0.02) and the share of the exact top 50 the graph finds. It
 * measures; it exits 0 whatever the numbers.
 *
 *   npm run eval:retrieval
 *   npm run eval:retrieval -- --synthetic 0     demo data only
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { loadDemoSites } from '@askbus/demo-data';
import type { StoredItem } from '@askbus/contracts';
import { IndexStore, syntheticItems } from '@askbus/retriever';
import { QUERIES } from './retrieval/queries';

const here = fileURLToPath(new URL('.', import.meta.url));
const Args = z.object({ synthetic: z.coerce.number().int().min(0).max(1_000_000).default(20_000) });

type Way = 'keyword' | 'vector' | 'hybrid';
const WAYS: Way[] = ['keyword', 'vector', 'hybrid'];

/** Share of the relevant items (at most k of them) in the first k. */
export function recallAt(ranked: readonly string[], relevant: ReadonlySet<string>, k: number): number {
  if (relevant.size === 0) return 0;
  const found = ranked.slice(0, k).filter((u) => relevant.has(u)).length;
  return found / Math.min(k, relevant.size);
}

/** nDCG with binary gains over the first k. */
export function ndcgAt(ranked: readonly string[], relevant: ReadonlySet<string>, k: number): number {
  let dcg = 0;
  ranked.slice(0, k).forEach((u, i) => {
    if (relevant.has(u)) dcg += 1 / Math.log2(i + 2);
  });
  let ideal = 0;
  for (let i = 0; i < Math.min(k, relevant.size); i++) ideal += 1 / Math.log2(i + 2);
  return ideal === 0 ? 0 : dcg / ideal;
}

const mean = (xs: readonly number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
const r3 = (x: number): number => Math.round(x * 1000) / 1000;

async function ranksOf(store: IndexStore, way: Way, query: string, site: string): Promise<string[]> {
  if (way === 'keyword') return store.keywordRanks(query, [site], 50);
  if (way === 'vector') return store.vectorRanks(query, [site], 50);
  return (await store.search({ query, site: [site], numResults: 50 })).map((r) => r.url);
}

/** What the graph loses against the exact scan, over the questions. */
interface AnnResult {
  items: number;
  queries: number;
  /** recall@50 of the relevant items (the questions' tests), exact scan and graph. */
  relevanceRecallExact: number;
  relevanceRecallGraph: number;
  /** Share of the exact top 50 that the graph's top 50 has (the nearest neighbours found). */
  neighbourRecall: number;
}

async function annRecall(store: IndexStore, items: readonly StoredItem[]): Promise<AnnResult> {
  const exactRecalls: number[] = [];
  const graphRecalls: number[] = [];
  const overlaps: number[] = [];
  for (const q of QUERIES) {
    const relevant = new Set(items.filter((i) => i.site === q.site && q.isRelevant(i)).map((i) => i.url));
    const exact = await store.vectorRanks(q.query, [q.site], 50, 'exact');
    const graph = await store.vectorRanks(q.query, [q.site], 50, 'graph');
    exactRecalls.push(recallAt(exact, relevant, 50));
    graphRecalls.push(recallAt(graph, relevant, 50));
    if (exact.length) overlaps.push(recallAt(graph, new Set(exact), 50));
  }
  return {
    items: store.size,
    queries: QUERIES.length,
    relevanceRecallExact: r3(mean(exactRecalls)),
    relevanceRecallGraph: r3(mean(graphRecalls)),
    neighbourRecall: r3(mean(overlaps)),
  };
}

async function loadInto(store: IndexStore, items: readonly StoredItem[]): Promise<void> {
  const bySite = new Map<string, StoredItem[]>();
  for (const it of items) bySite.set(it.site, [...(bySite.get(it.site) ?? []), it]);
  for (const [site, list] of bySite)
    for (let i = 0; i < list.length; i += 2_000) await store.upsert(site, list.slice(i, i + 2_000));
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { synthetic: { type: 'string' } } });
  const args = Args.parse(values);
  const demo = loadDemoSites().flatMap((s) => s.items);
  const store = await IndexStore.open();
  await loadInto(store, demo);

  const perQuery: Array<Record<string, unknown>> = [];
  const scores: Record<Way, { recall50: number[]; ndcg10: number[] }> = {
    keyword: { recall50: [], ndcg10: [] },
    vector: { recall50: [], ndcg10: [] },
    hybrid: { recall50: [], ndcg10: [] },
  };
  for (const q of QUERIES) {
    const relevant = new Set(demo.filter((i) => i.site === q.site && q.isRelevant(i)).map((i) => i.url));
    const row: Record<string, unknown> = {
      query: q.query,
      site: q.site,
      relevant: q.relevant,
      count: relevant.size,
    };
    for (const way of WAYS) {
      const ranked = await ranksOf(store, way, q.query, q.site);
      const rec = recallAt(ranked, relevant, 50);
      const nd = ndcgAt(ranked, relevant, 10);
      scores[way].recall50.push(rec);
      scores[way].ndcg10.push(nd);
      row[way] = { recall50: r3(rec), ndcg10: r3(nd) };
    }
    perQuery.push(row);
  }
  const summary = Object.fromEntries(
    WAYS.map((w) => [w, { recall50: r3(mean(scores[w].recall50)), ndcg10: r3(mean(scores[w].ndcg10)) }]),
  ) as Record<Way, { recall50: number; ndcg10: number }>;

  const ann: Record<string, AnnResult> = { demo: await annRecall(store, demo) };
  if (args.synthetic > 0) {
    const big = await IndexStore.open();
    const items = syntheticItems(args.synthetic);
    await loadInto(big, items);
    ann.synthetic = await annRecall(big, items);
  }

  const result = { queries: QUERIES.length, items: store.size, summary, ann, perQuery };
  const dir = join(here, 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'retrieval.json'), `${JSON.stringify(result, null, 2)}\n`);
  const md = [
    '# eval:retrieval',
    '',
    `${QUERIES.length} questions over the demo sites (${store.size} items); relevant items are those whose fields pass the question's test (eval/retrieval/queries.ts).`,
    '',
    '| way | recall@50 | nDCG@10 |',
    '| --- | --- | --- |',
    ...WAYS.map((w) => `| ${w} | ${summary[w].recall50} | ${summary[w].ndcg10} |`),
    '',
    'Approximate (HNSW graph, forced even where searches scan small sets exactly) against exact vector search,',
    'vector only: recall@50 of the relevant items each way, and the share of the exact top 50 the graph finds.',
    '',
    '| data | items | relevance R@50 exact | relevance R@50 graph | loss | neighbour recall@50 |',
    '| --- | --- | --- | --- | --- | --- |',
    ...Object.entries(ann).map(
      ([k, v]) =>
        `| ${k} | ${v.items} | ${v.relevanceRecallExact} | ${v.relevanceRecallGraph} | ${r3(v.relevanceRecallExact - v.relevanceRecallGraph)} | ${v.neighbourRecall} |`,
    ),
    '',
    '| question | relevant | keyword R@50 / nDCG@10 | vector | hybrid |',
    '| --- | --- | --- | --- | --- |',
    ...perQuery.map((p) => {
      const cell = (w: Way): string => {
        const s = p[w] as { recall50: number; ndcg10: number };
        return `${s.recall50} / ${s.ndcg10}`;
      };
      return `| ${String(p.query)} | ${String(p.relevant)} (${String(p.count)}) | ${cell('keyword')} | ${cell('vector')} | ${cell('hybrid')} |`;
    }),
    '',
  ].join('\n');
  writeFileSync(join(dir, 'retrieval.md'), md);
  console.log(md);
}

await main();
