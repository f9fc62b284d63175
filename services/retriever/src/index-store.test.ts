import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Understanding, type StoredItem } from '@askbus/contracts';
import type { EmbeddingProvider } from '@askbus/embeddings';
import { loadDemoSites } from '@askbus/demo-data';
import { IndexStore, StoreInputError } from './index-store';
import { packSections, unpackSections } from './segments';

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
    await store.upsert('movies', movies);
    await store.upsert('cars', cars);
  });

  it('finds Pale Rider and High Plains Drifter in the top 10 for "westerns with clint eastwood"', async () => {
    const found = await store.search({
      query: 'westerns with clint eastwood',
      site: ['movies'],
      numResults: 10,
    });
    expect(found.length).toBe(10);
    const names = found.map((r) => r.name);
    expect(names).toContain('Pale Rider');
    expect(names).toContain('High Plains Drifter');
    // best first, each with its retrieval score
    for (let i = 1; i < found.length; i++) {
      expect(found[i]!.retrievalScore).toBeLessThanOrEqual(found[i - 1]!.retrievalScore);
    }
  });

  it('keeps "westerns with clint eastwood" → Pale Rider and High Plains Drifter in the top 2 (hybrid)', async () => {
    const found = await store.search({
      query: 'westerns with clint eastwood',
      site: ['movies'],
      numResults: 2,
    });
    expect(found.map((r) => r.name).sort()).toEqual(['High Plains Drifter', 'Pale Rider']);
  });

  it('finds by meaning what no keyword matches (the vector half)', async () => {
    const genreCount = async (query: string, genre: string) =>
      (await store.search({ query, site: ['movies'], numResults: 10 })).filter((r) =>
        ((r.schema_object.genre as string[] | undefined) ?? []).some((g) => g.includes(genre)),
      ).length;
    expect(await genreCount('extraterrestrial', 'Science Fiction')).toBeGreaterThanOrEqual(8);
    expect(await genreCount('cartoon for toddlers', 'Kids')).toBeGreaterThanOrEqual(8);
    // plain words only (no synonym list: "films" is not rewritten to "movie"); the understood
    // path reads such questions against the site's profile
    expect(await genreCount('frightening films', 'Horror')).toBeGreaterThanOrEqual(2);
    // filters hold on the vector side too
    expect((await store.search({ query: 'extraterrestrial', site: ['cars'] })).length).toBe(0);
    const keywordOnly = await IndexStore.open({ embedder: null });
    await keywordOnly.upsert('movies', movies);
    expect(await keywordOnly.search({ query: 'extraterrestrial', site: ['movies'] })).toEqual([]);
  });

  it('filters by site, by "all" and by type', async () => {
    expect(
      (await store.search({ query: 'japanese cars', site: ['movies'] })).every((r) => r.site === 'movies'),
    ).toBe(true);
    const any = await store.search({ query: 'ford', site: ['all'], numResults: 200 });
    expect(new Set(any.map((r) => r.site))).toEqual(new Set(['movies', 'cars']));
    const onlyCars = await store.search({ query: 'ford', site: ['all'], types: ['Car'], numResults: 200 });
    expect(onlyCars.length).toBeGreaterThan(0);
    expect(onlyCars.every((r) => r['@type'] === 'Car')).toBe(true);
    expect(await store.search({ query: 'ford', site: ['nowhere'] })).toEqual([]);
  });

  it('keeps to the types an understanding names when searching every site', async () => {
    const understanding = Understanding.parse({ text: 'ford movies', freeText: 'ford', types: ['Movie'] });
    const films = await store.search({ query: 'ford movies', site: ['all'], numResults: 5, understanding });
    expect(films.length).toBeGreaterThan(0);
    expect(films.every((r) => r['@type'] === 'Movie')).toBe(true);
  });

  it('respects numResults, tolerates typos, and returns nothing for a query of punctuation', async () => {
    expect(await store.search({ query: 'comedy', site: ['movies'], numResults: 3 })).toHaveLength(3);
    expect(
      (await store.search({ query: 'eastwod', site: ['movies'], numResults: 5 })).map((r) => r.name),
    ).toContain('Pale Rider');
    expect(await store.search({ query: '?!', site: ['all'] })).toEqual([]);
  });

  it('lists sites with item counts and types', async () => {
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
    expect(await store.upsert('s', [a, b])).toEqual({ upserted: 2, total: 2 });
    expect(await store.upsert('s', [a, b])).toEqual({ upserted: 2, total: 2 });
    const renamed = {
      ...a,
      name: 'Gamma widget',
      schema_object: { ...a.schema_object, name: 'Gamma widget' },
    };
    expect(await store.upsert('s', [renamed, renamed])).toEqual({ upserted: 1, total: 2 });
    expect(await store.search({ query: 'alpha', site: ['s'] })).toEqual([]);
    expect((await store.search({ query: 'widget', site: ['s'] })).map((r) => r.url)).toEqual([a.url]);
    expect(store.sites()).toEqual([{ name: 's', itemCount: 2, types: ['Thing'] }]);
  });

  it('applies a large load a bounded batch at a time: each its own embedding call and journal record', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'askbus-batches-'));
    try {
      const calls: number[] = [];
      const embedder: EmbeddingProvider = {
        id: 'counting',
        dimensions: 4,
        embed: async (texts) => {
          calls.push(texts.length);
          return texts.map((_, i) => [1, i % 3, 0, 1]);
        },
      };
      const store = await IndexStore.open({ dataDir: dir, embedder, upsertBatch: 4 });
      const items = Array.from({ length: 10 }, (_, i) =>
        item('s', `n${i}`, 'Thing', { name: `Gadget ${i}` }),
      );
      // a repeated URL: the last one wins across batches too
      const again = { ...items[1]!, name: 'Gadget one again' };
      expect(await store.upsert('s', [...items, again])).toEqual({ upserted: 10, total: 10 });
      expect(calls).toEqual([4, 4, 2]);
      expect(store.getItems([items[1]!.url])[0]?.name).toBe('Gadget one again');
      await store.close();
      const reopened = await IndexStore.open({ dataDir: dir, embedder });
      expect(reopened.size).toBe(10);
      await reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses items of another site', async () => {
    const store = await IndexStore.open();
    await expect(store.upsert('s', [item('t', 'x', 'Thing', {})])).rejects.toThrow(StoreInputError);
    expect(store.size).toBe(0);
  });
});

