import { z } from 'zod';
import { SchemaObject } from './item';
import type { ResultItem } from './item';

/**
 * The answers of the tools that speak for one or two named items. Their producers
 * (services/tool-details, services/tool-compare) build them through these schemas, and every
 * consumer (the gateway's MCP tools and protocol 0.5 renderer) reads them through the same ones.
 */

/** The payload of the details tool's `item_details` message. "Not found" has an empty `url`. */
export const ItemDetails = z.object({
  name: z.string(),
  details: z.string(),
  details_requested: z.string().optional(),
  score: z.number().optional(),
  explanation: z.string().optional(),
  url: z.string(),
  site: z.string(),
  schema_object: SchemaObject.optional(),
});
export type ItemDetails = z.infer<typeof ItemDetails>;

/** One of the two items of a comparison. */
export const CompareSide = z.object({
  name: z.string(),
  url: z.string(),
  site: z.string(),
  schema_object: SchemaObject.optional(),
});
export type CompareSide = z.infer<typeof CompareSide>;

/** The payload of the compare tool's `compare_items` message. */
export const CompareItems = z.object({
  comparison: z.string(),
  verdict: z.string().optional(),
  details_requested: z.string().optional(),
  table: z.array(z.object({ field: z.string(), item1: z.string(), item2: z.string() })).optional(),
  item1: CompareSide,
  item2: CompareSide,
});
export type CompareItems = z.infer<typeof CompareItems>;

/** An `item_details` message body, its payload checked against ItemDetails (throws when it does not fit). */
export function itemDetailsMessage(details: ItemDetails): { message_type: 'item_details' } & ItemDetails {
  return { message_type: 'item_details', ...ItemDetails.parse(details) };
}

/** A `compare_items` message body, its payload checked against CompareItems (throws when it does not fit). */
export function compareItemsMessage(items: CompareItems): { message_type: 'compare_items' } & CompareItems {
  return { message_type: 'compare_items', ...CompareItems.parse(items) };
}

/** A site that can answer a question, as the who tool ranks it (search-core's SiteRank). */
export const WhoSite = z.object({
  name: z.string(),
  /** 0–100: how well the site's best item matches the question's subject. */
  score: z.number(),
  /** The site's retrieved items that matched. */
  matches: z.number().int(),
  /** The items the retriever returned for the site. */
  hits: z.number().int(),
  item_count: z.number().int(),
  types: z.array(z.string()),
  best: z.object({ name: z.string(), url: z.string(), score: z.number() }),
});
export type WhoSite = z.infer<typeof WhoSite>;

/** The schema.org object of a who answer's result item: the site as a WebSite. */
const WhoSiteObject = z.object({
  '@type': z.literal('WebSite'),
  name: z.string(),
  about: z.array(z.string()),
  matches: z.number().int(),
  hits: z.number().int(),
  item_count: z.number().int(),
  best_match: WhoSite.shape.best,
});

/**
 * The who tool's answer is `result` messages of these items (NLWeb's who results): a site
 * pointing at `?site=…&query=…`, its ranking in `schema_object`.
 */
export function whoSiteItem(s: WhoSite, subject: string): ResultItem {
  const types = s.types.join(', ');
  const schema: z.infer<typeof WhoSiteObject> = {
    '@type': 'WebSite',
    name: s.name,
    about: s.types,
    matches: s.matches,
    hits: s.hits,
    item_count: s.item_count,
    best_match: s.best,
  };
  return {
    '@type': 'Item',
    url: `?site=${encodeURIComponent(s.name)}&query=${encodeURIComponent(subject)}&tool=search`,
    name: s.name,
    site: s.name,
    siteUrl: s.name,
    score: s.score,
    description:
      `${s.name} has ${s.item_count} ${types || ''} items; ${s.matches} of those found match, best: ${s.best.name}.`.replace(
        /\s+/g,
        ' ',
      ),
    schema_object: schema,
  };
}

/** The site a who result item names, undefined when the item is not one (whoSiteItem). */
export function whoSiteOf(item: ResultItem): WhoSite | undefined {
  const o = WhoSiteObject.safeParse(item.schema_object);
  if (!o.success) return undefined;
  const { about, matches, hits, item_count, best_match } = o.data;
  return { name: item.name, score: item.score, matches, hits, item_count, types: about, best: best_match };
}

/**
 * The ensemble tool's recommendations: what its model answers, and what its `ensemble_result`
 * message carries (services/tool-ensemble produces it, the gateway's 0.5 renderer reads it).
 */
export const EnsembleAnswer = z.object({
  theme: z.string(),
  items: z.array(
    z.object({
      category: z.string(),
      name: z.string(),
      url: z.string(),
      description: z.string(),
      why: z.string(),
    }),
  ),
  overall_tips: z.array(z.string()).default([]),
});
export type EnsembleAnswer = z.infer<typeof EnsembleAnswer>;

/**
 * The recipe tool's substitutions: what its model answers, and the `substitution_data` of its
 * message (services/tool-recipe produces it, the gateway's 0.5 renderer reads it).
 */
export const SubstitutionsAnswer = z.object({
  substitutions: z.array(
    z.object({
      original_ingredient: z.string(),
      substitute: z.string(),
      ratio: z.string(),
      notes: z.string(),
    }),
  ),
  general_tips: z.array(z.string()).default([]),
  already_meets_requirements: z.boolean().default(false),
});
export type SubstitutionsAnswer = z.infer<typeof SubstitutionsAnswer>;
