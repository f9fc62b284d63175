import nlp from 'compromise';
import type { Understanding } from '@askbus/contracts';
import type { Fact } from './facts';
import { formatNumber, showQuantity } from './format';

/**
 * A result's description for people: one or two sentences about the item from its facts, the
 * facts the question asked about first ("Titanic (1997): 194 minutes; worldwide gross $1.84
 * billion."), then the item's own description when it has a good one, else a few of its facts.
 */

/** How schema.org's common properties read in a sentence (schema.org's vocabulary, not a site's). */
// a Map: the key is a property of the data's, which may be "constructor" or "toString"
export const PHRASES = new Map<string, (v: string) => string>(
  Object.entries({
    director: (v) => `directed by ${v}`,
    author: (v) => `by ${v}`,
    creator: (v) => `created by ${v}`,
    actor: (v) => `starring ${v}`,
    actors: (v) => `starring ${v}`,
    performer: (v) => `performed by ${v}`,
    byArtist: (v) => `by ${v}`,
    composer: (v) => `music by ${v}`,
    musicBy: (v) => `music by ${v}`,
    publisher: (v) => `published by ${v}`,
    productionCompany: (v) => `from ${v}`,
    brand: (v) => `made by ${v}`,
    manufacturer: (v) => `made by ${v}`,
    countryOfOrigin: (v) => `from ${v}`,
    contentRating: (v) => `rated ${v}`,
    aggregateRating: (v) => `rated ${v}`,
    genre: (v) => v,
    inLanguage: (v) => `in ${v}`,
    location: (v) => `at ${v}`,
    startDate: (v) => `on ${v}`,
    datePublished: (v) => `released ${v}`,
  }),
);

