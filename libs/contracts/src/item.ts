import { z } from 'zod';

/**
 * A schema.org object as loaded: JSON-LD with at least a type. Kept whole, never trimmed.
 * Checked as an object with any keys (a loose object, not a record): a record checks every key
 * and value against schemas that accept anything, about 5× the cost on the hot path's search
 * replies, for the same outcome on JSON.
 */
export const SchemaObject = z.looseObject({});
export type SchemaObject = z.infer<typeof SchemaObject>;

export const SiteName = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9_.-]+$/, 'a site name is letters, digits, "_", "." or "-"');

/** A schema.org item as the retriever stores it (NLWeb's url, name, site, schema_json). */
export const StoredItem = z.object({
  url: z.string().min(1),
  name: z.string(),
  site: SiteName,
  '@type': z.string().min(1),
  schema_object: SchemaObject,
});
export type StoredItem = z.infer<typeof StoredItem>;

/**
 * What a ranker reads of an item (`rank.v1.score`): its URL, name and type, and its schema.org
 * object as JSON text without the keys no scorer reads (`@context`, `@id`). Text, so a ranker
 * can tell an item it analysed before by comparing the text, without parsing it again; callers
 * keep the whole items and join the scores to them by URL.
 */
export const RankItem = z.object({
  url: z.string().min(1),
  name: z.string(),
  '@type': z.string().min(1),
  schema: z.string().min(2).max(1_000_000),
});
export type RankItem = z.infer<typeof RankItem>;

/** Keys of a schema object that neither the local scorer nor a ranking prompt needs. */
const UNRANKED_KEYS: ReadonlySet<string> = new Set(['@context', '@id']);

/** An item as a ranker reads it: see RankItem. */
export function toRankItem(item: Pick<StoredItem, 'url' | 'name' | '@type' | 'schema_object'>): RankItem {
  const obj = item.schema_object;
  let view: Record<string, unknown> = obj;
  for (const key of UNRANKED_KEYS) {
    if (key in obj) {
      view = {};
      for (const [k, v] of Object.entries(obj)) if (!UNRANKED_KEYS.has(k)) view[k] = v;
      break;
    }
  }
  return { url: item.url, name: item.name, '@type': item['@type'], schema: JSON.stringify(view) };
}

/** A stored item with the retriever's own relevance for the query (higher is better). */
export const RetrievedItem = StoredItem.extend({ retrievalScore: z.number() });
export type RetrievedItem = z.infer<typeof RetrievedItem>;

/** One ranked item as NLWeb sends it in a `result` message's content. */
export const ResultItem = z.object({
  '@type': z.literal('Item'),
  url: z.string(),
  name: z.string(),
  site: z.string(),
  siteUrl: z.string(),
  score: z.number().min(0).max(100),
  description: z.string(),
  schema_object: SchemaObject,
  /** Why it got its score (askbus's addition, for debugging). */
  debug: z.string().optional(),
});
export type ResultItem = z.infer<typeof ResultItem>;

/** A retrieved item as stored, without the retriever's score (what rankers and tools take). */
export function toStoredItem(item: StoredItem): StoredItem {
  return {
    url: item.url,
    name: item.name,
    site: item.site,
    '@type': item['@type'],
    schema_object: item.schema_object,
  };
}

/** An item as NLWeb sends it in a `result` message, with its score and the reason for it. */
export function toResultItem(
  item: StoredItem,
  score: number,
  description: string,
  debug?: string,
): ResultItem {
  return {
    '@type': 'Item',
    url: item.url,
    name: item.name,
    site: item.site,
    siteUrl: item.site,
    score,
    description,
    schema_object: item.schema_object,
    ...(debug ? { debug } : {}),
  };
}
