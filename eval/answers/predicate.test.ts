import { describe, expect, it } from 'vitest';
import {
  PredicateSchema,
  evaluate,
  fieldValue,
  select,
  sourceValue,
  type Predicate,
  type Row,
} from './predicate';

const penguins: Row[] = [
  { Species: 'Gentoo', Island: 'Biscoe', 'Body Mass (g)': 6300, 'Flipper Length (mm)': 230, Sex: 'MALE' },
  { Species: 'Gentoo', Island: 'Biscoe', 'Body Mass (g)': 5000, 'Flipper Length (mm)': 215, Sex: 'FEMALE' },
  { Species: 'Adelie', Island: 'Dream', 'Body Mass (g)': 4775, 'Flipper Length (mm)': 196, Sex: 'MALE' },
  { Species: 'Adelie', Island: 'Dream', 'Body Mass (g)': 4775, 'Flipper Length (mm)': 190, Sex: 'FEMALE' },
  { Species: 'Chinstrap', Island: 'Dream', 'Body Mass (g)': 3250, 'Flipper Length (mm)': 187, Sex: null },
  { Species: 'Adelie', Island: 'Torgersen', 'Body Mass (g)': null, 'Flipper Length (mm)': null, Sex: null },
];

/** Parses like a question file does, then selects. */
const pick = (p: unknown, rows: Row[] = penguins, opts = {}) => select(PredicateSchema.parse(p), rows, opts);