describe('IndexStore vectors on disk', () => {
  it('reopens without re-embedding, and re-embeds only for another embedder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'askbus-vectors-'));
    try {
      let embedded = 0;
      const counting = (id: string): EmbeddingProvider => ({
        id,
        dimensions: 8,
        async embed(texts) {
          if (texts.length > 1 || !texts[0]!.startsWith('q:')) embedded += texts.length;
          return texts.map((t) => Array.from({ length: 8 }, (_, i) => (t.length % (i + 2)) + 1));
        },
      });
      const first = await IndexStore.open({ dataDir: dir, embedder: counting('a') });
      await first.upsert('cars', cars.slice(0, 20));
      await first.persist();
      expect(embedded).toBe(20);
      const again = await IndexStore.open({ dataDir: dir, embedder: counting('a') });
      expect(again.vectorsFrom).toBe('disk');
      expect(embedded).toBe(20);
      const other = await IndexStore.open({ dataDir: dir, embedder: counting('b') });
      expect(other.vectorsFrom).toBe('computed');
      expect(embedded).toBe(40);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
    await first.upsert('cars', cars);
    await first.persist();
    expect(readdirSync(dir).sort()).toEqual([
      'docs-1.json',
      'keyword-1.bin',
      'manifest.json',
      'segment-1.jsonl',
      'vectors-1.bin',
      'vectors-1.usearch',
    ]); // no temp files left

    const second = await IndexStore.open({ dataDir: dir });
    expect(second.openedFrom).toBe('disk');
    expect(second.sites()).toEqual(first.sites());
    const q = { query: 'fast american cars', site: ['cars'], numResults: 20 };
    expect(await second.search(q)).toEqual(await first.search(q));

    expect(second.vectorsFrom).toBe('disk');

    // upserts after reopening keep working on the loaded index
    await second.upsert('cars', cars.slice(0, 5));
    expect(second.size).toBe(406);
  });

  it('re-indexes from the segments when the keyword index is damaged', async () => {
    const { index } = manifest(dir);
    writeFileSync(join(dir, `keyword-${index.generation}.bin`), 'broken');
    const store = await IndexStore.open({ dataDir: dir });
    expect(store.openedFrom).toBe('rebuilt');
    expect(store.size).toBe(406);
    expect((await store.search({ query: 'honda civic', site: ['cars'], numResults: 1 }))[0]!.name).toMatch(
      /Honda Civic/,
    );
    // the rebuilt index was written back, so the next open is from disk again
    expect((await IndexStore.open({ dataDir: dir })).openedFrom).toBe('disk');
  });

  it('re-indexes an index written by another analyzer version', async () => {
    const m = manifest(dir);
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ ...m, index: { ...m.index, analyzer: 2 } }));
    const store = await IndexStore.open({ dataDir: dir });
    expect(store.openedFrom).toBe('rebuilt');
    expect(store.size).toBe(406);
    expect((await IndexStore.open({ dataDir: dir })).openedFrom).toBe('disk');
  });

  it('refuses to start on a damaged segment rather than silently starting empty', async () => {
    const bad = mkdtempSync(join(tmpdir(), 'askbus-retriever-bad-'));
    try {
      const line = '{"nope":true}\n';
      writeFileSync(join(bad, 'segment-1.jsonl'), line);
      writeFileSync(
        join(bad, 'manifest.json'),
        JSON.stringify({ format: 2, journal: 0, segments: [{ id: 1, records: 1, bytes: line.length }] }),
      );
      await expect(IndexStore.open({ dataDir: bad })).rejects.toThrow(
        /segment-1\.jsonl line 1 is not an item/,
      );
    } finally {
      rmSync(bad, { recursive: true, force: true });
    }
  });

  it('refuses to start on a damaged items.json (the old layout) rather than silently starting empty', async () => {
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
    await store.upsert('movies', few);
    await Promise.all([store.persist(), store.persist(), store.persist()]);
    const again = await IndexStore.open({ dataDir: dir });
    expect(again.openedFrom).toBe('disk');
    expect(again.size).toBe(456);
    expect(again.replayed.records).toBe(0);
  });

  it('persists incrementally: a small load writes a small segment, not the store again', async () => {
    const store = await IndexStore.open({ dataDir: dir });
    const before = manifest(dir);
    const changed = { ...movies[100]!, name: 'A Renamed Movie Zyxwv' };
    await store.upsert('movies', [changed, movies[101]!]);
    await store.deleteSite('nothing-here');
    await store.persist();
    const after = manifest(dir);
    expect(after.segments.slice(0, -1)).toEqual(before.segments);
    expect(after.segments.at(-1)!.records).toBe(2);
    // the indexes lag by two items: not written again
    expect(after.index.generation).toBe(before.index.generation);
    const again = await IndexStore.open({ dataDir: dir });
    expect(again.openedFrom).toBe('disk');
    expect(again.size).toBe(store.size);
    expect((await again.search({ query: 'zyxwv', site: ['movies'] }))[0]!.url).toBe(changed.url);
    expect(await again.search({ query: 'fast american cars', site: ['cars'], numResults: 10 })).toEqual(
      await store.search({ query: 'fast american cars', site: ['cars'], numResults: 10 }),
    );
  });

  it('merges the segments once they hold mostly replaced items, and drops deleted sites', async () => {
    const store = await IndexStore.open({ dataDir: dir, embedder: null });
    for (let i = 0; i < 3; i++) {
      await store.upsert(
        'cars',
        cars.map((c) => ({ ...c, name: `${c.name} v${i}` })),
      );
      await store.persist();
    }
    await store.deleteSite('movies');
    await store.persist();
    const m = manifest(dir);
    expect(m.segments.reduce((n, s) => n + s.records, 0)).toBeLessThanOrEqual(2 * store.size + 1_000);
    const again = await IndexStore.open({ dataDir: dir, embedder: null });
    expect(again.size).toBe(406);
    expect(again.sites().map((s) => s.name)).toEqual(['cars']);
    expect((await again.search({ query: 'honda civic v2', site: ['cars'], numResults: 1 }))[0]!.name).toMatch(
      /Honda Civic.* v2/,
    );
  });
});

