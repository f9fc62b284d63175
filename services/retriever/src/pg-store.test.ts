import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoSites } from '@askbus/demo-data';
import { PgStore, SqlBuilder, termsOf, writeBounds } from './pg-store';
import { startPgliteServer } from './testing';
import { StoreInputError } from './index-store';
import { serveRetriever } from './index';
import { contracts, type Constraint, type StoredItem } from '@askbus/contracts';
import { compactFacts, extractFacts, FACTS_VERSION } from '@askbus/understand';
import { testSite } from '@askbus/understand/testing';
import { testBus, testNats } from '@askbus/bus/testing';

const demo = loadDemoSites();
// a subset, so PGlite's HNSW inserts (WASM, ~5 ms an item) keep the test short: every Western,
// science fiction and horror film, and the first 400 others; 100 cars
const genres = (i: { schema_object: Record<string, unknown> }) =>
  (i.schema_object.genre as string[] | undefined) ?? [];
const allMovies = demo.find((s) => s.site === 'movies')!.items;
const movies = [
  ...allMovies.filter((m) => genres(m).some((g) => /Western|Science Fiction|Horror/.test(g))),
  ...allMovies.filter((m) => !genres(m).some((g) => /Western|Science Fiction|Horror/.test(g))).slice(0, 400),
];
const cars = demo.find((s) => s.site === 'cars')!.items.slice(0, 100);

/** The same suite against every PostgreSQL we have: PGlite always, DATABASE_URL when set and it has pgvector. */
const targets: { name: string; url: () => Promise<{ url: string; stop(): Promise<void> }> }[] = [
  { name: 'PGlite + pgvector over pglite-socket', url: startPgliteServer },
];
if (process.env.DATABASE_URL) {
  targets.push({
    name: 'DATABASE_URL',
    url: async () => ({ url: process.env.DATABASE_URL!, stop: async () => undefined }),
  });
}

describe('termsOf', () => {
  it("gives each ASCII string fact's value and words, and a path with any other value path*", () => {
    expect(
      termsOf({ genre: ['Romantic Comedy', 'Sci-Fi'], director: ['Pedro Almodóvar'], year: [1999] }).sort(),
    ).toEqual(
      [
        'genre=romantic comedy',
        'genre romantic',
        'genre comedy',
        'genre=sci-fi',
        'genre sci',
        'genre fi',
        'director*',
      ].sort(),
    );
  });
});

describe('writeBounds', () => {
  it('starts with 20 rows, doubles each batch up to 500, and keeps the last 40 rows apart', () => {
    expect(writeBounds(0)).toEqual([]);
    expect(writeBounds(15)).toEqual([[0, 15]]);
    expect(writeBounds(70)).toEqual([
      [0, 20],
      [20, 60],
      [60, 70],
    ]);
    // a loader's upsert of a few hundred rows: 20, 40, 80, 160, 237 and the last 40
    expect(writeBounds(577)).toEqual([
      [0, 20],
      [20, 60],
      [60, 140],
      [140, 300],
      [300, 537],
      [537, 577],
    ]);
    expect(writeBounds(2_000).map(([from, to]) => to - from)).toEqual([
      20, 40, 80, 160, 320, 500, 500, 340, 40,
    ]);
  });

  it('covers every row in order, none over the full size, each at most twice the one before', () => {
    for (let n = 1; n <= 3_000; n += 37) {
      const bounds = writeBounds(n);
      expect(bounds[0]![0]).toBe(0);
      expect(bounds.at(-1)![1]).toBe(n);
      bounds.forEach(([from, to], i) => {
        expect(to).toBeGreaterThan(from);
        expect(to - from).toBeLessThanOrEqual(500);
        if (i > 0) {
          const [before, after] = bounds[i - 1]!;
          expect(from).toBe(after);
          // (the last rows are apart, whatever came before them)
          if (i < bounds.length - 1) expect(to - from).toBeLessThanOrEqual(2 * (after - before));
        }
      });
      if (n > 80) expect(n - bounds.at(-1)![0]).toBe(40);
    }
  });
});

