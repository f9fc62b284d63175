import { z } from 'zod';
import { AskRequest } from './ask';
import { RetrievedItem, SiteName, StoredItem } from './item';
import { Message } from './message';
import { A2aCancelRequest, A2aTaskEventEnvelope } from './a2a';

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

/**
 * Fire-and-forget events on a subject per key (`<prefix>.<key>`): published by one process, heard
 * by every subscriber (no queue group, no reply).
 */
export interface EventContract<Event extends z.ZodType> {
  readonly kind: 'event';
  /** The subject's prefix; one key token follows it. */
  readonly subject: string;
  readonly event: Event;
}
const event = <Event extends z.ZodType>(subject: string, schema: Event): EventContract<Event> => ({
  kind: 'event',
  subject,
  event: schema,
});

/**
 * A key as one subject token. Ids made of letters, digits and '-' (UUIDs) stay as they are;
 * anything else (dots, wildcards, spaces) becomes '_' + the hex of its UTF-8, which no such id
 * starts with.
 */
export function subjectToken(key: string): string {
  if (/^[A-Za-z0-9-]{1,200}$/.test(key)) return key;
  const hex = Array.from(new TextEncoder().encode(key), (b) => b.toString(16).padStart(2, '0'));
  return `_${hex.join('')}`;
}
export const eventSubject = (contract: EventContract<z.ZodType>, key: string): string =>
  `${contract.subject}.${subjectToken(key)}`;

/** Every event subject askbus publishes; gateways share A2A task events through them. */
export const eventContracts = {
  /** `a2a.v1.events.<taskId>`: every event the gateway running a task gives its SDK event bus. */
  a2aTaskEvents: event('a2a.v1.events', A2aTaskEventEnvelope),
  /** `a2a.v1.cancel.<taskId>`: a gateway asks the one running the task to cancel it. */
  a2aCancelTask: event('a2a.v1.cancel', A2aCancelRequest),
} as const;
