/** What the analysis needs of an item: its schema.org object, and (for a StoredItem) name and type. */
export interface ItemLike {
  name?: string;
  '@type'?: string;
  schema_object: Record<string, unknown>;
}

export type FieldName = 'name' | 'people' | 'categories' | 'text';
export const FIELD_NAMES: readonly FieldName[] = ['name', 'people', 'categories', 'text'];

/** The item's strings sorted by what they say about it; each value is kept apart (no phrase spans two). */
export type ItemFields = Record<FieldName, string[]>;

/**
 * How much a query word counts when found in each field (local scorer). A word in the title,
 * a person or a category says more about the item than one buried in a description.
 */
export const FIELD_WEIGHTS: Readonly<Record<FieldName, number>> = {
  name: 1,
  people: 0.95,
  categories: 0.95,
  text: 0.6,
};

/** The same preference as keyword-index field boosts (BM25 scores multiply by them). */
export const FIELD_BOOSTS: Readonly<Record<FieldName, number>> = {
  name: 3,
  people: 2,
  categories: 2,
  text: 1,
};

const NAME_KEYS = new Set(['name', 'alternateName', 'headline', 'title']);
const PEOPLE_KEYS = new Set([
  'director',
  'directors',
  'author',
  'actor',
  'actors',
  'creator',
  'producer',
  'performer',
  'composer',
  'musicBy',
  'editor',
  'contributor',
  'illustrator',
  'founder',
]);
const CATEGORY_KEYS = new Set([
  'genre',
  'category',
  'additionalType',
  'brand',
  'manufacturer',
  'countryOfOrigin',
  'bodyType',
  'recipeCategory',
  'recipeCuisine',
  'servesCuisine',
  'applicationCategory',
  'keywords',
]);
/** Links, identifiers, units and nested type names: noise for matching words. */
export const SKIP_KEYS: ReadonlySet<string> = new Set([
  '@context',
  '@id',
  '@type',
  'url',
  'sameAs',
  'image',
  'logo',
  'thumbnailUrl',
  'contentUrl',
  'embedUrl',
  'unitCode',
]);

// Limits so a hostile or huge object costs bounded time.
const MAX_DEPTH = 8;
const MAX_ARRAY = 200;
const MAX_STRING = 2_000;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** "TVSeries" → "TV Series", so a type's words can be matched. */
export function splitCamelCase(s: string): string {
  return s.replace(/([a-z\d])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2');
}

/** Every schema.org type the item declares (StoredItem `@type` and the object's own). */
export function itemTypes(item: ItemLike): string[] {
  const out = new Set<string>();
  if (item['@type']) out.add(item['@type']);
  const t = item.schema_object['@type'];
  for (const v of Array.isArray(t) ? t : [t]) if (typeof v === 'string' && v) out.add(v);
  return [...out];
}

/**
 * Flattens a schema.org item into four weighted fields: `name` (title), `people` (director,
 * author, actor … names), `categories` (types, genre, brand, country …), `text` (description
 * and every other string value). Numbers, links and ids are left out.
 */
export function flattenItem(item: ItemLike): ItemFields {
  const fields: ItemFields = { name: [], people: [], categories: [], text: [] };
  const push = (field: FieldName, value: string): void => {
    const v = value.trim().slice(0, MAX_STRING);
    if (v && !/^https?:\/\//i.test(v) && !fields[field].includes(v)) fields[field].push(v);
  };
  if (item.name) push('name', item.name);
  for (const t of itemTypes(item)) push('categories', splitCamelCase(t));

  const schema = item.schema_object;
  for (const [key, value] of Object.entries(schema)) {
    if (SKIP_KEYS.has(key)) continue;
    if (NAME_KEYS.has(key)) collectNames(value, (s) => push('name', s));
    else if (PEOPLE_KEYS.has(key)) collectNames(value, (s) => push('people', s));
    else if (CATEGORY_KEYS.has(key)) collectNames(value, (s) => push('categories', s));
    else collectStrings(value, (s) => push('text', s), 1);
  }
  return fields;
}

/** The names in a value: strings themselves, or the `name` of objects (a Person, a Brand). */
function collectNames(value: unknown, sink: (s: string) => void, depth = 0): void {
  if (depth > MAX_DEPTH) return;
  if (typeof value === 'string') sink(value);
  else if (Array.isArray(value)) for (const v of value.slice(0, MAX_ARRAY)) collectNames(v, sink, depth + 1);
  else if (isRecord(value)) {
    if (typeof value.name === 'string') sink(value.name);
    else if (value.name !== undefined) collectNames(value.name, sink, depth + 1);
  }
}

/** Every string leaf of a value, skipping links, ids and nested type names. */
function collectStrings(value: unknown, sink: (s: string) => void, depth: number): void {
  if (depth > MAX_DEPTH) return;
  if (typeof value === 'string') sink(value);
  else if (Array.isArray(value))
    for (const v of value.slice(0, MAX_ARRAY)) collectStrings(v, sink, depth + 1);
  else if (isRecord(value)) {
    for (const [k, v] of Object.entries(value)) if (!SKIP_KEYS.has(k)) collectStrings(v, sink, depth + 1);
  }
}
