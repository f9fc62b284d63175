/**
 * The demo sites as `askbus up` loads them, each item paired with the vega-datasets row it came
 * from (the converters skip rows without a title or name, so rows and items are zipped by the
 * same rule and checked name by name).
 */
import {
  CarRecord,
  MovieRecord,
  convertCars,
  convertMovies,
  movieTitle,
  parseCarName,
  parseReleaseDate,
  readVegaDataset,
} from '@askbus/demo-data';
import type { StoredItem } from '@askbus/contracts';
import { isRow, type EvalRecord, type EvalSite } from './site';

function zip(
  rows: unknown[],
  kept: (row: unknown) => boolean,
  items: StoredItem[],
  site: string,
): EvalRecord[] {
  const used = rows.filter(kept).filter(isRow);
  if (used.length !== items.length)
    throw new Error(`${site}: ${used.length} rows kept but ${items.length} items converted`);
  return items.map((item, i) => ({ url: item.url, name: item.name, row: used[i]! }));
}

export function moviesSite(): EvalSite {
  const rows = readVegaDataset('movies.json') as unknown[];
  const kept = (raw: unknown): boolean => {
    const r = MovieRecord.safeParse(raw);
    return r.success && movieTitle(r.data.Title) !== undefined;
  };
  const records = zip(rows, kept, convertMovies(rows).items, 'movies');
  for (const r of records) {
    if (movieTitle(r.row.Title as string | number) !== r.name)
      throw new Error(`movies: ${r.name} is out of step`);
  }
  return {
    site: 'movies',
    records,
    // The converter's own reading: "Jun 12 1998", two-digit years past 2012 moved back a century.
    readDate: (value) => {
      const iso = typeof value === 'string' ? parseReleaseDate(value) : undefined;
      return iso ? new Date(`${iso}T00:00:00Z`) : undefined;
    },
  };
}

export function carsSite(): EvalSite {
  const rows = readVegaDataset('cars.json') as unknown[];
  const kept = (raw: unknown): boolean => {
    const r = CarRecord.safeParse(raw);
    return r.success && Boolean(r.data.Name?.trim());
  };
  const records = zip(rows, kept, convertCars(rows).items, 'cars');
  for (const r of records) {
    if (parseCarName(String(r.row.Name)).name !== r.name) throw new Error(`cars: ${r.name} is out of step`);
  }
  return { site: 'cars', records };
}
