import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts, Understanding, type Constraint, type StoredItem } from '@askbus/contracts';
import { loadDemoSites } from '@askbus/demo-data';
import { testBus, testNats } from '@askbus/bus/testing';
import { extractFacts, factsByPath, satisfies } from '@askbus/understand';
import { penguinItems, testSite } from '@askbus/understand/testing';
import { ColumnSelection, IndexStore } from './index-store';
import { serveRetriever } from './index';

/**
 * The embedded index with understood questions: profiles kept by upserts and deletes and served
 * over retrieve.v1.profile (by version), names found in a question, items by URL, and searches
 * whose constraints filter, whose orders sort and whose impossible constraints are relaxed.
 */
const demo = loadDemoSites();
const movies = demo.find((s) => s.site === 'movies')!.items;
const cars = demo.find((s) => s.site === 'cars')!.items;

let store: IndexStore;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'askbus-structured-'));
  store = await IndexStore.open({ dataDir: dir, embedder: null });
  await store.upsert('movies', movies);
  await store.upsert('cars', cars);
  await store.upsert('penguins', penguinItems());
}, 60_000);

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const understood = (site: 'movies' | 'cars' | 'penguins', q: string) => testSite(site).ask(q);

describe('profiles', () => {
  it('learns each site when it is loaded: kinds, units, ranges, values, main types', () => {
    const [cars] = store.profiles(['cars']);
    if (!cars || 'unchanged' in cars) throw new Error('no cars profile');
    expect(cars.mainTypes).toEqual(['Car']);
    const weight = cars.properties.find((p) => p.path === 'weight')!;
    expect(weight).toMatchObject({
      kind: 'number',
      unit: 'g',
      displayUnit: 'lb',
      dimension: 'mass',
      count: 406,
    });
    const origin = cars.properties.find((p) => p.path === 'countryOfOrigin')!;
    expect(origin.values?.map((v) => v.value).sort()).toEqual(['Europe', 'Japan', 'USA']);
    expect(cars.properties.find((p) => p.path === 'vehicleModelDate')).toMatchObject({
      kind: 'date',
      min: 1970,
      max: 1982,
    });
  });

  it('answers by version and follows upserts and deletes', async () => {
    const [before] = store.profiles(['penguins']);
    const version = before!.version;
    expect(store.profiles(['penguins'], { penguins: version })).toEqual([
      { site: 'penguins', version, unchanged: true },
    ]);
    const extra: StoredItem = {
      url: 'https://penguins.example/observation/extra',
      name: 'Emperor penguin',
      site: 'penguins',
      '@type': 'Observation',
      schema_object: {
        '@type': 'Observation',
        variableMeasured: [{ '@type': 'PropertyValue', name: 'species', value: 'Emperor' }],
      },
    };
    await store.upsert('penguins', [extra]);
    const [after] = store.profiles(['penguins'], { penguins: version });
    if (!after || 'unchanged' in after) throw new Error('the profile should have changed');
    expect(
      after.properties.find((p) => p.path === 'variableMeasured.species')?.values?.map((v) => v.value),
    ).toContain('Emperor');
    // a JSON-LD graph's furniture does not make the site about it
    await store.upsert('graph', [
      {
        url: 'https://g.example/',
        name: 'G',
        site: 'graph',
        '@type': 'WebSite',
        schema_object: { '@type': 'WebSite' },
      },
      {
        url: 'https://g.example/org',
        name: 'G Inc',
        site: 'graph',
        '@type': 'Organization',
        schema_object: { '@type': 'Organization' },
      },
      ...['a', 'b'].map((k) => ({
        url: `https://g.example/${k}`,
        name: k,
        site: 'graph',
        '@type': 'Recipe',
        schema_object: { '@type': 'Recipe' },
      })),
    ]);
    expect((store.profiles(['graph'])[0] as { mainTypes: string[] }).mainTypes).toEqual(['Recipe']);
    expect(await store.deleteSite('graph')).toBe(4);
    expect(store.profiles(['graph'])).toEqual([]);
  });
});

