import { z } from 'zod';
import { SiteName } from './item';

/** Ids become NATS subject tokens, so they hold no separators or wildcards. */
export const SubjectToken = z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, 'an id is 1-100 of A-Z a-z 0-9 _ -');

export const Mode = z.enum(['list', 'summarize', 'generate']);
export type Mode = z.infer<typeof Mode>;

const FilterScalar = z.union([z.string().max(1_000), z.number(), z.boolean()]);
/**
 * Retrieval filters by schema.org property, e.g. `{ type: 'Movie', location: 'Seattle' }`
 * (NLWeb protocol 0.5 `query.type`, `query.location`, …). Services apply those their data has
 * (`type` → contracts.search `types`) and ignore the others.
 */
export const AskFilters = z.record(
  z.string().min(1).max(100),
  z.union([FilterScalar, z.array(FilterScalar).max(100)]),
);
export type AskFilters = z.infer<typeof AskFilters>;

/**
 * The one request every protocol shell (REST dialects, MCP, A2A) turns its input into.
 * Services below the gateway see only this, never the dialect it came from.
 */
export const AskRequest = z.object({
  queryId: SubjectToken,
  query: z.string().min(1).max(10_000),
  /** Sites to search; `all` means every loaded site. */
  site: z.array(z.union([SiteName, z.literal('all')])).min(1),
  prev: z.array(z.string().max(10_000)).max(50).default([]),
  mode: Mode.default('list'),
  conversationId: z.string().max(200).default(''),
  maxResults: z.number().int().min(1).max(100).default(10),
  /** Results must score strictly above this (NLWeb: 51). */
  minScore: z.number().min(0).max(100).default(51),
  /** Skips tool selection and runs this tool of config/tools.xml (`search`, `details`, `compare`, …). */
  tool: z.string().max(100).optional(),
  /** Schema.org filters on the items to retrieve (see AskFilters); absent means none. */
  filters: AskFilters.optional(),
});
export type AskRequest = z.infer<typeof AskRequest>;
export type AskRequestInput = z.input<typeof AskRequest>;
