import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { SiteProfile } from '@askbus/contracts';
import { loadDemoSites } from '@askbus/demo-data';
import { KeywordIndex } from '@askbus/search-core';
import { FACTS_VERSION, SiteCatalog } from '@askbus/understand';
import { testSite } from '@askbus/understand/testing';
import { IndexStore } from './index-store';
import { INDEX_FILES_FORMAT } from './segments';

/**
 * Reopening a saved index reads its postings, fact columns, profiles, names and vocabulary as
 * written: no item is analysed again (only those of segments written after the index), and the
 * answers are those given before the restart. Index files of another layout are rebuilt.
 */
const demo = loadDemoSites();
const movies = demo.find((s) => s.site === 'movies')!.items;
const cars = demo.find((s) => s.site === 'cars')!.items;

const QUESTIONS: Array<{ site: 'movies' | 'cars'; q: string }> = [
  { site: 'movies', q: 'movies that lost money' },
  { site: 'movies', q: 'the highest rated movies' },
  { site: 'movies', q: 'comedies from the 90s' },
  { site: 'movies', q: 'westerns with clint eastwood' },
  { site: 'cars', q: 'the most powerful cars' },
  { site: 'cars', q: 'fuel efficient japanese cars' },
  { site: 'cars', q: 'toyota corolla' },
];

/** Everything a client sees of a store: answers with outcomes, sites, profiles (less the process's version), names. */
async function answers(store: IndexStore): Promise<unknown> {
  const out: unknown[] = [];
  for (const { site, q } of QUESTIONS) {
    const r = await store.searchWithOutcome({
      query: q,
      site: [site],
      numResults: 30,
      understanding: testSite(site).ask(q),
    });
    out.push({ q, urls: r.items.map((i) => i.url), outcome: r.outcome });
    out.push({
      plain: q,
      urls: (await store.search({ query: q, site: [site], numResults: 30 })).map((i) => i.url),
    });
  }
  const profiles = store.profiles(['all']).map((p) => ({ ...(p as SiteProfile), version: undefined }));
  return {
    out,
    sites: store.sites(),
    profiles,
    names: store.findNames('is the godfather better than pale rider or a toyota corolla', ['all']),
    size: store.size,
  };
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'askbus-persist-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const manifest = () => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));

describe('reopening a saved index', () => {
  let before: unknown;

  it('gives the answers given before the restart, without analysing any item again', async () => {
    const first = await IndexStore.open({ dataDir: dir, embedder: null });
    await first.upsert('movies', movies);
    await first.upsert('cars', cars);
    await first.persist();
    before = await answers(first);
    await first.close();
    expect(manifest().index.format).toBe(INDEX_FILES_FORMAT);

    const analysed = vi.spyOn(SiteCatalog.prototype, 'add');
    const indexed = vi.spyOn(KeywordIndex.prototype, 'add');
    try {
      const second = await IndexStore.open({ dataDir: dir, embedder: null });
      expect(second.openedFrom).toBe('disk');
      expect(analysed).not.toHaveBeenCalled();
      expect(indexed).not.toHaveBeenCalled();
      expect(await answers(second)).toEqual(before);
      await second.close();
    } finally {
      analysed.mockRestore();
      indexed.mockRestore();
    }
  }, 120_000);

  it('analyses only the items of segments written after the index, and answers as the store did', async () => {
    const store = await IndexStore.open({ dataDir: dir, embedder: null });
    const changed = cars.slice(0, 3).map((c) => ({ ...c, name: `${c.name} Mark II` }));
    await store.upsert('cars', changed);
    await store.upsert('movies', [{ ...movies[0]!, url: `${movies[0]!.url}/again`, name: 'Again' }]);
    await store.persist();
    const live = await answers(store);
    await store.close();
    const m = manifest();
    // a small change writes a segment, not the indexes
    expect(m.segments.length).toBe(2);
    expect(m.index.throughSegment).toBe(m.segments[0].id);

    const analysed = vi.spyOn(SiteCatalog.prototype, 'add');
    try {
      const reopened = await IndexStore.open({ dataDir: dir, embedder: null });
      expect(reopened.openedFrom).toBe('disk');
      expect(analysed).toHaveBeenCalledTimes(4);
      expect(await answers(reopened)).toEqual(live);
      expect(reopened.get(changed[0]!.url)?.name).toMatch(/Mark II$/);
      await reopened.close();
    } finally {
      analysed.mockRestore();
    }
  }, 120_000);

  it('rebuilds index files of another layout from the segments, with the same answers', async () => {
    // a directory of its own, written once: a rebuild numbers the items as they were loaded
    const other = mkdtempSync(join(tmpdir(), 'askbus-persist-layout-'));
    try {
      const first = await IndexStore.open({ dataDir: other, embedder: null });
      await first.upsert('movies', movies);
      await first.upsert('cars', cars);
      await first.persist();
      const live = await answers(first);
      await first.close();
      const path = join(other, 'manifest.json');
      const m = JSON.parse(readFileSync(path, 'utf8'));
      writeFileSync(path, JSON.stringify({ ...m, index: { ...m.index, format: INDEX_FILES_FORMAT - 1 } }));
      const analysed = vi.spyOn(SiteCatalog.prototype, 'add');
      try {
        const store = await IndexStore.open({ dataDir: other, embedder: null });
        expect(store.openedFrom).toBe('rebuilt');
        expect(analysed).toHaveBeenCalledTimes(store.size);
        expect(await answers(store)).toEqual(live);
        await store.close();
      } finally {
        analysed.mockRestore();
      }
      // written back in this layout
      expect(JSON.parse(readFileSync(path, 'utf8')).index.format).toBe(INDEX_FILES_FORMAT);
      const again = await IndexStore.open({ dataDir: other, embedder: null });
      expect(again.openedFrom).toBe('disk');
      await again.close();
      // files whose facts an older extractor made (no version noted) are rebuilt too
      const current = JSON.parse(readFileSync(path, 'utf8'));
      const { facts: noted, ...older } = current.index;
      expect(noted).toBe(FACTS_VERSION);
      writeFileSync(path, JSON.stringify({ ...current, index: older }));
      const refreshed = await IndexStore.open({ dataDir: other, embedder: null });
      expect(refreshed.openedFrom).toBe('rebuilt');
      expect(await answers(refreshed)).toEqual(live);
      await refreshed.close();
      expect(JSON.parse(readFileSync(path, 'utf8')).index.facts).toBe(FACTS_VERSION);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  }, 120_000);

  it('rebuilds an index without a layout version (written before it had one)', async () => {
    const m = manifest();
    const { format: _, ...older } = m.index;
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ ...m, index: older }));
    const store = await IndexStore.open({ dataDir: dir, embedder: null });
    expect(store.openedFrom).toBe('rebuilt');
    await store.close();
  }, 120_000);
});

