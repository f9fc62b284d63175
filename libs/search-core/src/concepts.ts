/**
 * The small hand-made vocabulary that lets everyday words meet schema.org data: synonyms that
 * rewrite words on both the index and the query side, words that name a schema.org type, and
 * numeric "intents" (only in queries) that look at an item's numbers instead of its words.
 */

const entries = (pairs: Record<string, string>): Map<string, string[]> =>
  new Map(Object.entries(pairs).map(([k, v]) => [k, v.split(' ')]));

/**
 * Single-word synonyms, applied before stemming (plurals the stemmer folds are left to it).
 * They rewrite indexed text too, so a word must mean the same in data: not "auto", which in
 * car names is "(auto)" transmission.
 */
export const TERM_SYNONYMS: ReadonlyMap<string, string[]> = entries({
  film: 'movie',
  films: 'movie',
  movies: 'movie',
  flick: 'movie',
  flicks: 'movie',
  automobile: 'car',
  automobiles: 'car',
  vehicle: 'car',
  vehicles: 'car',
  scifi: 'science fiction',
  romcom: 'romantic comedy',
  romcoms: 'romantic comedy',
  superhero: 'super hero',
  superheroes: 'super hero',
  japanese: 'japan',
  american: 'usa',
  america: 'usa',
  european: 'europe',
  german: 'germany',
  french: 'france',
  swedish: 'sweden',
  italian: 'italy',
  british: 'united kingdom',
  chevy: 'chevrolet',
  vw: 'volkswagen',
});

/**
 * Synonyms for queries only: a word that describes what people want in genre terms, but in
 * data is just a word ("Scary Movie" is a comedy, "Funny People" is not a genre).
 */
export const QUERY_TERM_SYNONYMS: ReadonlyMap<string, string[]> = entries({
  scary: 'horror',
  funny: 'comedy',
  children: 'kids',
  childrens: 'kids',
  family: 'kids',
});

/** Multi-word synonyms (keys are space-joined lowercase tokens). */
export const PHRASE_SYNONYMS: ReadonlyMap<string, string[]> = entries({
  'sci fi': 'science fiction',
  'rom com': 'romantic comedy',
  'rom coms': 'romantic comedy',
  'united states': 'usa',
  'u s': 'usa',
  'u s a': 'usa',
});

/** Words (after synonyms; matched by stem, so plurals too) that name schema.org types. */
export const TYPE_WORDS: ReadonlyMap<string, readonly string[]> = new Map([
  ['movie', ['Movie']],
  ['car', ['Car', 'Vehicle']],
  ['book', ['Book']],
  ['recipe', ['Recipe']],
  ['restaurant', ['Restaurant', 'FoodEstablishment']],
  ['podcast', ['PodcastSeries', 'PodcastEpisode']],
  ['event', ['Event']],
  ['product', ['Product']],
]);

/**
 * Numeric intents: a query word or phrase that asks for "more of" a number the item may carry.
 * Each is scaled to 0..1 by `intentValue` (search-core/src/facts.ts). Kept to five on purpose:
 * - efficiency: fuelEfficiency in mpg, 10 → 0, 45 → 1
 * - power: vehicleEngine.enginePower in hp, 50 → 0, 220 → 1
 * - rating: aggregateRating on a 10 scale, 5 → 0, 9 → 1
 * - recent / old: the item's year, 1950 → 0, 2025 → 1 (old is the reverse)
 */
export type Intent = 'efficiency' | 'power' | 'rating' | 'recent' | 'old';

const intentTable = (pairs: Record<string, Intent>): Map<string, Intent> => new Map(Object.entries(pairs));

export const INTENT_WORDS: ReadonlyMap<string, Intent> = intentTable({
  efficient: 'efficiency',
  economical: 'efficiency',
  thrifty: 'efficiency',
  frugal: 'efficiency',
  mpg: 'efficiency',
  mileage: 'efficiency',
  fast: 'power',
  faster: 'power',
  fastest: 'power',
  quick: 'power',
  quickest: 'power',
  powerful: 'power',
  speedy: 'power',
  sporty: 'power',
  muscle: 'power',
  horsepower: 'power',
  best: 'rating',
  top: 'rating',
  great: 'rating',
  greatest: 'rating',
  acclaimed: 'rating',
  masterpiece: 'rating',
  masterpieces: 'rating',
  recent: 'recent',
  new: 'recent',
  newer: 'recent',
  newest: 'recent',
  latest: 'recent',
  modern: 'recent',
  old: 'old',
  older: 'old',
  oldest: 'old',
  classic: 'old',
  classics: 'old',
  vintage: 'old',
  retro: 'old',
});

export const INTENT_PHRASES: ReadonlyMap<string, Intent> = intentTable({
  'fuel efficient': 'efficiency',
  'fuel efficiency': 'efficiency',
  'fuel economy': 'efficiency',
  'good mileage': 'efficiency',
  'great mileage': 'efficiency',
  'high mileage': 'efficiency',
  'gas mileage': 'efficiency',
  'good gas mileage': 'efficiency',
  'good mpg': 'efficiency',
  'high mpg': 'efficiency',
  'top rated': 'rating',
  'highly rated': 'rating',
  'highest rated': 'rating',
  'best rated': 'rating',
  'well reviewed': 'rating',
  'critically acclaimed': 'rating',
});
