import { z } from 'zod';
import { SchemaObject } from './item';

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
