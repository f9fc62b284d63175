import { z } from 'zod';
import { AskRequest } from './ask';
import { RetrievedItem, SiteName, StoredItem } from './item';
import { Message } from './message';

/** A request answered by one reply. */
export interface UnaryContract<Req extends z.ZodType, Rep extends z.ZodType> {
  readonly kind: 'unary';
  readonly subject: string;
  readonly request: Req;
  readonly reply: Rep;
}
/** A request answered by a stream of chunks, then an end marker. */
export interface StreamContract<Req extends z.ZodType, Chunk extends z.ZodType> {
  readonly kind: 'stream';
  readonly subject: string;
  readonly request: Req;
  readonly chunk: Chunk;
}
export type Contract = UnaryContract<z.ZodType, z.ZodType> | StreamContract<z.ZodType, z.ZodType>;

const unary = <Req extends z.ZodType, Rep extends z.ZodType>(
  subject: string,
  request: Req,
  reply: Rep,
): UnaryContract<Req, Rep> => ({ kind: 'unary', subject, request, reply });
const stream = <Req extends z.ZodType, Chunk extends z.ZodType>(
  subject: string,
  request: Req,
  chunk: Chunk,
): StreamContract<Req, Chunk> => ({ kind: 'stream', subject, request, chunk });

export const SearchRequest = z.object({
  query: z.string().min(1).max(10_000),
  site: z.array(z.union([SiteName, z.literal('all')])).min(1),
  numResults: z.number().int().min(1).max(500).default(50),
  /** Keep only items of these schema.org types (exact `@type`). */
  types: z.array(z.string()).optional(),
});
export const SearchReply = z.object({ items: z.array(RetrievedItem) });

export const UpsertRequest = z.object({
  site: SiteName,
  items: z.array(StoredItem).max(10_000),
  /** Write the index to disk after this batch (the last batch of a load sets it). */
  persist: z.boolean().default(true),
});
export const UpsertReply = z.object({ upserted: z.number().int(), total: z.number().int() });

export const SiteInfo = z.object({
  name: SiteName,
  itemCount: z.number().int(),
  types: z.array(z.string()),
});
export type SiteInfo = z.infer<typeof SiteInfo>;
export const SitesRequest = z.object({});
export const SitesReply = z.object({ sites: z.array(SiteInfo) });

/** Removes every item of a site (`askbus load --delete-site`). */
export const DeleteRequest = z.object({ site: SiteName });
export const DeleteReply = z.object({ deleted: z.number().int() });

export const ScoreRequest = z.object({
  query: z.string().min(1).max(10_000),
  items: z.array(StoredItem).min(1).max(200),
});
export const ScoredItem = z.object({
  url: z.string(),
  score: z.number().min(0).max(100),
  description: z.string(),
});
export type ScoredItem = z.infer<typeof ScoredItem>;

/** A tool service's request: the query (decontextualized) and the parameters its returnStruc names. */
export const ToolRunRequest = z.object({
  ask: AskRequest,
  params: z.record(z.string(), z.unknown()).default({}),
});
export type ToolRunRequest = z.infer<typeof ToolRunRequest>;
const toolRun = (handler: string) => stream(`tool.v1.${handler}.run`, ToolRunRequest, Message);

/** One stream contract per tool handler of config/tools.xml: `tool.v1.<handler>.run`. */
export const toolContracts = {
  details: toolRun('details'),
  compare: toolRun('compare'),
  ensemble: toolRun('ensemble'),
  recipe_substitutions: toolRun('recipe_substitutions'),
  accompaniment: toolRun('accompaniment'),
  who: toolRun('who'),
} as const;
export type ToolHandler = keyof typeof toolContracts;

/** Every subject askbus sends or serves. Nothing uses a subject that is not declared here. */
export const contracts = {
  ask: stream('ask.v1.run', AskRequest, Message),
  search: unary('retrieve.v1.search', SearchRequest, SearchReply),
  upsert: unary('retrieve.v1.upsert', UpsertRequest, UpsertReply),
  sites: unary('retrieve.v1.sites', SitesRequest, SitesReply),
  delete: unary('retrieve.v1.delete', DeleteRequest, DeleteReply),
  score: stream('rank.v1.score', ScoreRequest, ScoredItem),
  toolDetails: toolContracts.details,
  toolCompare: toolContracts.compare,
  toolEnsemble: toolContracts.ensemble,
  toolRecipeSubstitutions: toolContracts.recipe_substitutions,
  toolAccompaniment: toolContracts.accompaniment,
  toolWho: toolContracts.who,
} as const;

/** `ask.v1.cancel.<queryId>` cancels a whole query; `…<queryId>.<callId>` one call of it. */
export const CANCEL_PREFIX = 'ask.v1.cancel';
export const cancelSubject = (queryId: string, callId?: string): string =>
  callId ? `${CANCEL_PREFIX}.${queryId}.${callId}` : `${CANCEL_PREFIX}.${queryId}`;
