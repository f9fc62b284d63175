import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { nodeToItem } from '@askbus/ingest';
import { readQuestions } from './questions';
import { expectedFor, problemsOf } from './score';
import { SITES, type EvalSite } from './sites/index';
import { regionOf } from './sites/earthquakes';

const here = fileURLToPath(new URL('.', import.meta.url));
const sites = Object.fromEntries(Object.entries(SITES).map(([name, make]) => [name, make()])) as Record<
  string,
  EvalSite
>;

const property = (item: Record<string, unknown>, key: string, name: string): unknown =>
  (item[key] as Array<{ name: string; value: unknown }>).find((p) => p.name === name)?.value;

describe('the evaluation sites', () => {
  it('pair every demo item with the row it came from', () => {
    const movies = sites.movies!;
    expect(movies.records).toHaveLength(3200);
    const titanic = movies.records.find((r) => r.url === 'https://movies.askbus.example/movie/titanic-1997');
    expect(titanic?.row).toMatchObject({ Title: 'Titanic', Director: 'James Cameron' });
    // the converter's century repair reaches the predicates: "Gone with the Wind" is 1939
    const gone = movies.records.find((r) => r.name === 'Gone with the Wind')!;
    expect(movies.readDate!(gone.row['Release Date'], 'Release Date')?.getUTCFullYear()).toBe(1939);
    const cars = sites.cars!;
    expect(cars.records).toHaveLength(406);
    expect(cars.records[0]).toMatchObject({ name: 'Chevrolet Chevelle Malibu', row: { Horsepower: 130 } });
  });

  it('turn penguins into Observations the loader takes, measurements as PropertyValues with units', () => {
    const { items, records } = sites.penguins!;
    expect(items).toHaveLength(344);
    const i = records.findIndex((r) => r.name === 'Gentoo penguin 17');
    const item = items![i]!;
    const stored = nodeToItem(item, { site: 'penguins' });
    expect(stored).toMatchObject({ url: records[i]!.url, name: 'Gentoo penguin 17', '@type': 'Observation' });
    expect(property(item, 'variableMeasured', 'body mass')).toBe(records[i]!.row['Body Mass (g)']);
    expect(item.variableMeasured).toContainEqual(
      expect.objectContaining({ name: 'flipper length', unitText: 'mm' }),
    );
    expect(new Set(items!.map((x) => x.url)).size).toBe(344);
  });

  it('turn earthquakes into Events with their USGS page, time, region, magnitude and depth', () => {
    const { items, records } = sites.earthquakes!;
    expect(items).toHaveLength(1707);
    const i = records.findIndex((r) => r.name === 'M 6.4 - 22km NNE of Hualian, Taiwan');
    const item = items![i]!;
    expect(nodeToItem(item, { site: 'earthquakes' })).toMatchObject({
      '@type': 'Event',
      url: records[i]!.url,
    });
    expect(item.startDate).toBe('2018-02-06T15:50:42.400Z');
    expect(property(item, 'additionalProperty', 'magnitude')).toBe(6.4);
    expect(property(item, 'additionalProperty', 'depth')).toBe(10.64);
    expect(regionOf('4km W of Castaic, CA')).toBe('California');
    expect(regionOf('21km SSE of Progreso, B.C., MX')).toBe('Mexico');
    expect(regionOf('Gulf of Alaska')).toBe('Gulf of Alaska');
    expect(new Set(items!.map((x) => x.url)).size).toBe(1707);
  });
});

describe('the question sets', () => {
  for (const [name, site] of Object.entries(sites)) {
    it(`${name}: about 30 questions of every kind, each one judgeable`, () => {
      const questions = readQuestions(join(here, `${name}.jsonl`));
      expect(questions.length).toBeGreaterThanOrEqual(30);
      const kinds = new Set(questions.map((q) => q.kind));
      expect([...kinds].sort()).toEqual(['compare', 'constraint', 'details', 'search']);
      const opts = site.readDate ? { readDate: site.readDate } : {};
      const problems = questions.flatMap((q) => problemsOf(q, expectedFor(q, site.records, opts)));
      expect(problems).toEqual([]);
      // a named item is one row (compare sides may be a family, such as every Toyota Corolla)
      for (const q of questions.filter((x) => x.kind === 'details')) {
        expect(expectedFor(q, site.records, opts).items![0]!.size, q.id).toBe(1);
      }
    });
  }
});
