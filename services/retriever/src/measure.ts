/**
 * Measures the embedded store at a size: `tsx services/retriever/src/measure.ts <items> <dataDir>`
 * loads that many synthetic items (synthetic.ts) in batches, persists, times 20 questions (plain
 * and understood) through `searchWithOutcome`, and prints JSON: load time, search p50/p99,
 * bytes on disk, RSS. With `--reopen` it only opens the directory and measures the open and
 * the searches (run it in a fresh process to see a restart).
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Lexicon, parseQuestion, SiteModel } from '@askbus/understand';
import { WordNet } from '@askbus/embeddings';
import type { StoredItem, Understanding } from '@askbus/contracts';
import { IndexStore } from './index-store';
import { syntheticItems } from './synthetic';

const PLAIN: Array<[string, string]> = [
  ['westerns with clint eastwood', 'movies'],
  ['fast american cars', 'cars'],
  ['frightening films', 'movies'],
  ['cartoon for toddlers', 'movies'],
  ['honda civic', 'cars'],
  ['romantic comedy in paris', 'movies'],
  ['science fiction space adventure', 'movies'],
  ['toyota', 'cars'],
  ['movies about war', 'movies'],
  ['crime thriller', 'movies'],
  ['the godfather', 'movies'],
  ['action movies with explosions', 'all'],
];
const UNDERSTOOD: Array<[string, string]> = [
  ['best rated dramas from the 90s', 'movies'],
  ['japanese cars heavier than 3000 pounds', 'cars'],
  ['most fuel efficient cars', 'cars'],
  ['comedies from 2005', 'movies'],
  ['horror movies rated R', 'movies'],
  ['cars with more than 150 horsepower', 'cars'],
  ['european cars from 1980', 'cars'],
  ['highest grossing movies', 'movies'],
];

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};
const mb = (bytes: number): number => Math.round(bytes / 1e5) / 10;

function dirBytes(dir: string): number {
  return readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
}

async function timeSearches(
  store: IndexStore,
): Promise<{ p50: number; p99: number; mean: number; perQuery: Record<string, number> }> {
  const lexicon = new Lexicon(WordNet.get());
  const models = new Map<string, SiteModel>();
  const understand = (q: string, site: string): Understanding => {
    let model = models.get(site);
    if (!model) models.set(site, (model = new SiteModel([store.catalog.profile(site)!], lexicon)));
    return parseQuestion(q, { model, names: store.findNames(q, [site]), now: new Date('2026-12-03') });
  };
  const asks = [
    ...PLAIN.map(([q, site]) => ({ query: q, site: [site] })),
    ...UNDERSTOOD.map(([q, site]) => ({ query: q, site: [site], understanding: understand(q, site) })),
  ];
  for (const a of asks) await store.searchWithOutcome({ ...a, numResults: 50 }); // warm up
  const times: number[] = [];
  const each = new Map<string, number[]>();
  for (let round = 0; round < 5; round++) {
    for (const a of asks) {
      const t = performance.now();
      await store.searchWithOutcome({ ...a, numResults: 50 });
      const ms = performance.now() - t;
      times.push(ms);
      each.set(a.query, [...(each.get(a.query) ?? []), ms]);
    }
  }
  const r = (x: number): number => Math.round(x * 100) / 100;
  return {
    p50: r(quantile(times, 0.5)),
    p99: r(quantile(times, 0.99)),
    mean: r(times.reduce((a, b) => a + b) / times.length),
    perQuery: Object.fromEntries([...each].map(([q, ms]) => [q, r(quantile(ms, 0.5))])),
  };
}

/** Upserts in batches of 2,000, one site at a time (as `askbus load` sends them). */
async function load(store: IndexStore, items: readonly StoredItem[]): Promise<void> {
  for (let i = 0; i < items.length; i += 2_000) {
    const bySite = new Map<string, StoredItem[]>();
    for (const it of items.slice(i, i + 2_000)) bySite.set(it.site, [...(bySite.get(it.site) ?? []), it]);
    for (const [site, list] of bySite) await store.upsert(site, list);
  }
}

async function main(): Promise<void> {
  const [nArg, dir, flag] = process.argv.slice(2);
  if (!nArg || !dir) throw new Error('usage: measure.ts <items> <dataDir> [--reopen]');
  const n = Number(nArg);
  const out: Record<string, unknown> = { items: n };
  if (flag === '--reopen') {
    const t = performance.now();
    const store = await IndexStore.open({ dataDir: dir });
    out.reopenSeconds = Math.round(performance.now() - t) / 1000;
    out.openedFrom = store.openedFrom;
    out.size = store.size;
    out.search = await timeSearches(store);
    out.rssMB = mb(process.memoryUsage().rss);
    await store.close();
  } else {
    const items = syntheticItems(n);
    const t = performance.now();
    const store = await IndexStore.open({ dataDir: dir });
    await load(store, items);
    out.loadSeconds = Math.round(performance.now() - t) / 1000;
    const p = performance.now();
    await store.persist();
    out.persistSeconds = Math.round(performance.now() - p) / 1000;
    out.search = await timeSearches(store);
    out.rssMB = mb(process.memoryUsage().rss);
    out.diskMB = mb(dirBytes(dir));
    // a small load into the big store: what one more persist writes
    const before = dirBytes(dir);
    await load(store, syntheticItems(n + 100).slice(n));
    const s = performance.now();
    await store.persist();
    out.smallPersist = {
      seconds: Math.round(performance.now() - s) / 1000,
      diskGrowthMB: mb(dirBytes(dir) - before),
    };
    await store.close();
  }
  console.log(JSON.stringify(out));
}

await main();