describe('the predicate language', () => {
  it('compares fields: eq ignores case, numbers compare as numbers, ops on one test all hold', () => {
    expect(pick({ field: 'Species', eq: 'gentoo' })).toEqual([0, 1]);
    expect(pick({ field: 'Sex', eq: 'male' })).toEqual([0, 2]);
    expect(pick({ field: 'Body Mass (g)', gt: 5000 })).toEqual([0]);
    expect(pick({ field: 'Body Mass (g)', gte: 5000 })).toEqual([0, 1]);
    expect(pick({ field: 'Body Mass (g)', lt: 4775 })).toEqual([4]);
    expect(pick({ field: 'Body Mass (g)', lte: 4775 })).toEqual([2, 3, 4]);
    expect(pick({ field: 'Body Mass (g)', between: [4775, 5000] })).toEqual([1, 2, 3]);
    expect(pick({ field: 'Body Mass (g)', gt: 4000, lt: 5000 })).toEqual([2, 3]);
    expect(pick({ field: 'Island', in: ['dream', 'TORGERSEN'] })).toEqual([2, 3, 4, 5]);
    expect(pick({ field: 'Island', contains: 'ISC' })).toEqual([0, 1]);
    expect(pick({ field: 'Species', matches: '^(adelie|chin)' })).toEqual([2, 3, 4, 5]);
  });

  it('treats a missing value as failing every operator but exists:false', () => {
    expect(pick({ field: 'Body Mass (g)', lt: 100000 })).not.toContain(5);
    expect(pick({ field: 'Sex', exists: false })).toEqual([4, 5]);
    expect(pick({ field: 'Sex', exists: true })).toEqual([0, 1, 2, 3]);
    expect(pick({ field: 'No such field', exists: true })).toEqual([]);
    expect(pick({ not: { field: 'Sex', eq: 'MALE' } })).toEqual([1, 3, 4, 5]);
  });

  it('combines with all, any and not', () => {
    const gentooOver6000 = {
      all: [
        { field: 'Species', eq: 'Gentoo' },
        { field: 'Body Mass (g)', gt: 6000 },
      ],
    };
    expect(pick(gentooOver6000)).toEqual([0]);
    expect(
      pick({
        any: [
          { field: 'Species', eq: 'Chinstrap' },
          { field: 'Body Mass (g)', gt: 6000 },
        ],
      }),
    ).toEqual([0, 4]);
    expect(
      pick({ all: [{ field: 'Island', eq: 'Dream' }, { not: { field: 'Species', eq: 'Adelie' } }] }),
    ).toEqual([4]);
  });

  it('keeps the top N by a value among the rows `where` selects, ties with the N-th included', () => {
    expect(pick({ top: 1, by: 'Body Mass (g)' })).toEqual([0]);
    // 4775 twice on Dream: both tie for first
    expect(pick({ top: 1, by: 'Body Mass (g)', where: { field: 'Island', eq: 'Dream' } })).toEqual([2, 3]);
    expect(pick({ top: 2, by: 'Flipper Length (mm)', order: 'asc' })).toEqual([3, 4]);
    // rows without the value never rank; asking for more than there are keeps them all
    expect(pick({ top: 50, by: 'Body Mass (g)' })).toEqual([0, 1, 2, 3, 4]);
    expect(pick({ top: 3, by: 'Body Mass (g)', where: { field: 'Species', eq: 'Emperor' } })).toEqual([]);
    // top inside a combination: the heaviest two, minus the males
    expect(
      pick({
        all: [
          { top: 2, by: 'Body Mass (g)' },
          { field: 'Sex', eq: 'FEMALE' },
        ],
      }),
    ).toEqual([1]);
  });

  it('reads years, months, days and dates of a date field, in UTC', () => {
    const cars: Row[] = [
      { Year: '1970-01-01' },
      { Year: '1976-01-01' },
      { Year: '1982-01-01' },
      { Year: 'unknown' },
    ];
    expect(pick({ year: 'Year', between: [1970, 1979] }, cars)).toEqual([0, 1]);
    expect(pick({ year: 'Year', gte: 1980 }, cars)).toEqual([2]);
    const quakes: Row[] = [
      { properties: { time: Date.UTC(2018, 1, 3, 23, 59) } },
      { properties: { time: Date.UTC(2018, 1, 4, 0, 1) } },
      { properties: { time: Date.UTC(2018, 0, 31, 12) } },
    ];
    expect(pick({ date: 'properties.time', eq: '2018-02-03' }, quakes)).toEqual([0]);
    expect(pick({ date: 'properties.time', between: ['2018-02-01', '2018-02-28'] }, quakes)).toEqual([0, 1]);
    expect(pick({ month: 'properties.time', eq: 1 }, quakes)).toEqual([2]);
    expect(pick({ day: 'properties.time', eq: 4 }, quakes)).toEqual([1]);
  });

  it('uses a site’s own date reading when given one', () => {
    const movies: Row[] = [{ 'Release Date': 'Dec 15 2039' }, { 'Release Date': 'Jun 12 1998' }];
    const readDate = (v: unknown) => {
      const d = new Date(`${String(v)} UTC`);
      if (d.getUTCFullYear() > 2012) d.setUTCFullYear(d.getUTCFullYear() - 100);
      return d;
    };
    expect(pick({ year: 'Release Date', lt: 1970 }, movies)).toEqual([]);
    expect(pick({ year: 'Release Date', lt: 1970 }, movies, { readDate })).toEqual([0]);
  });

  it('does arithmetic on two fields: difference, sum, ratio (no ratio by zero)', () => {
    const films: Row[] = [
      { 'Worldwide Gross': 50, 'Production Budget': 100 },
      { 'Worldwide Gross': 1000, 'Production Budget': 100 },
      { 'Worldwide Gross': 0, 'Production Budget': 0 },
      { 'Worldwide Gross': null, 'Production Budget': 100 },
    ];
    expect(pick({ difference: ['Worldwide Gross', 'Production Budget'], lt: 0 }, films)).toEqual([0]);
    expect(pick({ ratio: ['Worldwide Gross', 'Production Budget'], gte: 10 }, films)).toEqual([1]);
    expect(pick({ sum: ['Worldwide Gross', 'Production Budget'], eq: 1100 }, films)).toEqual([1]);
    expect(pick({ top: 1, by: { ratio: ['Worldwide Gross', 'Production Budget'] } }, films)).toEqual([1]);
    expect(sourceValue({ ratio: ['Worldwide Gross', 'Production Budget'] }, films[2]!)).toBeUndefined();
  });

  it('finds fields by exact key first, then by dotted path through objects and arrays', () => {
    const row: Row = { 'a.b': 1, a: { b: 2 }, geometry: { coordinates: [-118.6, 34.5, 26.49] } };
    expect(fieldValue(row, 'a.b')).toBe(1);
    expect(fieldValue(row, 'geometry.coordinates.2')).toBe(26.49);
    expect(fieldValue(row, 'geometry.coordinates.7')).toBeUndefined();
    expect(fieldValue(row, 'geometry.nope.x')).toBeUndefined();
  });

  it('rejects malformed predicates with a message that says what is wrong', () => {
    const error = (p: unknown) => {
      const r = PredicateSchema.safeParse(p);
      expect(r.success).toBe(false);
      return (r.error?.issues ?? []).map((i) => `${i.code}: ${i.message}`).join('\n');
    };
    expect(error({ field: 'Species' })).toMatch(/at least one of eq, in/);
    expect(error({ field: 'Species', year: 'Year', eq: 'x' })).toMatch(/exactly one of/);
    expect(error({ all: [{ field: 'x', eq: 1 }], eq: 1 })).toMatch(/belong to a test/);
    expect(error({ top: 5 })).toMatch(/top needs "by"/);
    expect(error({ field: 'x', eq: 1, by: 'y' })).toMatch(/belong to top/);
    expect(error({ field: 'x', matches: '(' })).toMatch(/valid regular expression/);
    expect(error({ field: 'x', equals: 1 })).toMatch(/unrecognized_keys.*equals/);
    expect(error({ all: [] })).toMatch(/too_small/);
    expect(error({ top: 0, by: 'x' })).toMatch(/too_small/);
  });

  it('evaluates to one boolean per row, in order', () => {
    const p: Predicate = { field: 'Island', eq: 'Dream' };
    expect(evaluate(p, penguins)).toEqual([false, false, true, true, true, false]);
  });
});