describe('names and items', () => {
  it('finds the exact title before longer titles that contain it, and items by URL', () => {
    const [m] = store.findNames('Titanic', ['movies']);
    expect(m).toMatchObject({ exact: true });
    expect(m!.items.map((i) => i.name)).toEqual(['Titanic']);
    const url = m!.items[0]!.url;
    expect(store.getItems([url, 'https://nowhere.example/']).map((i) => i.name)).toEqual(['Titanic']);
  });
});

describe('search with an understanding', () => {
  it('filters by the constraints and sorts by the superlative', async () => {
    const u = understood('penguins', 'the heaviest penguins on Dream island');
    const { items, outcome } = await store.searchWithOutcome({
      query: u.text,
      site: ['penguins'],
      numResults: 10,
      understanding: u,
    });
    const mass = (i: StoredItem) =>
      (i.schema_object.variableMeasured as { name: string; value: unknown }[]).find(
        (p) => p.name === 'body mass',
      )?.value as number;
    const island = (i: StoredItem) =>
      (i.schema_object.variableMeasured as { name: string; value: unknown }[]).find(
        (p) => p.name === 'island',
      )?.value;
    expect(items.every((i) => island(i) === 'Dream')).toBe(true);
    const dream = penguinItems().filter((i) => island(i) === 'Dream' && mass(i) !== undefined);
    expect(outcome?.matched).toBe(dream.length);
    const heaviest = Math.max(...dream.map(mass));
    expect(mass(items[0]!)).toBe(heaviest);
    expect(items.map(mass)).toEqual([...items.map(mass)].sort((a, b) => b - a));
  });

  it('ranks a question without orders as when every passing item was listed with its fit', async () => {
    // the reference: structuredSearch without the selection's firstByUrl lists every passing item
    const search = (site: 'movies' | 'cars', q: string, numResults: number) => {
      const u = understood(site, q);
      return store.searchWithOutcome({ query: u.text, site: [site], numResults, understanding: u });
    };
    const firstByUrl = ColumnSelection.prototype.firstByUrl;
    const unranked: number[] = [];
    const spy = function (this: ColumnSelection, n: number, skip: ReadonlySet<string>) {
      const out = firstByUrl.call(this, n, skip);
      unranked.push(out.length);
      return out;
    };
    const questions: Array<['movies' | 'cars', string]> = [
      ['movies', 'comedies from the 90s'],
      ['movies', 'dramas'],
      ['movies', 'movies from 1994'],
      ['cars', 'japanese cars'],
      ['cars', 'cars from the 70s'],
      ['cars', 'four-cylinder cars'],
      // words that rank none of the passing items: every result is one of the first by URL
      ['cars', 'cars from the 70s with a sunroof'],
      ['movies', 'dramas about chess'],
      ['cars', 'japanese cars with leather seats'],
    ];
    for (const [site, q] of questions) {
      expect(understood(site, q).orders).toEqual([]);
      expect(understood(site, q).constraints.length).toBeGreaterThan(0);
      for (const n of [3, 20, 300]) {
        ColumnSelection.prototype.firstByUrl = spy;
        const fast = await search(site, q, n);
        (ColumnSelection.prototype as { firstByUrl?: unknown }).firstByUrl = undefined;
        const listed = await search(site, q, n);
        ColumnSelection.prototype.firstByUrl = firstByUrl;
        expect(fast.items.map((i) => [i.url, i.retrievalScore])).toEqual(
          listed.items.map((i) => [i.url, i.retrievalScore]),
        );
        expect(fast.outcome).toEqual(listed.outcome);
      }
    }
    // some of them were filled by items the words did not rank
    expect(unranked.some((k) => k > 0)).toBe(true);
  });

  it('answers "90s" on the release date, not on vote counts', async () => {
    const u = understood('movies', 'best rated dramas from the 90s');
    const { items } = await store.searchWithOutcome({
      query: u.text,
      site: ['movies'],
      numResults: 5,
      understanding: u,
    });
    for (const i of items) {
      expect(String(i.schema_object.datePublished)).toMatch(/^199/);
      expect(i.schema_object.genre).toContain('Drama');
    }
    expect(items[0]!.name).toBe('The Shawshank Redemption');
  });

  it('relaxes the least sure constraint when together they exclude everything, and says which', async () => {
    const u = Understanding.parse({
      ...understood('cars', 'japanese cars heavier than 4500 pounds'),
    });
    const { items, outcome } = await store.searchWithOutcome({
      query: u.text,
      site: ['cars'],
      numResults: 5,
      understanding: u,
    });
    expect(outcome!.relaxed).toHaveLength(1);
    expect(items.length).toBeGreaterThan(0);
    expect(outcome!.matched).toBeGreaterThan(0);
  });

  it('puts an exactly named item first on a plain question', async () => {
    const u = understood('movies', 'Titanic');
    const { items } = await store.searchWithOutcome({
      query: 'Titanic',
      site: ['movies'],
      numResults: 5,
      understanding: u,
    });
    expect(items[0]!.name).toBe('Titanic');
  });
});

