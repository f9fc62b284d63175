import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RetrievedItem, StoredItem } from '@askbus/contracts';
import { loadDemoSites } from '@askbus/demo-data';
import { testSite } from '@askbus/understand/testing';
import { IndexStore } from './index-store';
import { PgStore } from './pg-store';
import { mergeByUrl, MultiStore } from './multi-store';
import { openStores, retrieverConfigFromEnv } from './open-store';

const demo = loadDemoSites();
const allMovies = demo.find((s) => s.site === 'movies')!.items;
const genres = (i: StoredItem) => (i.schema_object.genre as string[] | undefined) ?? [];
// every Western and 150 others (PGlite's HNSW inserts are slow: a small site keeps the test short)
const movies = [
  ...allMovies.filter((m) => genres(m).includes('Western')),
  ...allMovies.filter((m) => !genres(m).includes('Western')).slice(0, 150),
];
const cars = demo.find((s) => s.site === 'cars')!.items.slice(0, 100);

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

const noLog = { warn: () => undefined };

describe('MultiStore: the embedded index and PgStore (PGlite + pgvector) as one', () => {
  let db: PGlite;
  let server: PGLiteSocketServer;
  let url: string;
  let dir: string;
  let embedded: IndexStore;
  let pgStore: PgStore;
  let multi: MultiStore;

  beforeAll(async () => {
    db = await PGlite.create({ extensions: { vector } });
    const port = await freePort();
    server = new PGLiteSocketServer({ db, port, host: '127.0.0.1', maxConnections: 6 });
    await server.start();
    url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    dir = mkdtempSync(join(tmpdir(), 'askbus-multi-'));
    embedded = await IndexStore.open({ dataDir: join(dir, 'index') });
    pgStore = await PgStore.open({ connectionString: url, table: 'multi_items', maxConnections: 2 });
    multi = await MultiStore.open({
      backends: [
        { name: 'embedded', store: embedded },
        { name: 'pg', store: pgStore },
      ],
      placement: { movies: 'pg' },
    });
    await multi.upsert('movies', movies);
    await multi.upsert('cars', cars);
  }, 120_000);

  afterAll(async () => {
    await embedded?.close();
    await pgStore?.close();
    await server?.stop();
    await db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('puts each site where its placement says (else the first backend) and lists the sites of both', async () => {
    expect(multi.backendOf('movies')).toBe('pg');
    expect(multi.backendOf('cars')).toBe('embedded');
    expect(multi.backendOf('recipes')).toBe('embedded');
    expect(embedded.sites().map((s) => s.name)).toEqual(['cars']);
    expect((await pgStore.sites()).map((s) => s.name)).toEqual(['movies']);
    expect(await multi.sites()).toEqual([
      { name: 'cars', itemCount: 100, types: ['Car'] },
      { name: 'movies', itemCount: movies.length, types: ['Movie'] },
    ]);
    expect(await multi.upsert('cars', cars.slice(0, 5))).toEqual({
      upserted: 5,
      total: movies.length + 100,
    });
  });

  it('searches the backend holding the site, and both for "all", merged by URL', async () => {
    const westerns = await multi.search({
      query: 'westerns with clint eastwood',
      site: ['movies'],
      numResults: 10,
    });
    expect(
      westerns
        .slice(0, 2)
        .map((r) => r.name)
        .sort(),
    ).toEqual(['High Plains Drifter', 'Pale Rider']);
    const both = await multi.search({ query: 'ford mustang western', site: ['all'], numResults: 40 });
    expect(new Set(both.map((r) => r.site))).toEqual(new Set(['cars', 'movies']));
    expect(new Set(both.map((r) => r.url)).size).toBe(both.length);
    for (let i = 1; i < both.length; i++)
      expect(both[i]!.retrievalScore).toBeLessThanOrEqual(both[i - 1]!.retrievalScore);
  });

  it("answers a question with constraints as the site's own backend does", async () => {
    const heaviest = testSite('cars').ask('the heaviest cars');
    const params = { query: heaviest.text, site: ['cars'], numResults: 10, understanding: heaviest };
    expect(await multi.searchWithOutcome(params)).toEqual(await embedded.searchWithOutcome(params));
    const lost = testSite('movies').ask('movies that lost money');
    const p2 = { query: lost.text, site: ['movies'], numResults: 10, understanding: lost };
    expect(await multi.searchWithOutcome(p2)).toEqual(await pgStore.searchWithOutcome(p2));
  });

  it('gives items, names and profiles from both backends', async () => {
    const items = await multi.getItems([cars[0]!.url, movies[0]!.url, 'https://nowhere.example/x']);
    expect(items.map((i) => i.url)).toEqual([cars[0]!.url, movies[0]!.url]);
    const names = await multi.findNames(`is Pale Rider better than a ${cars[0]!.name}`, ['all']);
    expect(names.flatMap((m) => m.items.map((i) => i.name))).toEqual(
      expect.arrayContaining(['Pale Rider', cars[0]!.name]),
    );
    const profiles = await multi.profiles(['cars', 'movies']);
    expect(profiles.map((p) => p.site).sort()).toEqual(['cars', 'movies']);
  });

  it("refuses a URL another backend's site holds, move or not", async () => {
    const stolen = { ...movies[0]!, site: 'cars' };
    for (const move of [false, true]) {
      const r = await multi.upsert('cars', [stolen], { move });
      expect(r.upserted).toBe(0);
      expect(r.refused).toEqual([{ url: stolen.url, site: 'movies' }]);
    }
    expect((await pgStore.getItems([stolen.url]))[0]?.site).toBe('movies');
  });

  it('learns which backend holds each site on open; a site in both is an error', async () => {
    const again = await MultiStore.open({
      backends: [
        { name: 'pg', store: pgStore },
        { name: 'embedded', store: embedded },
      ],
    });
    expect(again.backendOf('cars')).toBe('embedded');
    expect(again.backendOf('movies')).toBe('pg');
    expect(again.backendOf('recipes')).toBe('pg');
    await expect(
      MultiStore.open({
        backends: [
          { name: 'a', store: embedded },
          { name: 'b', store: embedded },
        ],
      }),
    ).rejects.toThrow(/held by both/);
    await expect(
      MultiStore.open({ backends: [{ name: 'a', store: embedded }], placement: { cars: 'pg' } }),
    ).rejects.toThrow(/not one of a/);
  });

  it('deletes a site from the backend holding it', async () => {
    const extra = cars.slice(0, 3).map((c) => ({ ...c, url: `${c.url}/copy`, site: 'more-cars' }));
    const multi2 = await MultiStore.open({
      backends: [
        { name: 'embedded', store: embedded },
        { name: 'pg', store: pgStore },
      ],
      placement: { 'more-cars': 'pg' },
    });
    await multi2.upsert('more-cars', extra);
    expect((await pgStore.sites()).map((s) => s.name)).toEqual(['more-cars', 'movies']);
    expect(await multi2.deleteSite('more-cars')).toBe(3);
    expect((await multi2.sites()).map((s) => s.name)).toEqual(['cars', 'movies']);
    await multi2.persist();
  });
});

describe('mergeByUrl', () => {
  const item = (url: string, score: number): RetrievedItem => ({
    url,
    name: url,
    site: 's',
    '@type': 'Thing',
    schema_object: {},
    retrievalScore: score,
  });
  it('keeps each URL once with its best score, best first, up to the limit', () => {
    const merged = mergeByUrl(
      [
        [item('a', 1), item('b', 5)],
        [item('a', 3), item('c', 2)],
      ],
      3,
    );
    expect(merged.map((i) => [i.url, i.retrievalScore])).toEqual([
      ['b', 5],
      ['a', 3],
      ['c', 2],
    ]);
    expect(mergeByUrl([[item('a', 1)], [item('b', 2)]], 1).map((i) => i.url)).toEqual(['b']);
  });
});

describe('the retriever configuration', () => {
  it('reads one backend (the old variable) or several, and where sites go', () => {
    expect(retrieverConfigFromEnv({ ASKBUS_INDEX_DIR: '/tmp/x' })).toEqual({
      backends: ['embedded'],
      indexDir: '/tmp/x',
      siteBackends: {},
    });
    expect(
      retrieverConfigFromEnv({ ASKBUS_RETRIEVER_BACKEND: 'pg', DATABASE_URL: 'postgres://h/db' }).backends,
    ).toEqual(['pg']);
    const both = retrieverConfigFromEnv({
      ASKBUS_RETRIEVER_BACKENDS: 'embedded, pg',
      ASKBUS_RETRIEVER_BACKEND: 'pg',
      DATABASE_URL: 'postgres://h/db',
      ASKBUS_DATA_DIR: '/data',
      ASKBUS_SNAPSHOT_BYTES: '1048576',
      ASKBUS_SITE_BACKENDS: 'movies=pg, recipes=embedded',
    });
    expect(both).toEqual({
      backends: ['embedded', 'pg'],
      databaseUrl: 'postgres://h/db',
      indexDir: '/data/index',
      snapshotAfterBytes: 1048576,
      siteBackends: { movies: 'pg', recipes: 'embedded' },
    });
  });

  it('names every bad setting', () => {
    expect(() => retrieverConfigFromEnv({ ASKBUS_RETRIEVER_BACKENDS: 'pg' })).toThrow(/DATABASE_URL/);
    expect(() => retrieverConfigFromEnv({ ASKBUS_RETRIEVER_BACKENDS: 'embedded,mongo' })).toThrow(/backends/);
    expect(() => retrieverConfigFromEnv({ ASKBUS_RETRIEVER_BACKENDS: 'embedded,embedded' })).toThrow(
      /listed twice/,
    );
    expect(() => retrieverConfigFromEnv({ ASKBUS_SITE_BACKENDS: 'movies=pg' })).toThrow(
      /not one of the backends/,
    );
    expect(() => retrieverConfigFromEnv({ ASKBUS_SITE_BACKENDS: 'movies' })).toThrow(/not site=backend/);
    expect(() => retrieverConfigFromEnv({ ASKBUS_SNAPSHOT_BYTES: 'lots' })).toThrow(/snapshotAfterBytes/);
  });

  it('opens one backend as it is and several as a MultiStore', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'askbus-open-'));
    const db = await PGlite.create({ extensions: { vector } });
    const port = await freePort();
    const server = new PGLiteSocketServer({ db, port, host: '127.0.0.1', maxConnections: 6 });
    await server.start();
    try {
      const one = await openStores(retrieverConfigFromEnv({ ASKBUS_INDEX_DIR: dir }), noLog, undefined);
      expect(one.store).toBeInstanceOf(IndexStore);
      expect(one.describe).toMatchObject({ backend: 'embedded', items: 0 });
      await one.close();
      const config = retrieverConfigFromEnv({
        ASKBUS_RETRIEVER_BACKENDS: 'embedded,pg',
        ASKBUS_SITE_BACKENDS: 'cars=pg',
        DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres`,
        ASKBUS_INDEX_DIR: dir,
      });
      const two = await openStores(config, noLog, undefined);
      try {
        expect(two.store).toBeInstanceOf(MultiStore);
        expect(two.describe).toMatchObject({
          backends: [{ backend: 'embedded' }, { backend: 'pg', items: 0 }],
          siteBackends: { cars: 'pg' },
        });
        await two.store.upsert('cars', cars.slice(0, 20));
        expect((await two.store.sites()).map((s) => [s.name, s.itemCount])).toEqual([['cars', 20]]);
        expect((two.store as MultiStore).backendOf('cars')).toBe('pg');
      } finally {
        await two.close();
      }
      await expect(
        openStores({ ...config, databaseUrl: 'postgres://postgres@127.0.0.1:1/none' }, noLog, undefined),
      ).rejects.toThrow();
    } finally {
      await server.stop();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
