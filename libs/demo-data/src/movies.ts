import { z } from 'zod';
import type { StoredItem } from '@askbus/contracts';
import { formatNumber, isNonEmpty, repairMojibake, slugify, uniqueUrls } from './text';

export const MOVIES_SITE = 'movies';
const MOVIES_BASE_URL = 'https://movies.askbus.example/movie/';

// Each field falls back to null when absent or of an unexpected type: one odd cell must not
// cost the whole film.
const num = z.number().finite().nullable().optional().catch(null);
const str = z.string().nullable().optional().catch(null);

/** One row of vega-datasets' data/movies.json. */
export const MovieRecord = z.object({
  Title: z.union([z.string(), z.number()]).nullable().optional().catch(null),
  Director: str,
  'Major Genre': str,
  'Creative Type': str,
  'Release Date': str,
  'MPAA Rating': str,
  'Running Time min': num,
  Distributor: str,
  Source: str,
  'IMDB Rating': num,
  'IMDB Votes': num,
  'Rotten Tomatoes Rating': num,
  'US Gross': num,
  'Worldwide Gross': num,
  'US DVD Sales': num,
  'Production Budget': num,
});
export type MovieRecord = z.infer<typeof MovieRecord>;

/** What a conversion produced, and how many input rows it had to leave out. */
export interface Conversion {
  items: StoredItem[];
  skipped: number;
}

const MONTHS: Record<string, number> = {
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  may: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  oct: 10,
  nov: 11,
  dec: 12,
};

/**
 * The data set was compiled around 2010; its few dates after 2012 ("Gone with the Wind",
 * Dec 15 2039) are two-digit years read into the wrong century, so they move back 100 years.
 */
const LAST_PLAUSIBLE_YEAR = 2012;

/** "Jun 12 1998" → "1998-06-12"; anything unreadable is undefined. */
export function parseReleaseDate(text: string | null | undefined): string | undefined {
  const m = /^\s*([A-Za-z]{3})[a-z]*\.?\s+(\d{1,2}),?\s+(\d{4})\s*$/.exec(text ?? '');
  if (!m) return undefined;
  const month = MONTHS[m[1]!.toLowerCase()];
  const day = Number(m[2]);
  let year = Number(m[3]);
  if (!month) return undefined;
  if (year > LAST_PLAUSIBLE_YEAR) year -= 100;
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  return date.toISOString().slice(0, 10);
}

/** "Charge of the Light Brigade, The" → "The Charge of the Light Brigade"; numbers as text. */
export function movieTitle(title: string | number | null | undefined): string | undefined {
  if (title === null || title === undefined) return undefined;
  const t = repairMojibake(String(title)).replace(/\s+/g, ' ').trim();
  if (!t) return undefined;
  const m = /^(.*), (The|A|An)$/.exec(t);
  return m ? `${m[2]} ${m[1]}` : t;
}

const money = (name: string, value: number | null | undefined) =>
  value === null || value === undefined ? [] : [{ '@type': 'PropertyValue', name, value, unitText: 'USD' }];