describe('the subjects over NATS', () => {
  it('serves profile, names and items, and search with its outcome', async () => {
    const nats = await testNats();
    const bus = await testBus(nats.url, 'retriever');
    const client = await testBus(nats.url, 'router');
    try {
      await serveRetriever(bus, store);
      // the subscriptions are at the server before the other connection asks (no_responders otherwise)
      await bus.nc.flush();
      const { profiles } = await client.request(contracts.profile, { site: ['cars'], known: {} });
      expect(profiles.map((p) => p.site)).toEqual(['cars']);
      const { matches } = await client.request(contracts.names, {
        site: ['movies'],
        text: 'who directed Jurassic Park',
      });
      expect(matches[0]?.items[0]?.name).toBe('Jurassic Park');
      const u = understood('cars', 'cars with more than 200 horsepower');
      const reply = await client.request(contracts.search, {
        query: u.text,
        site: ['cars'],
        numResults: 50,
        understanding: u,
      });
      expect(reply.outcome?.matched).toBe(reply.items.length);
      for (const c of reply.items)
        expect(
          (c.schema_object.vehicleEngine as { enginePower: { value: number } }).enginePower.value,
        ).toBeGreaterThan(200);
    } finally {
      await client.drain();
      await bus.drain();
      await nats.stop();
    }
  });
});

describe('selection from the columns', () => {
  it("selects what each constraint's own test passes, at open and closed bounds and negated", () => {
    const factsOf = new Map(cars.map((item) => [item.url, factsByPath(extractFacts(item.schema_object))]));
    const years = [...factsOf.values()].map((f) => f.get('vehicleModelDate')?.[0]?.num ?? NaN);
    expect(years.filter((y) => y === 1976).length).toBeGreaterThan(10); // ties at the bounds
    const range = (
      min: number | undefined,
      max: number | undefined,
      minInclusive: boolean,
      maxInclusive: boolean,
    ): Constraint => ({
      kind: 'range',
      target: { path: 'vehicleModelDate' },
      ...(min === undefined ? {} : { min }),
      ...(max === undefined ? {} : { max }),
      minInclusive,
      maxInclusive,
      phrase: 'p',
      text: 't',
      confidence: 0.9,
    });
    const value = (values: string[], negated: boolean): Constraint => ({
      kind: 'value',
      path: 'countryOfOrigin',
      values,
      contains: [],
      negated,
      phrase: 'p',
      text: 't',
      confidence: 0.9,
    });
    const cases = [
      range(1976, 1980, true, true),
      range(1976, 1980, false, false),
      range(1976, 1980, true, false),
      range(1976, 1980, false, true),
      range(1976, undefined, false, false),
      range(undefined, 1976, false, false),
      range(undefined, 1976, false, true),
      range(1976, 1976, true, true),
      range(1976, 1976, false, true),
      range(1990, undefined, true, true),
      value(['Japan'], false),
      value(['Japan'], true),
      value(['Japan', 'Europe'], true),
    ];
    const select = (k: Constraint): string[] =>
      (
        store as unknown as {
          select(c: unknown[], s: Set<string>, t: undefined): ColumnSelection;
        }
      )
        .select([k], new Set(['cars']), undefined)
        .fits([])
        .urls.sort();
    for (const k of cases) {
      const expected = cars
        .filter((item) => satisfies(k, factsOf.get(item.url)!))
        .map((item) => item.url)
        .sort();
      expect(select(k), JSON.stringify(k)).toEqual(expected);
    }
    expect(select(range(1976, 1976, true, true)).length).toBeGreaterThan(10);
  });
});
