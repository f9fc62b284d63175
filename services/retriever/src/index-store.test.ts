import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredItem } from '@askbus/contracts';
import { loadDemoSites } from '@askbus/demo-data';
import { IndexStore, StoreInputError } from './index-store';

const demo = loadDemoSites();
const movies = demo.find((s) => s.site === 'movies')!.items;
const cars = demo.find((s) => s.site === 'cars')!.items;

const item = (site: string, slug: string, type: string, schema: Record<string, unknown>): StoredItem => ({
  url: `https://${site}.example/${slug}`,
  name: String(schema.name ?? slug),
  site,
  '@type': type,
  schema_object: { '@context': 'https://schema.org', '@type': type, ...schema },
});

describe('IndexStore over the demo sites', () => {
  let store: IndexStore;
  beforeAll(async () => {
    store = await IndexStore.open();
    store.upsert('movies', movies);
    store.upsert('cars', cars);
  });

  it('finds Pale Rider and High Plains Drifter in the top 10 for "westerns with clint eastwood"', () => {
    const found = store.search({ query: 'westerns with clint eastwood', site: ['movies'], numResults: 10 });
    expect(found.length).toBe(10);
    const names = found.map((r) => r.name);
    expect(names).toContain('Pale Rider');
    expect(names).toContain('High Plains Drifter');
    // best first, each with its retrieval score
    for (let i = 1; i < found.length; i++) {
      expect(found[i]!.retrievalScore).toBeLessThanOrEqual(found[i - 1]!.retrievalScore);
    }
  });

  it('filters by site, by "all" and by type', () => {
    expect(store.search({ query: 'japanese cars', site: ['movies'] }).every((r) => r.site === 'movies')).toBe(
      true,
    );
    const any = store.search({ query: 'ford', site: ['all'], numResults: 200 });
    expect(new Set(any.map((r) => r.site))).toEqual(new Set(['movies', 'cars']));
    const onlyCars = store.search({ query: 'ford', site: ['all'], types: ['Car'], numResults: 200 });
    expect(onlyCars.length).toBeGreaterThan(0);
    expect(onlyCars.every((r) => r['@type'] === 'Car')).toBe(true);
    expect(store.search({ query: 'ford', site: ['nowhere'] })).toEqual([]);
  });

  it('puts items of a type the query names first when searching every site', () => {
    const found = store.search({ query: 'ford cars', site: ['all'], numResults: 20 });
    expect(found.every((r) => r['@type'] === 'Car')).toBe(true);
    const films = store.search({ query: 'ford movies', site: ['all'], numResults: 3 });
    expect(films.every((r) => r['@type'] === 'Movie')).toBe(true);
  });

  it("raises items whose numbers fit the query's intent", () => {
    const found = store.search({ query: 'fuel efficient japanese cars', site: ['cars'], numResults: 10 });
    expect(found).toHaveLength(10);
    for (const r of found) {
      expect((r.schema_object.countryOfOrigin as { name: string }).name).toBe('Japan');
      expect((r.schema_object.fuelEfficiency as { value: number }).value).toBeGreaterThanOrEqual(30);
    }
  });

  it('respects numResults, tolerates typos, and returns nothing for a query of punctuation', () => {
    expect(store.search({ query: 'comedy', site: ['movies'], numResults: 3 })).toHaveLength(3);
    expect(store.search({ query: 'eastwod', site: ['movies'], numResults: 5 }).map((r) => r.name)).toContain(
      'Pale Rider',
    );
    expect(store.search({ query: '?!', site: ['all'] })).toEqual([]);
  });

  it('lists sites with item counts and types', () => {
    expect(store.sites()).toEqual([
      { name: 'cars', itemCount: 406, types: ['Car'] },
      { name: 'movies', itemCount: 3200, types: ['Movie'] },
    ]);
  });
});

describe('IndexStore upsert', () => {
  it('replaces by URL: loading the same items twice leaves the same count and the newest content', async () => {
    const store = await IndexStore.open();
    const a = item('s', 'a', 'Thing', { name: 'Alpha gadget' });
    const b = item('s', 'b', 'Thing', { name: 'Beta gadget' });
    expect(store.upsert('s', [a, b])).toEqual({ upserted: 2, total: 2 });
    expect(store.upsert('s', [a, b])).toEqual({ upserted: 2, total: 2 });
    const renamed = {
      ...a,
      name: 'Gamma widget',
      schema_object: { ...a.schema_object, name: 'Gamma widget' },
    };
    expect(store.upsert('s', [renamed, renamed])).toEqual({ upserted: 1, total: 2 });
    expect(store.search({ query: 'alpha', site: ['s'] })).toEqual([]);
    expect(store.search({ query: 'widget', site: ['s'] }).map((r) => r.url)).toEqual([a.url]);
    expect(store.sites()).toEqual([{ name: 's', itemCount: 2, types: ['Thing'] }]);
  });

  it('refuses items of another site', async () => {
    const store = await IndexStore.open();
    expect(() => store.upsert('s', [item('t', 'x', 'Thing', {})])).toThrow(StoreInputError);
    expect(store.size).toBe(0);
  });
});

describe('IndexStore persistence', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'askbus-retriever-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reopens from disk without re-indexing, with the same answers', async () => {
    const first = await IndexStore.open({ dataDir: dir });
    expect(first.openedFrom).toBe('empty');
    first.upsert('cars', cars);
    await first.persist();
    expect(readdirSync(dir).sort()).toEqual(['index.json', 'items.json']); // no temp files left

    const second = await IndexStore.open({ dataDir: dir });
    expect(second.openedFrom).toBe('disk');
    expect(second.sites()).toEqual(first.sites());
    const q = { query: 'fast american cars', site: ['cars'], numResults: 20 };
    expect(second.search(q)).toEqual(first.search(q));

    // upserts after reopening keep working on the loaded index
    second.upsert('cars', cars.slice(0, 5));
    expect(second.size).toBe(406);
  });

  it('re-indexes from items.json when index.json is missing or does not match', async () => {
    writeFileSync(join(dir, 'index.json'), '{"broken":');
    const store = await IndexStore.open({ dataDir: dir });
    expect(store.openedFrom).toBe('rebuilt');
    expect(store.size).toBe(406);
    expect(store.search({ query: 'honda civic', site: ['cars'], numResults: 1 })[0]!.name).toMatch(
      /Honda Civic/,
    );
    // the rebuilt index was written back, so the next open is from disk again
    expect((await IndexStore.open({ dataDir: dir })).openedFrom).toBe('disk');
  });

  it('refuses to start on a damaged items.json rather than silently starting empty', async () => {
    const bad = mkdtempSync(join(tmpdir(), 'askbus-retriever-bad-'));
    try {
      writeFileSync(join(bad, 'items.json'), JSON.stringify({ format: 1, items: [{ nope: true }] }));
      await expect(IndexStore.open({ dataDir: bad })).rejects.toThrow(
        /items\.json is not a readable askbus index/,
      );
    } finally {
      rmSync(bad, { recursive: true, force: true });
    }
  });

  it('serializes concurrent writes and keeps the files consistent', async () => {
    const store = await IndexStore.open({ dataDir: dir });
    const few = movies.slice(0, 50);
    store.upsert('movies', few);
    await Promise.all([store.persist(), store.persist(), store.persist()]);
    const saved = JSON.parse(readFileSync(join(dir, 'items.json'), 'utf8')) as { items: unknown[] };
    expect(saved.items).toHaveLength(456);
    expect((await IndexStore.open({ dataDir: dir })).openedFrom).toBe('disk');
  });
});