describe('IndexStore names on disk', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'askbus-retriever-names-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const someMovies = movies.slice(0, 300);
  const questions = [
    ...cars.slice(0, 6).map((c) => `is the ${c.name} any good`),
    ...someMovies.slice(0, 6).map((m) => `something like ${m.name.toLowerCase()}`),
    'toyota corolla',
    'ford pinto from the seventies',
    'the dark knight',
  ];
  const sameNames = (a: IndexStore, b: IndexStore): void => {
    for (const q of questions)
      for (const site of [['all'], ['cars'], ['movies']])
        expect(a.findNames(q, site)).toEqual(b.findNames(q, site));
  };

  it('finds the same names after a reopen, and after changes made on both sides of one', async () => {
    const live = await IndexStore.open({ embedder: null });
    const saved = await IndexStore.open({ dataDir: dir, embedder: null });
    for (const store of [live, saved]) {
      await store.upsert('cars', cars);
      await store.upsert('movies', someMovies);
    }
    await saved.persist();
    const reopened = await IndexStore.open({ dataDir: dir, embedder: null });
    expect(reopened.openedFrom).toBe('disk');
    expect(reopened.findNames('ford pinto', ['cars']).length).toBeGreaterThan(0);
    sameNames(reopened, live);

    // replaced, moved, added and removed after the reopen
    const renamed = { ...cars[0]!, name: 'Zyxwv Roadster Special' };
    const moved = { ...someMovies[1]!, site: 'cars' };
    const added = item('cars', 'new-one', 'Car', { name: 'Toyota Corolla Zyxwv', vehicleModelDate: '1999' });
    for (const store of [live, reopened]) {
      await store.upsert('cars', [renamed, added]);
      await store.upsert('cars', [moved], { move: true });
      await store.upsert('movies', [{ ...someMovies[2]!, name: someMovies[3]!.name }]);
    }
    sameNames(reopened, live);
    expect(reopened.findNames('zyxwv roadster special', ['cars'])[0]?.items[0]?.url).toBe(renamed.url);
    expect(reopened.findNames(cars[0]!.name, ['cars'])[0]?.items.map((i) => i.url) ?? []).not.toContain(
      renamed.url,
    );
    for (const store of [live, reopened]) await store.deleteSite('movies');
    sameNames(reopened, live);
    await reopened.persist();
    const again = await IndexStore.open({ dataDir: dir, embedder: null });
    expect(again.openedFrom).toBe('disk');
    sameNames(again, live);
  });

  it('rebuilds from the segments when the saved names are damaged', async () => {
    const before = await IndexStore.open({ dataDir: dir, embedder: null });
    await before.upsert('movies', someMovies);
    await before.persist();
    const damages: Array<(names: Buffer) => Buffer> = [
      (names) => names.subarray(0, names.length - 3),
      () => Buffer.from('{}'),
      (names) => {
        // the first entry's site past the sites saved
        const count = names.readUInt32LE(8);
        const out = Buffer.from(names);
        out.writeUInt32LE(0xffff, 32 + 8 * count + 4 * 3 * count);
        return out;
      },
    ];
    for (const damage of damages) {
      const path = join(dir, `keyword-${manifest(dir).index.generation}.bin`);
      const sections = unpackSections(readFileSync(path), 6);
      const bad = damage(Buffer.from(sections[3]!));
      writeFileSync(path, Buffer.concat(packSections([...sections.slice(0, 3), bad, ...sections.slice(4)])));
      const store = await IndexStore.open({ dataDir: dir, embedder: null });
      expect(store.openedFrom).toBe('rebuilt');
      expect(store.size).toBe(before.size);
      sameNames(store, before);
    }
  });
});

function manifest(dir: string): {
  segments: { id: number; records: number; bytes: number }[];
  index: { generation: number; analyzer: number };
} {
  return JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as ReturnType<typeof manifest>;
}