for (const target of targets) {
  describe(`PgStore on ${target.name}`, () => {
    let server: { url: string; stop(): Promise<void> };
    let store: PgStore;
    let skip = false;
    const table = `askbus_test_${process.pid}`;
    /** Drops the tests' own tables (the store keeps its pool; this is a connection of its own). */
    const dropTables = async (...names: string[]): Promise<void> => {
      const c = new pg.Client({ connectionString: server.url });
      await c.connect();
      await c.query(
        `DROP TABLE IF EXISTS ${names.flatMap((n) => [n, `${n}_numbers`, `${n}_meta`]).join(', ')}`,
      );
      await c.end();
    };
    /** The indexes on table `t`, by name (a connection of its own). */
    const indexes = async (t: string): Promise<string[]> => {
      const c = new pg.Client({ connectionString: server.url });
      await c.connect();
      try {
        const r = await c.query<{ indexname: string }>(
          `SELECT indexname FROM pg_indexes WHERE tablename = $1 ORDER BY indexname`,
          [t],
        );
        return r.rows.map((x) => x.indexname);
      } finally {
        await c.end();
      }
    };
    /** Table `t`'s indexes when all are built, by name; and while a bulk load defers the GIN and HNSW ones. */
    const allIndexes = (t: string): string[] => [
      `${t}_doc`,
      `${t}_embedding`,
      `${t}_pkey`,
      `${t}_site`,
      `${t}_terms`,
    ];
    const deferredIndexes = (t: string): string[] => [`${t}_pkey`, `${t}_site`];

    beforeAll(async () => {
      server = await target.url();
      if (target.name === 'DATABASE_URL') {
        const c = new pg.Client({ connectionString: server.url });
        await c.connect();
        const ext = await c.query(`SELECT 1 FROM pg_available_extensions WHERE name = 'vector'`);
        await c.end();
        skip = ext.rowCount === 0;
        if (skip) return;
      }
      store = await PgStore.open({ connectionString: server.url, table, maxConnections: 2 });
      await store.upsert('movies', movies);
      await store.upsert('cars', cars);
    }, 120_000);

    afterAll(async () => {
      if (store) {
        await dropTables(table);
        await store.close();
      }
      await server?.stop();
    });

    it('upserts idempotently by URL and lists sites', async (ctx) => {
      if (skip) ctx.skip();
      expect(await store.count()).toBe(movies.length + 100);
      expect(await store.upsert('cars', cars.slice(0, 10))).toEqual({
        upserted: 10,
        total: movies.length + 100,
      });
      expect(await store.sites()).toEqual([
        { name: 'cars', itemCount: 100, types: ['Car'] },
        { name: 'movies', itemCount: movies.length, types: ['Movie'] },
      ]);
      await expect(store.upsert('cars', [movies[0]!])).rejects.toThrow(StoreInputError);
    });

    it('keeps "westerns with clint eastwood" → Pale Rider and High Plains Drifter on top', async (ctx) => {
      if (skip) ctx.skip();
      const found = await store.search({
        query: 'westerns with clint eastwood',
        site: ['movies'],
        numResults: 10,
      });
      expect(found).toHaveLength(10);
      expect(
        found
          .slice(0, 2)
          .map((r) => r.name)
          .sort(),
      ).toEqual(['High Plains Drifter', 'Pale Rider']);
      for (let i = 1; i < found.length; i++)
        expect(found[i]!.retrievalScore).toBeLessThanOrEqual(found[i - 1]!.retrievalScore);
    });

    it('finds by meaning (vector side, HNSW) and filters by site and type', async (ctx) => {
      if (skip) ctx.skip();
      const sf = await store.search({ query: 'extraterrestrial', site: ['movies'], numResults: 10 });
      expect(
        sf.filter((r) => (r.schema_object.genre as string[] | undefined)?.includes('Science Fiction')).length,
      ).toBeGreaterThanOrEqual(7);
      expect(await store.search({ query: 'extraterrestrial', site: ['cars'] })).toEqual([]);
      const onlyCars = await store.search({ query: 'ford', site: ['all'], types: ['Car'], numResults: 50 });
      expect(onlyCars.length).toBeGreaterThan(0);
      expect(onlyCars.every((r) => r['@type'] === 'Car')).toBe(true);
      expect(await store.search({ query: '?!', site: ['all'] })).toEqual([]);
      // a named type comes first on every site
      const fordCars = await store.search({ query: 'ford cars', site: ['all'], numResults: 10 });
      expect(fordCars.every((r) => r['@type'] === 'Car')).toBe(true);
    });

    it('serves the retriever contracts over NATS', async (ctx) => {
      if (skip) ctx.skip();
      const nats = await testNats();
      const server = await testBus(nats.url, 'retriever');
      const client = await testBus(nats.url, 'test-client');
      try {
        await serveRetriever(server, store);
        await server.nc.flush();
        const { items } = await client.request(contracts.search, {
          query: 'westerns with clint eastwood',
          site: ['movies'],
          numResults: 5,
        });
        expect(items.map((i) => i.name)).toEqual(
          expect.arrayContaining(['Pale Rider', 'High Plains Drifter']),
        );
        const { sites } = await client.request(contracts.sites, {});
        expect(sites.map((x) => x.name)).toEqual(['cars', 'movies']);
      } finally {
        await client.drain();
        await server.drain();
        await nats.stop();
      }
    });

    it('applies an understanding in SQL: constraints, a superlative, derived quantities, relaxation', async (ctx) => {
      if (skip) ctx.skip();
      const num = (v: unknown): number => (v as { value: number }).value;
      const cyl = (i: StoredItem) =>
        (i.schema_object.additionalProperty as { name: string; value: number }[]).find(
          (p) => p.name === 'number of cylinders',
        )?.value;
      const heavy = testSite('cars').ask('heavy 8-cylinder cars from the early 70s');
      const a = await store.searchWithOutcome({
        query: heavy.text,
        site: ['cars'],
        numResults: 100,
        understanding: heavy,
      });
      const matching = cars.filter(
        (c) => cyl(c) === 8 && /^197[0-3]/.test(String(c.schema_object.vehicleModelDate)),
      );
      expect(a.outcome?.matched).toBe(matching.length);
      expect(a.items.map((i) => i.url).sort()).toEqual(matching.map((i) => i.url).sort());
      expect(num(a.items[0]!.schema_object.weight)).toBe(
        Math.max(...matching.map((c) => num(c.schema_object.weight))),
      );

      const heaviest = testSite('cars').ask('the heaviest cars');
      const b = await store.searchWithOutcome({
        query: heaviest.text,
        site: ['cars'],
        numResults: 10,
        understanding: heaviest,
      });
      const weights = b.items.map((i) => num(i.schema_object.weight));
      expect(weights).toEqual(
        [...cars.map((c) => num(c.schema_object.weight))].sort((x, y) => y - x).slice(0, 10),
      );

      const lost = testSite('movies').ask('movies that lost money');
      const c = await store.searchWithOutcome({
        query: lost.text,
        site: ['movies'],
        numResults: 20,
        understanding: lost,
      });
      const money = (i: StoredItem, name: string) =>
        (i.schema_object.additionalProperty as { name: string; value: number }[]).find((p) => p.name === name)
          ?.value ?? NaN;
      expect(c.items.length).toBeGreaterThan(0);
      for (const i of c.items)
        expect(money(i, 'worldwide gross')).toBeLessThan(money(i, 'production budget'));
      expect(c.outcome?.orders?.[0]?.quantiles).toHaveLength(11);

      const none = testSite('cars').ask('japanese cars heavier than 4500 pounds');
      const d = await store.searchWithOutcome({
        query: none.text,
        site: ['cars'],
        numResults: 5,
        understanding: none,
      });
      expect(d.outcome?.relaxed).toHaveLength(1);
      expect(d.items.length).toBeGreaterThan(0);
    });

    it("tests a range on a path's numbers, or on a derived quantity, as one jsonpath: the rows the facts say, for any key and bound", async (ctx) => {
      if (skip) ctx.skip();
      const own = `${table}_ranges`;
      const s = await PgStore.open({ connectionString: server.url, table: own, maxConnections: 2 });
      try {
        // keys with a dot, a space, a quote and a backslash; arrays mixing numbers and strings
        const values: unknown[] = [5, [3, 'x', 7], '12', -2.5, [1e21], 'none', [0, 10], 10];
        const items: StoredItem[] = values.map((v, n) => ({
          url: `https://ranges.example/${n}`,
          name: `Item ${n}`,
          site: 'ranges',
          '@type': 'Thing',
          schema_object: { 'we"ird\\key': v, 'dot.ted key': n, plain: n % 2 ? v : 'text' },
        }));
        await s.upsert('ranges', items);
        const facts = items.map((i) => compactFacts(extractFacts(i.schema_object)));
        const paths = Object.keys(facts[0]!);
        expect(paths).toEqual(expect.arrayContaining(['we"ird\\key', 'dot.ted key', 'plain']));
        const c = new pg.Client({ connectionString: server.url });
        await c.connect();
        try {
          for (const path of paths)
            for (const [min, max, minInclusive, maxInclusive] of [
              [5, 10, true, true],
              [5, 10, false, false],
              [undefined, 0, true, false],
              [7, undefined, true, true],
              [1e20, undefined, true, true],
              [-Infinity, 6, true, true],
            ] as const) {
              const k: Constraint = {
                kind: 'range',
                target: { path },
                ...(min === undefined ? {} : { min }),
                ...(max === undefined ? {} : { max }),
                minInclusive,
                maxInclusive,
                phrase: '',
                text: `${path} ${min}..${max}`,
                confidence: 1,
              };
              const inRange = (x: number) =>
                (min === undefined || (minInclusive ? x >= min : x > min)) &&
                (max === undefined || (maxInclusive ? x <= max : x < max));
              const expected = items
                .filter((_, n) => (facts[n]![path] ?? []).some((x) => typeof x === 'number' && inRange(x)))
                .map((i) => i.url);
              const b = new SqlBuilder([]);
              const where = b.constraint(k);
              if (Number.isFinite(min ?? 0)) expect(where).toContain('jsonb_path_exists');
              const r = await c.query<{ url: string }>(
                `SELECT url FROM ${own} WHERE ${where} ORDER BY url`,
                b.params,
              );
              expect(
                r.rows.map((x) => x.url),
                k.text,
              ).toEqual(expected.sort());
              // the same rows by the numbers table's index
              const bn = new SqlBuilder([], `${own}_numbers`);
              const byNumbers = bn.conditions([k]);
              if (Number.isFinite(min ?? 0)) expect(byNumbers.join()).toContain(`${own}_numbers`);
              const rn = await c.query<{ url: string }>(
                `SELECT url FROM ${own} WHERE ${byNumbers.join(' AND ')} ORDER BY url`,
                bn.params,
              );
              expect(
                rn.rows.map((x) => x.url),
                `${k.text} (numbers)`,
              ).toEqual(expected);
            }
          // two ranges at once: one intersection of the numbers' URLs; beside a value constraint
          // the terms index finds, the ranges stay tests of the facts
          const range = (path: string, min: number, max: number): Constraint => ({
            kind: 'range',
            target: { path },
            min,
            max,
            minInclusive: true,
            maxInclusive: true,
            phrase: '',
            text: `${path} ${min}..${max}`,
            confidence: 1,
          });
          const within = (n: number, path: string, min: number, max: number) =>
            (facts[n]![path] ?? []).some((x) => typeof x === 'number' && x >= min && x <= max);
          const pair = [range('dot.ted key', 2, 6), range('we"ird\\key', 0, 10)];
          const pairBuilder = new SqlBuilder([], `${own}_numbers`);
          const pairWhere = pairBuilder.conditions(pair);
          expect(pairWhere).toHaveLength(1);
          expect(pairWhere[0]).toContain('INTERSECT');
          const pairRows = await c.query<{ url: string }>(
            `SELECT url FROM ${own} WHERE ${pairWhere.join(' AND ')} ORDER BY url`,
            pairBuilder.params,
          );
          expect(pairRows.rows.map((x) => x.url)).toEqual(
            items
              .filter((_, n) => within(n, 'dot.ted key', 2, 6) && within(n, 'we"ird\\key', 0, 10))
              .map((i) => i.url)
              .sort(),
          );
          const named: Constraint = {
            kind: 'value',
            path: 'plain',
            values: ['text'],
            contains: [],
            negated: false,
            phrase: '',
            text: 'plain text',
            confidence: 1,
          };
          const mixed = new SqlBuilder([], `${own}_numbers`).conditions([named, ...pair]);
          expect(mixed.join(' AND ')).not.toContain(`${own}_numbers`);

          // derived quantities of two paths' first numbers (NULL, so failing, when either is not a number)
          const first = (n: number, path: string): number | undefined => {
            const v = facts[n]![path]?.[0];
            return typeof v === 'number' ? v : undefined;
          };
          const ops: Record<string, (x: number, y: number) => number | undefined> = {
            sum: (x, y) => x + y,
            difference: (x, y) => x - y,
            gap: (x, y) => Math.abs(x - y),
            ratio: (x, y) => (y === 0 ? undefined : x / y),
          };
          for (const [op, f] of Object.entries(ops))
            for (const [a, b] of [
              ['dot.ted key', 'we"ird\\key'],
              ['we"ird\\key', 'plain'],
            ])
              for (const [min, max, minInclusive, maxInclusive] of [
                [-5, 5, true, true],
                [0, undefined, false, true],
                [undefined, 2, true, false],
                [undefined, undefined, true, true],
              ] as const) {
                const k: Constraint = {
                  kind: 'range',
                  target: { derived: { op: op as 'sum', a: a!, b: b!, label: op } },
                  ...(min === undefined ? {} : { min }),
                  ...(max === undefined ? {} : { max }),
                  minInclusive,
                  maxInclusive,
                  phrase: '',
                  text: `${a} ${op} ${b} ${min}..${max}`,
                  confidence: 1,
                };
                const expected = items
                  .filter((_, n) => {
                    const [x, y] = [first(n, a!), first(n, b!)];
                    const v = x === undefined || y === undefined ? undefined : f(x, y);
                    // no bounds: every row (as before)
                    if (min === undefined && max === undefined) return true;
                    return (
                      v !== undefined &&
                      (min === undefined || (minInclusive ? v >= min : v > min)) &&
                      (max === undefined || (maxInclusive ? v <= max : v < max))
                    );
                  })
                  .map((i) => i.url);
                const sb = new SqlBuilder([]);
                const where = sb.constraint(k);
                if (min !== undefined || max !== undefined) expect(where).toContain('jsonb_path_exists');
                const r = await c.query<{ url: string }>(
                  `SELECT url FROM ${own} WHERE ${where} ORDER BY url`,
                  sb.params,
                );
                expect(
                  r.rows.map((x) => x.url),
                  k.text,
                ).toEqual(expected.sort());
              }
        } finally {
          await c.end();
        }
      } finally {
        await dropTables(own);
        await s.close();
      }
    });

    it("keeps a derived quantity's quantiles and a site's count until its next write", async (ctx) => {
      if (skip) ctx.skip();
      const own = `${table}_quantiles`;
      const s = await PgStore.open({ connectionString: server.url, table: own, maxConnections: 2 });
      try {
        const some = allMovies.slice(0, 60);
        await s.upsert('movies', some);
        const lost = testSite('movies').ask('movies that lost money');
        const ask = async () =>
          (
            await s.searchWithOutcome({
              query: lost.text,
              site: ['movies'],
              numResults: 5,
              understanding: lost,
            })
          ).outcome?.orders?.[0]?.quantiles;
        const top = testSite('movies').ask('the highest rated movies');
        const matched = async () =>
          (
            await s.searchWithOutcome({
              query: top.text,
              site: ['movies'],
              numResults: 5,
              understanding: top,
            })
          ).outcome?.matched;
        const first = await ask();
        expect(first).toHaveLength(11);
        expect(await ask()).toEqual(first);
        expect(await matched()).toBe(60);
        expect(await matched()).toBe(60);
        // a film that lost more than any other: the lowest quantile follows it
        const flop = {
          ...some[0]!,
          schema_object: {
            ...some[0]!.schema_object,
            additionalProperty: [
              { '@type': 'PropertyValue', name: 'production budget', value: 9e9 },
              { '@type': 'PropertyValue', name: 'worldwide gross', value: 1 },
            ],
          },
        };
        await s.upsert('movies', [flop]);
        const after = await ask();
        expect(after?.[0]).toBeLessThan(first![0]!);
        expect(after?.[0]).toBeCloseTo(1 - 9e9);
        await s.upsert('movies', [{ ...flop, url: `${flop.url}#again` }]);
        expect(await matched()).toBe(61);
        await s.deleteSite('movies');
        expect(await matched()).toBe(0);
        await s.upsert('movies', some);
        expect(await ask()).toEqual(first);
        expect(await matched()).toBe(60);
      } finally {
        await dropTables(own);
        await s.close();
      }
    });

    it("keeps each site's profile and names from the table", async (ctx) => {
      if (skip) ctx.skip();
      const [p] = store.profiles(['cars']);
      if (!p || 'unchanged' in p) throw new Error('no profile');
      expect(p.itemCount).toBe(100);
      expect(p.properties.find((x) => x.path === 'weight')).toMatchObject({
        kind: 'number',
        displayUnit: 'lb',
      });
      const again = await PgStore.open({ connectionString: server.url, table, maxConnections: 1 });
      try {
        const [q] = again.profiles(['movies']);
        expect(q && 'itemCount' in q ? q.itemCount : 0).toBe(movies.length);
        expect(again.findNames('tell me about Pale Rider', ['movies'])[0]?.items[0]?.name).toBe('Pale Rider');
      } finally {
        await again.close();
      }
    });

    it('makes the facts of rows written by another version of the extractor again when it opens', async (ctx) => {
      if (skip) ctx.skip();
      const t = `${table}_facts`;
      const recipe: StoredItem = {
        url: 'https://recipes.example/1',
        name: 'Soup',
        site: 'recipes',
        '@type': 'Recipe',
        schema_object: { '@type': 'Recipe', name: 'Soup', nutrition: { calories: '350 calories' } },
      };
      const first = await PgStore.open({ connectionString: server.url, table: t, maxConnections: 1 });
      const c = new pg.Client({ connectionString: server.url });
      await c.connect();
      try {
        await first.upsert('recipes', [recipe]);
        await first.close();
        // as an older extractor left it: the calories a string, its version another
        await c.query(`UPDATE ${t} SET facts = '{"nutrition.calories": ["350 calories"]}'::jsonb`);
        await c.query(`UPDATE ${t}_meta SET value = '1' WHERE key = 'facts'`);
        const again = await PgStore.open({ connectionString: server.url, table: t, maxConnections: 1 });
        await again.close();
        const facts = await c.query<{ facts: Record<string, unknown> }>(`SELECT facts FROM ${t}`);
        expect(facts.rows[0]?.facts).toEqual(compactFacts(extractFacts(recipe.schema_object)));
        expect(facts.rows[0]?.facts['nutrition.calories']).toEqual([350]);
        const noted = await c.query<{ value: string }>(`SELECT value FROM ${t}_meta WHERE key = 'facts'`);
        expect(noted.rows[0]?.value).toBe(String(FACTS_VERSION));
      } finally {
        await c.end();
        await dropTables(t);
      }
    });

    it('takes the GIN and HNSW indexes in its real search statements (EXPLAIN), after a bulk load', async (ctx) => {
      if (skip) ctx.skip();
      // every demo item (3,606) in a table of its own: one bulk load builds the HNSW index after
      // the rows and VACUUM ANALYZEs, so the planner has statistics and no GIN pending list
      const own = `${table}_plans`;
      const big = await PgStore.open({ connectionString: server.url, table: own, maxConnections: 2 });
      try {
        const t = performance.now();
        for (const s of demo) await big.upsert(s.site, s.items);
        const perSecond = (3606 / (performance.now() - t)) * 1000;
        console.log(`bulk load of the demo sites into PGlite: ${Math.round(perSecond)} items/s`);
        const gin = `Bitmap Index Scan on ${own}_doc`;
        const hnsw = `Index Scan using ${own}_embedding`;
        for (const ask of [
          { query: 'westerns with clint eastwood', site: ['movies'] },
          { query: 'extraterrestrial', site: ['all'] },
        ]) {
          const plan = await big.explainSearch(ask);
          expect(plan.keyword, ask.query).toContain(gin);
          expect(plan.vector, ask.query).toContain(hnsw);
        }
        // a small site: its words through GIN; its few rows by the site index, sorted (no HNSW needed)
        const cars = await big.explainSearch({ query: 'ford pickup', site: ['cars'] });
        expect(cars.keyword).toContain(gin);
        expect(cars.vector).toContain(`Bitmap Index Scan on ${own}_site`);
        expect((await big.search({ query: 'extraterrestrial', site: ['all'], numResults: 100 })).length).toBe(
          100,
        );
        // value constraints find their rows by the GIN index on terms, and exactly the rows the
        // exact test alone finds (a value, words of a value, punctuation, a negation)
        const c = new pg.Client({ connectionString: server.url });
        await c.connect();
        try {
          // the HNSW graph of a bulk load is built with m 12 and ef_construction 48 (HNSW_M)
          const built = await c.query<{ o: string[] }>(
            `SELECT reloptions AS o FROM pg_class WHERE relname = $1`,
            [`${own}_embedding`],
          );
          expect(built.rows[0]?.o).toEqual(['m=12', 'ef_construction=48']);
          const constraints = [
            ...[
              'westerns with clint eastwood',
              'horror films with zombies',
              'documentary about music',
              'rated pg-13 movies',
            ].flatMap((q) => testSite('movies').ask(q).constraints),
            ...testSite('cars').ask('japanese cars').constraints,
          ].filter((k) => k.kind === 'value');
          constraints.push({ ...constraints[0]!, negated: true });
          expect(constraints.length).toBeGreaterThanOrEqual(6);
          for (const k of constraints) {
            const counts: number[] = [];
            for (const indexed of [true, false]) {
              const b = new SqlBuilder([]);
              const where = b.constraint(k, indexed);
              counts.push(
                Number(
                  (await c.query<{ n: string }>(`SELECT count(*) AS n FROM ${own} WHERE ${where}`, b.params))
                    .rows[0]!.n,
                ),
              );
              if (indexed && !k.negated) {
                const plan = (
                  await c.query<{ 'QUERY PLAN': string }>(
                    `EXPLAIN SELECT url FROM ${own} WHERE ${where}`,
                    b.params,
                  )
                ).rows
                  .map((r) => r['QUERY PLAN'])
                  .join('\n');
                expect(plan, k.text).toContain(`Bitmap Index Scan on ${own}_terms`);
              }
            }
            expect(counts[0], k.text).toBe(counts[1]);
            if (!k.negated) expect(counts[0], k.text).toBeGreaterThan(0);
          }
        } finally {
          await c.end();
        }
      } finally {
        await dropTables(own);
        await big.close();
      }
    }, 120_000);

    it('builds its indexes once after a bulk load, and an incremental load after it finds what one load of all would', async (ctx) => {
      if (skip) ctx.skip();
      const some = allMovies.slice(0, 1_300);
      const [inParts, atOnce] = [`${table}_parts`, `${table}_once`];
      const parts = await PgStore.open({ connectionString: server.url, table: inParts, maxConnections: 2 });
      const once = await PgStore.open({ connectionString: server.url, table: atOnce, maxConnections: 2 });
      try {
        // a bulk load into the empty table leaves the GIN and HNSW indexes for persist
        await parts.upsert('movies', some.slice(0, 1_100));
        expect(await indexes(inParts)).toEqual(deferredIndexes(inParts));
        await parts.persist();
        expect(await indexes(inParts)).toEqual(allIndexes(inParts));
        // then a few more (each index kept row by row), and a replaced one
        await parts.upsert('movies', some.slice(1_100));
        await parts.upsert('movies', [{ ...some[0]!, name: `${some[0]!.name} (restored)` }]);
        await once.upsert('movies', [{ ...some[0]!, name: `${some[0]!.name} (restored)` }, ...some.slice(1)]);
        // a search builds what a load left (here without persist)
        for (const query of [
          'westerns with clint eastwood',
          'extraterrestrial invasion',
          'romantic comedy',
        ]) {
          const [a, b] = await Promise.all(
            [parts, once].map((s) => s.search({ query, site: ['movies'], numResults: 20 })),
          );
          expect(
            a!.map((r) => [r.url, r.name]),
            query,
          ).toEqual(b!.map((r) => [r.url, r.name]));
        }
        expect(await indexes(atOnce)).toContain(`${atOnce}_embedding`);
        expect(await parts.count()).toBe(1_300);
      } finally {
        await dropTables(inParts, atOnce);
        await parts.close();
        await once.close();
      }
    }, 120_000);

    it('takes a load sent as many small upserts (as `askbus load` sends it) for one bulk load: indexes dropped once it is big enough, built at persist', async (ctx) => {
      if (skip) ctx.skip();
      const own = `${table}_batches`;
      const s = await PgStore.open({ connectionString: server.url, table: own, maxConnections: 2 });
      try {
        const some = allMovies.slice(0, 1_300);
        // into an empty table, the first upsert is a bulk load already: the indexes wait for persist
        expect(await s.upsert('movies', some.slice(0, 260))).toMatchObject({ upserted: 260, total: 260 });
        expect(await indexes(own)).toEqual(deferredIndexes(own));
        await s.persist();
        expect(await indexes(own)).toEqual(allIndexes(own));
        // 780 rows more in 3 upserts: under BULK_REBUILD_MIN, each index kept row by row
        for (let i = 260; i < 1_040; i += 260) await s.upsert('movies', some.slice(i, i + 260));
        expect(await indexes(own)).toContain(`${own}_embedding`);
        // the 4th brings the load to 1,040 rows: the GIN and HNSW indexes wait for persist
        expect(await s.upsert('movies', some.slice(1_040, 1_300))).toMatchObject({
          upserted: 260,
          total: 1_300,
        });
        expect(await indexes(own)).toEqual(deferredIndexes(own));
        // its totals kept without counting the table, and right (60 of these rows replaced)
        expect(await s.upsert('movies', some.slice(1_240, 1_300))).toMatchObject({
          upserted: 60,
          total: 1_300,
        });
        await s.persist();
        expect(await indexes(own)).toEqual(allIndexes(own));
        // after persist a small write is a load of its own again: the indexes stay
        await s.upsert('movies', [{ ...some[0]!, name: `${some[0]!.name} (restored)` }]);
        expect(await indexes(own)).toContain(`${own}_embedding`);
        expect(await s.count()).toBe(1_300);
        const found = await s.search({
          query: 'westerns with clint eastwood',
          site: ['movies'],
          numResults: 10,
        });
        expect(found.length).toBeGreaterThan(0);
      } finally {
        await dropTables(own);
        await s.close();
      }
    }, 120_000);

    it('knows (names, profile, vocabulary) the rows a failed load committed, and only those', async (ctx) => {
      if (skip) ctx.skip();
      const own = `${table}_partial`;
      const s = await PgStore.open({ connectionString: server.url, table: own, maxConnections: 2 });
      try {
        // the 600th item cannot be stored (jsonb takes no \u0000): the INSERTs before the one
        // that holds it are committed (writeBounds), that one fails
        const some = allMovies
          .slice(0, 700)
          .map((m, i) =>
            i === 600 ? { ...m, schema_object: { ...m.schema_object, description: 'a\u0000b' } } : m,
          );
        const committedRows = writeBounds(700).find(([from, to]) => from <= 600 && 600 < to)![0];
        expect(committedRows).toBeGreaterThan(10); // some[10] among them
        await expect(s.upsert('movies', some)).rejects.toThrow();
        expect(await s.count()).toBe(committedRows);
        expect(s.profiles(['movies'])[0]).toMatchObject({ itemCount: committedRows });
        const committed = some[10]!;
        const lost = some[650]!;
        expect(s.findNames(committed.name, ['movies']).flatMap((n) => n.items.map((i) => i.url))).toContain(
          committed.url,
        );
        expect(s.findNames(lost.name, ['movies']).flatMap((n) => n.items.map((i) => i.url))).not.toContain(
          lost.url,
        );
        expect(s.vocabulary.documents).toBe(committedRows);
      } finally {
        await dropTables(own);
        await s.close();
      }
    }, 120_000);

    it('keeps a numbers table of every fact number through bulk and row writes, replacements, deletes and a lost index, and walks it for a superlative', async (ctx) => {
      if (skip) ctx.skip();
      const own = `${table}_numbers_kept`;
      const pool = new pg.Pool({ connectionString: server.url, max: 2 });
      const statements: string[] = [];
      const query = pool.query.bind(pool) as (...a: unknown[]) => Promise<unknown>;
      (pool as unknown as { query: (...a: unknown[]) => Promise<unknown> }).query = (...a: unknown[]) => {
        const text = typeof a[0] === 'string' ? a[0] : (a[0] as { text: string }).text;
        statements.push(text);
        return query(...a);
      };
      let s = await PgStore.open({ pool, table: own });
      /** The numbers the table should hold: each number of each row's facts, with its place. */
      const expected = (items: StoredItem[]): string[] =>
        items
          .flatMap((i) =>
            Object.entries(compactFacts(extractFacts(i.schema_object))).flatMap(([path, values]) =>
              values.flatMap((v, pos) =>
                typeof v === 'number' ? [`${i.url} ${i.site} ${path} ${pos} ${v}`] : [],
              ),
            ),
          )
          .sort();
      const held = async (): Promise<string[]> =>
        (
          await pool.query<{ url: string; site: string; path: string; pos: number; value: number }>(
            `SELECT url, site, path, pos, value FROM ${own}_numbers`,
          )
        ).rows
          .map((r) => `${r.url} ${r.site} ${r.path} ${r.pos} ${r.value}`)
          .sort();
      try {
        const some = allMovies.slice(0, 1_300);
        // a bulk load: the numbers made from every row at persist
        await s.upsert('movies', some.slice(0, 1_100));
        await s.persist();
        expect(await held()).toEqual(expected(some.slice(0, 1_100)));
        // rows written one batch at a time keep theirs, a replaced row its new ones only
        const changed = {
          ...some[0]!,
          schema_object: { ...some[0]!.schema_object, duration: 'PT1H1M', weight: [3, 'x', 7] },
        };
        await s.upsert('movies', some.slice(1_100));
        await s.upsert('movies', [changed]);
        const fewCars = cars.slice(0, 20);
        await s.upsert('cars', fewCars);
        const now = [changed, ...some.slice(1), ...fewCars];
        expect(await held()).toEqual(expected(now));
        await s.deleteSite('cars');
        expect(await held()).toEqual(expected(now.slice(0, 1_300)));

        // the superlatives over the whole site walk the numbers' index, and find what a scan does
        for (const [q, path] of [
          ['the highest rated movies', 'aggregateRating'],
          ['the shortest movies', 'duration'],
        ] as const) {
          const u = testSite('movies').ask(q);
          expect(u.orders[0]).toMatchObject({ strength: 'sort', target: { path } });
          statements.length = 0;
          const r = await s.searchWithOutcome({
            query: u.text,
            site: ['movies'],
            numResults: 10,
            understanding: u,
          });
          expect(statements.some((t) => t.includes(`${own}_numbers n JOIN`))).toBe(true);
          const first = (i: StoredItem) => compactFacts(extractFacts(i.schema_object))[path]?.[0];
          const values = now
            .slice(0, 1_300)
            .map(first)
            .filter((v): v is number => typeof v === 'number')
            .sort((x, y) => (u.orders[0]!.direction === 'desc' ? y - x : x - y));
          expect(r.items.map(first), q).toEqual(values.slice(0, 10));
        }

        // an index lost (a crash in a bulk load) is made again, with the numbers, on open
        await s.close();
        await pool.query(`DELETE FROM ${own}_numbers WHERE path = 'duration'`);
        await pool.query(`DROP INDEX ${own}_numbers_path`);
        s = await PgStore.open({ pool, table: own });
        expect(await held()).toEqual(expected(now.slice(0, 1_300)));
      } finally {
        await dropTables(own);
        await s.close();
        await pool.end();
      }
    }, 120_000);

    it('answers ranges on numbers ordered by numbers from the numbers table alone: the rows, order and count the facts give', async (ctx) => {
      if (skip) ctx.skip();
      const own = `${table}_numbers_top`;
      const pool = new pg.Pool({ connectionString: server.url, max: 2 });
      const statements: string[] = [];
      const query = pool.query.bind(pool) as (...a: unknown[]) => Promise<unknown>;
      (pool as unknown as { query: (...a: unknown[]) => Promise<unknown> }).query = (...a: unknown[]) => {
        statements.push(typeof a[0] === 'string' ? a[0] : (a[0] as { text: string }).text);
        return query(...a);
      };
      const s = await PgStore.open({ pool, table: own });
      const byFacts = await PgStore.open({
        connectionString: server.url,
        table: own,
        searchByNumbers: false,
      });
      try {
        // some movies of another type in the site: a type filter that tests something
        const series = allMovies.slice(0, 60).map((m) => ({
          ...m,
          url: `${m.url}#series`,
          '@type': 'TVSeries',
          schema_object: { ...m.schema_object, '@type': 'TVSeries' },
        }));
        await s.upsert('movies', [...allMovies.slice(0, 900), ...series]);
        await s.upsert('cars', cars);
        const asked: [string, string, string[]?][] = [
          ['movies', 'movies that lost money'],
          ['movies', 'highest grossing movies of 2000'],
          ['movies', 'the most expensive movies of the 1990s', ['Movie']],
          ['movies', 'the highest grossing movies of the 1990s', ['TVSeries']],
          ['movies', 'the longest movies made before 1960'],
          ['cars', 'heavy 8-cylinder cars from the early 70s'],
          ['cars', 'the most economical cars from 1980 to 1985'],
        ];
        for (const [site, q, types] of asked) {
          const u = testSite(site as 'movies').ask(q);
          expect(u.orders.length, q).toBeGreaterThan(0);
          expect(
            u.constraints.every((k) => k.kind === 'range'),
            q,
          ).toBe(true);
          const params = {
            query: u.text,
            site: [site],
            numResults: 30,
            understanding: u,
            ...(types ? { types } : {}),
          };
          statements.length = 0;
          const got = await s.searchWithOutcome(params);
          expect(
            statements.some(
              (t) =>
                t.includes('count(*) OVER () AS matched') &&
                t.includes(`${own}_numbers x0`) &&
                !t.includes('jsonb_path_exists'),
            ),
            q,
          ).toBe(true);
          const want = await byFacts.searchWithOutcome(params);
          expect(got.outcome?.matched, q).toBe(want.outcome?.matched);
          expect(got.outcome?.matched, q).toBeGreaterThan(0);
          expect(
            got.items.map((i) => i.url),
            q,
          ).toEqual(want.items.map((i) => i.url));
          if (types) for (const i of got.items) expect(i['@type'], q).toBe(types[0]);
        }
      } finally {
        await byFacts.close();
        await dropTables(own);
        await s.close();
        await pool.end();
      }
    }, 120_000);

    it('deletes a site', async (ctx) => {
      if (skip) ctx.skip();
      expect(await store.deleteSite('cars')).toBe(100);
      expect((await store.sites()).map((s) => s.name)).toEqual(['movies']);
      // reopening learns the vocabulary from the table and re-embeds nothing
      const again = await PgStore.open({ connectionString: server.url, table, maxConnections: 1 });
      try {
        expect(again.vocabulary.documents).toBe(movies.length);
        expect(
          (await again.search({ query: 'extraterrestrial', site: ['movies'], numResults: 5 })).length,
        ).toBe(5);
      } finally {
        await again.close();
      }
    });
  });
}