/** One movies.json row as a schema.org Movie (without its URL's uniqueness; see convertMovies). */
function toMovie(row: MovieRecord, name: string, url: string): StoredItem {
  const year = parseReleaseDate(row['Release Date']);
  const director = isNonEmpty(row.Director) ? row.Director.trim() : undefined;
  const genres = [row['Major Genre'], row['Creative Type']].filter(isNonEmpty).map((g) => g.trim());
  const runtime = row['Running Time min'];
  const imdb = row['IMDB Rating'];
  const votes = row['IMDB Votes'];
  const tomatoes = row['Rotten Tomatoes Rating'];
  const distributor = isNonEmpty(row.Distributor) ? row.Distributor.trim() : undefined;
  const rating = isNonEmpty(row['MPAA Rating']) ? row['MPAA Rating'].trim() : undefined;
  const source = isNonEmpty(row.Source) ? row.Source.trim() : undefined;

  const schema: Record<string, unknown> = {
    '@context': 'https://schema.org',
    '@type': 'Movie',
    url,
    name,
    description: describeMovie({
      name,
      year,
      genres,
      director,
      rating,
      runtime,
      distributor,
      imdb,
      votes,
      tomatoes,
      source,
    }),
  };
  if (director) schema.director = { '@type': 'Person', name: director };
  if (genres.length) schema.genre = genres;
  if (year) schema.datePublished = year;
  if (rating) schema.contentRating = rating;
  if (runtime && runtime > 0) schema.duration = `PT${Math.round(runtime)}M`;
  if (distributor) schema.productionCompany = { '@type': 'Organization', name: distributor };
  if (imdb !== null && imdb !== undefined && imdb >= 1 && imdb <= 10) {
    schema.aggregateRating = {
      '@type': 'AggregateRating',
      name: 'IMDb rating',
      ratingValue: imdb,
      bestRating: 10,
      worstRating: 1,
      ...(votes && votes > 0 ? { ratingCount: Math.round(votes) } : {}),
    };
  }
  const properties = [
    ...money('production budget', row['Production Budget']),
    ...money('US gross', row['US Gross']),
    ...money('worldwide gross', row['Worldwide Gross']),
    ...money('US DVD sales', row['US DVD Sales']),
    ...(tomatoes !== null && tomatoes !== undefined
      ? [{ '@type': 'PropertyValue', name: 'Rotten Tomatoes rating', value: tomatoes, unitText: 'percent' }]
      : []),
    ...(source ? [{ '@type': 'PropertyValue', name: 'source', value: source }] : []),
  ];
  if (properties.length) schema.additionalProperty = properties;
  return { url, name, site: MOVIES_SITE, '@type': 'Movie', schema_object: schema };
}

/** "Pale Rider is a 1985 Western movie (Historical Fiction) directed by Clint Eastwood, rated R, …" */
function describeMovie(m: {
  name: string;
  year: string | undefined;
  genres: string[];
  director: string | undefined;
  rating: string | undefined;
  runtime: number | null | undefined;
  distributor: string | undefined;
  imdb: number | null | undefined;
  votes: number | null | undefined;
  tomatoes: number | null | undefined;
  source: string | undefined;
}): string {
  const [genre, creative] = m.genres;
  const what = [m.year?.slice(0, 4), genre].filter(Boolean).join(' ');
  const article = /^[aeiou]/i.test(what || 'movie') ? 'an' : 'a';
  let s = `${m.name} is ${article} ${what ? `${what} ` : ''}movie`;
  if (creative) s += ` (${creative})`;
  if (m.director) s += ` directed by ${m.director}`;
  const details = [
    m.rating ? (/^not rated$/i.test(m.rating) ? 'not rated' : `rated ${m.rating}`) : undefined,
    m.runtime && m.runtime > 0 ? `${Math.round(m.runtime)} minutes` : undefined,
    m.distributor ? `released by ${m.distributor}` : undefined,
  ].filter(Boolean);
  if (details.length) s += `, ${details.join(', ')}`;
  if (!s.endsWith('.')) s += '.';
  if (m.imdb !== null && m.imdb !== undefined) {
    s += ` IMDb rating ${m.imdb}/10${m.votes ? ` from ${formatNumber(m.votes)} votes` : ''}.`;
  }
  if (m.tomatoes !== null && m.tomatoes !== undefined) s += ` Rotten Tomatoes: ${m.tomatoes}%.`;
  if (m.source) s += ` Source: ${m.source}.`;
  return s;
}

/**
 * vega-datasets movies.json rows → schema.org Movie items of site `movies`. Rows that are not
 * objects or have no title are skipped and counted. URLs are
 * https://movies.askbus.example/movie/<title-slug>-<year>, "-2", "-3" … for repeats.
 */
export function convertMovies(rows: unknown): Conversion {
  const list = z.array(z.unknown()).parse(rows);
  const url = uniqueUrls();
  const items: StoredItem[] = [];
  let skipped = 0;
  for (const raw of list) {
    const parsed = MovieRecord.safeParse(raw);
    const name = parsed.success ? movieTitle(parsed.data.Title) : undefined;
    if (!parsed.success || !name) {
      skipped++;
      continue;
    }
    const year = parseReleaseDate(parsed.data['Release Date'])?.slice(0, 4);
    items.push(
      toMovie(parsed.data, name, url(`${MOVIES_BASE_URL}${slugify(name)}${year ? `-${year}` : ''}`)),
    );
  }
  return { items, skipped };
}