/** A good own description: real sentences, not a bare name or a list of tags. */
function ownDescription(text: string | undefined, name: string): string | undefined {
  if (!text) return undefined;
  const t = text.replace(/\s+/g, ' ').trim();
  if (t.length < 30 || t.toLowerCase() === name.toLowerCase()) return undefined;
  // the first sentences within ~240 characters: a stop ends a sentence when a capital or digit
  // starts the next one, but not after an initial ("Titan A.E. is …") or "Mr."/"vs."
  const sentences = t.split(/(?<=(?<!\b(?:\p{Lu}|Mr|Mrs|Ms|Dr|St|vs|No|Jr|Sr))[.!?])\s+(?=[\p{Lu}\d"“(])/u);
  let out = '';
  for (const [i, s] of (sentences.length ? sentences : [t]).entries()) {
    if (out && (i >= 2 || out.length + s.length + 1 > 240)) break;
    out = out ? `${out} ${s}` : s;
  }
  out = out.trim();
  return out.length > 260 ? `${out.slice(0, 257).replace(/\s+\S*$/, '')}…` : out;
}

/** One fact of a path as words: "194 minutes", "directed by James Cameron", "body mass 6,300 g". */
export function factPhrase(path: string, facts: readonly Fact[], label?: string): string | undefined {
  const f = facts[0];
  if (!f) return undefined;
  const key = path.split('.').at(-1)!;
  const words = label ?? f.label;
  let value: string;
  const count = /^number of (.+)$/.exec(words);
  if (count && f.kind === 'number' && f.num !== undefined && !f.unit)
    return `${formatNumber(f.num)} ${count[1]}`;
  if (f.kind === 'number' && f.num !== undefined) {
    value = showQuantity(f.num, { unit: f.unit, displayUnit: f.srcUnit, dimension: f.dimension });
    if (f.dimension === 'rating') return `${PHRASES.get(key) ? 'rated' : words} ${value}`;
    // "months of experience": "24 months of experience", not "months of experience 24 months"
    const of = /^(\S+) of (.+)$/.exec(words);
    if (of && value.split(' ').at(-1)?.replace(/s$/, '') === of[1]!.replace(/s$/, ''))
      return `${value} of ${of[2]}`;
    // a length of time alone is the item's ("102 minutes"); a named one keeps its name, as an
    // item may have several ("cook time 13 minutes", "prep time 27 minutes")
    if (
      f.dimension === 'time' &&
      /^(time( required)?|duration|length|runtime|run time|running time)$/.test(words)
    )
      return value;
    if (f.dimension === 'time') return `${words} ${value}`;
  } else if (f.kind === 'date') {
    value = f.str ?? (f.num !== undefined ? String(Math.floor(f.num)) : '');
  } else {
    const all = [...new Set(facts.map((x) => x.str).filter((s): s is string => !!s))];
    value = all.slice(0, 3).join(', ');
  }
  if (!value) return undefined;
  // a property of yes and no: "accepts reservations", "is accessible for free: no"
  if (f.kind === 'string' && (value === 'yes' || value === 'no') && !PHRASES.get(key))
    return value === 'yes' ? words : `${words}: no`;
  const phrase = PHRASES.get(key);
  if (phrase) return phrase(value);
  if (f.kind === 'number' && f.num !== undefined && !f.unit) {
    // a whole number in the years of our era, with no unit or count, reads as a year ("vintage 2013")
    const year = !f.dimension && Number.isInteger(f.num) && f.num >= 1000 && f.num <= 2200;
    return `${words} ${year ? String(f.num) : formatNumber(f.num)}`;
  }
  return `${words} ${value}`;
}

export interface DescribeInput {
  name: string;
  /** Facts by path (as factsByPath gives them). */
  facts: ReadonlyMap<string, readonly Fact[]>;
  /** The item's own description, if any. */
  description?: string;
  /** Property paths to say first (what the question asked about). */
  asked?: readonly string[];
  /** Sentences about derived quantities to add ("profit $1.6 billion"). */
  extra?: readonly string[];
}

/** One or two sentences about an item for people. */
export function describeItem(input: DescribeInput): string {
  const { facts } = input;
  const date = [...facts.values()].flat().find((f) => f.kind === 'date' && f.num !== undefined);
  const year = date ? Math.floor(date.num!) : undefined;
  const head = `${input.name}${year !== undefined && !input.name.includes(String(year)) ? ` (${year})` : ''}`;
  const asked: string[] = [];
  for (const path of input.asked ?? []) {
    const list = facts.get(path);
    if (!list?.length) continue;
    // the year is in the head already; the full date only when it is all that was asked
    if (list[0]!.kind === 'date') {
      const str = list[0]!.str ?? '';
      if ((input.asked ?? []).length === 1 && /^\d{4}-\d{2}/.test(str))
        asked.push(`${list[0]!.label || 'date'} ${str.slice(0, 10)}`);
      continue;
    }
    const phrase = factPhrase(path, list);
    if (phrase && !asked.includes(phrase)) asked.push(phrase);
  }
  asked.push(...(input.extra ?? []));
  const own = ownDescription(input.description, input.name);
  const first = asked.length ? `${head}: ${asked.slice(0, 4).join('; ')}.` : '';
  if (own) return first ? `${first} ${own}` : own;
  // no description of its own: a few of its facts
  const shown = new Set(input.asked ?? []);
  const more: string[] = [];
  for (const [path, list] of facts) {
    if (more.length >= 4 || shown.has(path)) continue;
    if (list[0]?.kind === 'name' || list[0]?.kind === 'text' || list[0]?.kind === 'date') continue;
    // a currency is the unit of the price beside it, which says it ("€18.90")
    if (/(^|\.)(priceCurrency|currency)$/.test(path)) continue;
    const phrase = factPhrase(path, list);
    // two properties may say the same ("duration" and "timeRequired": 102 minutes)
    if (phrase && phrase.length < 80 && !more.includes(phrase) && !asked.includes(phrase)) more.push(phrase);
  }
  if (first) return more.length ? `${first} Also: ${more.slice(0, 3).join(', ')}.` : first;
  return more.length ? `${head}: ${more.join(', ')}.` : `${head}.`;
}

/** Which paths of an understanding a description should lead with. */
export function askedPaths(u: Pick<Understanding, 'asked'> | undefined): string[] {
  return u?.asked ?? [];
}

/**
 * An understanding in words for a language model: what a good item satisfies and how they are
 * ordered, so the model's scores follow the constraints the site's data can check.
 */
export function understandingNote(u: Understanding | undefined): string | undefined {
  if (!u || (u.constraints.length === 0 && u.orders.length === 0)) return undefined;
  const parts = [
    ...u.constraints.map((k) => k.text),
    ...u.orders.map((o) => `${o.strength === 'sort' ? 'sorted by' : 'preferring'} ${o.text}`),
  ];
  return `The question was understood as asking for ${u.noun || 'items'}: ${parts.join('; ')}. Score items that satisfy all of it highest, and below 50 any item that does not.`;
}

/** "movies" → "movie", "countries" → "country", "Western movies" → "Western movie" (compromise's grammar). */
export function singularOf(noun: string): string {
  const out = nlp(noun).nouns().toSingular().text();
  if (out && out !== noun) return out;
  // words the tagger reads as verbs ("matches", "earthquakes")
  if (/(x|ch|sh|ss)es$/.test(noun)) return noun.slice(0, -2);
  return /[^s]s$/.test(noun) ? noun.slice(0, -1) : noun;
}

/** "heavy" → "heaviest", "powerful" → "most powerful": the superlative of an adjective (English grammar). */
export function superlativeOf(adjective: string): string {
  const w = adjective.trim().toLowerCase();
  if (!/^[a-z]+$/.test(w)) return `most ${w}`;
  const irregular = new Map(
    Object.entries({
      good: 'best',
      bad: 'worst',
      little: 'least',
      much: 'most',
      many: 'most',
      far: 'farthest',
    }),
  );
  const known = irregular.get(w);
  if (known) return known;
  if (w.length <= 6 && /y$/.test(w) && !/[aeiou]y$/.test(w)) return `${w.slice(0, -1)}iest`;
  if (w.length <= 5 && /e$/.test(w)) return `${w}st`;
  if (w.length <= 4 && /[^aeiou][aeiou][^aeiouwy]$/.test(w)) return `${w}${w.at(-1)}est`;
  if (w.length <= 6 && !/(ful|ous|ive|ic|al|ing|ed|ent|ant)$/.test(w)) return `${w}est`;
  return `most ${w}`;
}
