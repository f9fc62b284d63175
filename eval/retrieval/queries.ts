import type { StoredItem } from '@askbus/contracts';

/**
 * Retrieval questions over the demo sites, each with what makes an item relevant as a test on
 * the item's own fields (a genre, a director, a brand, a country), never a list of hand-picked
 * results: the judgement follows the data.
 */
export interface RetrievalQuery {
  query: string;
  site: 'movies' | 'cars';
  /** Why an item is relevant, in words (for the report). */
  relevant: string;
  isRelevant: (item: StoredItem) => boolean;
}

const names = (v: unknown): string[] => {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.flatMap(names);
  if (v && typeof v === 'object' && 'name' in v) return names((v as { name: unknown }).name);
  return [];
};
const genre = (g: string) => (i: StoredItem) => names(i.schema_object.genre).includes(g);
const anyGenre =
  (...gs: string[]) =>
  (i: StoredItem) =>
    gs.some((g) => genre(g)(i));
const person = (key: string, who: string) => (i: StoredItem) =>
  names(i.schema_object[key]).some((n) => n.includes(who));
const brand = (b: string) => (i: StoredItem) => names(i.schema_object.brand).includes(b);
const country = (c: string) => (i: StoredItem) => names(i.schema_object.countryOfOrigin).includes(c);
const company = (c: string) => (i: StoredItem) =>
  names(i.schema_object.productionCompany).some((n) => n.includes(c));

export const QUERIES: RetrievalQuery[] = [
  { query: 'westerns', site: 'movies', relevant: 'genre Western', isRelevant: genre('Western') },
  { query: 'horror movies', site: 'movies', relevant: 'genre Horror', isRelevant: genre('Horror') },
  { query: 'frightening films', site: 'movies', relevant: 'genre Horror', isRelevant: genre('Horror') },
  {
    query: 'extraterrestrial',
    site: 'movies',
    relevant: 'genre Science Fiction',
    isRelevant: genre('Science Fiction'),
  },
  {
    query: 'science fiction',
    site: 'movies',
    relevant: 'genre Science Fiction',
    isRelevant: genre('Science Fiction'),
  },
  {
    query: 'cartoon for toddlers',
    site: 'movies',
    relevant: 'genre Kids Fiction',
    isRelevant: genre('Kids Fiction'),
  },
  {
    query: 'films for kids',
    site: 'movies',
    relevant: 'genre Kids Fiction',
    isRelevant: genre('Kids Fiction'),
  },
  {
    query: 'romantic comedies',
    site: 'movies',
    relevant: 'genre Romantic Comedy',
    isRelevant: genre('Romantic Comedy'),
  },
  { query: 'musicals', site: 'movies', relevant: 'genre Musical', isRelevant: genre('Musical') },
  { query: 'documentaries', site: 'movies', relevant: 'genre Documentary', isRelevant: genre('Documentary') },
  {
    query: 'superhero movies',
    site: 'movies',
    relevant: 'genre Super Hero',
    isRelevant: genre('Super Hero'),
  },
  {
    query: 'suspense thrillers',
    site: 'movies',
    relevant: 'genre Thriller/Suspense',
    isRelevant: genre('Thriller/Suspense'),
  },
  {
    query: 'dark comedy',
    site: 'movies',
    relevant: 'genre Black Comedy',
    isRelevant: genre('Black Comedy'),
  },
  {
    query: 'action adventure',
    site: 'movies',
    relevant: 'genre Action or Adventure',
    isRelevant: anyGenre('Action', 'Adventure'),
  },
  {
    query: 'steven spielberg',
    site: 'movies',
    relevant: 'directed by Steven Spielberg',
    isRelevant: person('director', 'Steven Spielberg'),
  },
  {
    query: 'clint eastwood movies',
    site: 'movies',
    relevant: 'directed by Clint Eastwood',
    isRelevant: person('director', 'Clint Eastwood'),
  },
  {
    query: 'films by woody allen',
    site: 'movies',
    relevant: 'directed by Woody Allen',
    isRelevant: person('director', 'Woody Allen'),
  },
  { query: 'disney', site: 'movies', relevant: 'released by Disney', isRelevant: company('Disney') },
  { query: 'toyota', site: 'cars', relevant: 'brand Toyota', isRelevant: brand('Toyota') },
  { query: 'ford cars', site: 'cars', relevant: 'brand Ford', isRelevant: brand('Ford') },
  { query: 'japanese cars', site: 'cars', relevant: 'made in Japan', isRelevant: country('Japan') },
  { query: 'european cars', site: 'cars', relevant: 'made in Europe', isRelevant: country('Europe') },
  { query: 'volkswagen', site: 'cars', relevant: 'brand Volkswagen', isRelevant: brand('Volkswagen') },
  { query: 'american cars', site: 'cars', relevant: 'made in the USA', isRelevant: country('USA') },
];