describe('an index that lags its items', () => {
  it('is written again on open, so the next open applies none of them, with the same answers', async () => {
    const other = mkdtempSync(join(tmpdir(), 'askbus-persist-lag-'));
    try {
      const first = await IndexStore.open({ dataDir: other, embedder: null });
      await first.upsert('cars', cars);
      await first.persist();
      // more items than the index may lag by (2,000), journaled only
      await first.upsert('movies', movies);
      const live = await answers(first);
      await first.close();
      const path = join(other, 'manifest.json');
      expect(JSON.parse(readFileSync(path, 'utf8')).index.throughSegment).toBe(
        JSON.parse(readFileSync(path, 'utf8')).segments[0].id,
      );

      const second = await IndexStore.open({ dataDir: other, embedder: null });
      expect(second.replayed.records).toBeGreaterThan(0);
      const m = JSON.parse(readFileSync(path, 'utf8'));
      expect(m.index.throughSegment).toBe(m.segments.at(-1).id);
      expect(await answers(second)).toEqual(live);
      await second.close();

      const analysed = vi.spyOn(SiteCatalog.prototype, 'add');
      try {
        const third = await IndexStore.open({ dataDir: other, embedder: null });
        expect(third.openedFrom).toBe('disk');
        expect(analysed).not.toHaveBeenCalled();
        expect(await answers(third)).toEqual(live);
        await third.close();
      } finally {
        analysed.mockRestore();
      }
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('snapshots written while a load goes on', () => {
  it('save what the store held when each was taken: persist and reopen answer as a store never saved', async () => {
    const other = mkdtempSync(join(tmpdir(), 'askbus-persist-during-'));
    try {
      const unsaved = await IndexStore.open({ embedder: null });
      // a small journal: snapshots (the indexes with them) are taken and written as the load goes on,
      // their postings and columns shared with the store, which changes them meanwhile
      const saved = await IndexStore.open({ dataDir: other, embedder: null, snapshotAfterBytes: 32 * 1024 });
      const both = async (site: string, items: typeof movies): Promise<void> => {
        await unsaved.upsert(site, items);
        await saved.upsert(site, items);
      };
      for (const [site, items] of [
        ['movies', movies],
        ['cars', cars],
      ] as const)
        for (let i = 0; i < items.length; i += 40) await both(site, items.slice(i, i + 40));
      // replaced items: dropped postings (compacted when many), impacts recomputed
      await both(
        'movies',
        movies.slice(0, 60).map((m) => ({ ...m, name: `${m.name} (restored)` })),
      );
      await saved.persist();
      const live = await answers(unsaved);
      expect(await answers(saved)).toEqual(live);
      await saved.close();
      expect(JSON.parse(readFileSync(join(other, 'manifest.json'), 'utf8')).segments.length).toBeGreaterThan(
        1,
      );

      const reopened = await IndexStore.open({ dataDir: other, embedder: null });
      expect(reopened.openedFrom).toBe('disk');
      expect(await answers(reopened)).toEqual(live);
      await reopened.close();
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  }, 120_000);
});
