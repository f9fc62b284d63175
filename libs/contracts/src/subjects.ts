import { z } from 'zod';
import { AskRequest } from './ask';
import { RankItem, RetrievedItem, SiteName, StoredItem } from './item';
import { Message } from './message';
import { A2aCancelRequest, A2aTaskEventEnvelope } from './a2a';
import { McpSessionEvent } from './mcp';
import {
  NamesReply,
  NamesRequest,
  ProfileReply,
  ProfileRequest,
  SearchOutcome,
  Understanding,
} from './understanding';

/**
 * Where a contract's replies or chunks are checked against their schema. `both` (the default):
 * by the service before it sends them, and by the caller when they arrive. `on-receipt`: by the
 * caller only, for the hot path's large messages (search results, rankings, a query's answer):
 * the wire is where trust ends, and the sender's types stand for the check on its side.
 * Requests are checked at both ends either way.
 */
export type Checked = 'both' | 'on-receipt';

/** A request answered by one reply. */
export interface UnaryContract<Req extends z.ZodType, Rep extends z.ZodType> {
  readonly kind: 'unary';
  readonly subject: string;
  readonly request: Req;
  readonly reply: Rep;
  readonly checked?: Checked;
}
/** A request answered by a stream of chunks, then an end marker. */
export interface StreamContract<Req extends z.ZodType, Chunk extends z.ZodType> {
  readonly kind: 'stream';
  readonly subject: string;
  readonly request: Req;
  readonly chunk: Chunk;
  readonly checked?: Checked;
  /**
   * Chunks that may wait a little (the bus's JOIN_WAIT_MS) for the stream's next chunk and
   * travel with it in one message: a chunk that carries no content of its own, so the message,
   * its hop through nats-server and the caller's handling of it are spared.
   */
  joinsNext?(chunk: z.infer<Chunk>): boolean;
}
export type Contract = UnaryContract<z.ZodType, z.ZodType> | StreamContract<z.ZodType, z.ZodType>;

const unary = <Req extends z.ZodType, Rep extends z.ZodType>(
  subject: string,
  request: Req,
  reply: Rep,
  checked?: Checked,
): UnaryContract<Req, Rep> => ({ kind: 'unary', subject, request, reply, ...(checked ? { checked } : {}) });
const stream = <Req extends z.ZodType, Chunk extends z.ZodType>(
  subject: string,
  request: Req,
  chunk: Chunk,
  checked?: Checked,
  joinsNext?: (chunk: z.infer<Chunk>) => boolean,
): StreamContract<Req, Chunk> => ({
  kind: 'stream',
  subject,
  request,
  chunk,
  ...(checked ? { checked } : {}),
  ...(joinsNext ? { joinsNext } : {}),
});

export const SearchRequest = z.object({
  query: z.string().min(1).max(10_000),
  site: z.array(z.union([SiteName, z.literal('all')])).min(1),
  numResults: z.number().int().min(1).max(500).default(50),
  /** Keep only items of these schema.org types (exact `@type`). */
  types: z.array(z.string()).optional(),
  /**
   * The question as structure (see understanding.ts): its constraints filter, its orders sort
   * and its free text is what the keyword and vector search look for. Absent: plain text search.
   */
  understanding: Understanding.optional(),
});
export const SearchReply = z.object({
  items: z.array(RetrievedItem),
  /** How many items satisfied the constraints, and which were relaxed (searches with an understanding). */
  outcome: SearchOutcome.optional(),
});

/** Items by URL (tools fetch the items the question named). */
export const ItemsRequest = z.object({ urls: z.array(z.string().min(1)).min(1).max(100) });
export const ItemsReply = z.object({ items: z.array(StoredItem) });

export const UpsertRequest = z.object({
  site: SiteName,
  items: z.array(StoredItem).max(10_000),
  /** Write the index to disk after this batch (the last batch of a load sets it). */
  persist: z.boolean().default(true),
  /** Move items whose URL another site holds into this one; without it they are refused (`refused`). */
  move: z.boolean().default(false),
});
export const UpsertReply = z.object({
  upserted: z.number().int(),
  total: z.number().int(),
  /** Items left out because another site holds their URL (an upsert without `move`). */
  refused: z.array(z.object({ url: z.string(), site: z.string() })).default([]),
});

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

/**
 * `rank.v1.score`'s request. Changed incompatibly in issue 22 (rankers and their callers must be
 * updated together): items are RankItems (what a ranker reads, the schema object as JSON text)
 * rather than whole StoredItems, and the stream's chunks are ScoredBatches rather than one
 * ScoredItem per message.
 */
export const ScoreRequest = z.object({
  query: z.string().min(1).max(10_000),
  items: z.array(RankItem).min(1).max(200),
  /** The question as structure: the local scorer scores by how well items satisfy it; an LLM is told it. */
  understanding: Understanding.optional(),
});
export type ScoreRequest = z.infer<typeof ScoreRequest>;
export const ScoredItem = z.object({
  url: z.string(),
  score: z.number().min(0).max(100),
  description: z.string(),
  /** Why it got that score (which constraints it met, where it stands): for debugging, not for people. */
  debug: z.string().max(2_000).optional(),
  /** Who gave the score: the language model, or the local scorer. */
  scoredBy: z.enum(['model', 'local']).optional(),
  /**
   * Set when the local scorer stood in for a model that failed on this item: why (an LlmError
   * code such as `malformed`, `unavailable`, `timeout`, `circuit_open`, or `incomplete`).
   */
  fallbackReason: z.string().max(64).optional(),
});
export type ScoredItem = z.infer<typeof ScoredItem>;
/**
 * One chunk of `rank.v1.score`: the items scored together, sent as soon as they are (the whole
 * request with the local scorer; each language-model call's items with a model).
 */
export const ScoredBatch = z.object({ items: z.array(ScoredItem).min(1).max(200) });
export type ScoredBatch = z.infer<typeof ScoredBatch>;

/** A tool service's request: the query (decontextualized) and the parameters its returnStruc names. */
export const ToolRunRequest = z.object({
  ask: AskRequest,
  params: z.record(z.string(), z.unknown()).default({}),
});
export type ToolRunRequest = z.infer<typeof ToolRunRequest>;
/** A tool handler's name, as config/tools.xml and a tool service's declaration spell it. */
export const ToolHandlerName = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,63}$/, 'a handler name is lower case letters, digits and _');
export type ToolHandler = string;
const TOOL_SUBJECT = /^tool\.v1\.([a-z][a-z0-9_]{0,63})\.run$/;
const toolContractsByHandler = new Map<string, StreamContract<typeof ToolRunRequest, typeof Message>>();

/**
 * The stream contract of one tool handler: `tool.v1.<handler>.run`. There is no list of
 * handlers here: a tool exists when config/tools.xml names its handler and a service declares
 * that it serves this contract (services/<name>/src/service.ts).
 */
export function toolContract(handler: ToolHandler): StreamContract<typeof ToolRunRequest, typeof Message> {
  let c = toolContractsByHandler.get(handler);
  if (!c) {
    ToolHandlerName.parse(handler);
    c = stream(`tool.v1.${handler}.run`, ToolRunRequest, Message);
    toolContractsByHandler.set(handler, c);
  }
  return c;
}

/** The handler a tool contract's subject names, or undefined for any other subject. */
export const toolHandlerOf = (subject: string): ToolHandler | undefined => TOOL_SUBJECT.exec(subject)?.[1];

/** Every subject askbus sends or serves. Nothing uses a subject that is not declared here. */
export const contracts = {
  // the begin message says only that the answer has started: it goes with the first result
  ask: stream(
    'ask.v1.run',
    AskRequest,
    Message,
    'on-receipt',
    (m) => m.message_type === 'begin-nlweb-response',
  ),
  search: unary('retrieve.v1.search', SearchRequest, SearchReply, 'on-receipt'),
  upsert: unary('retrieve.v1.upsert', UpsertRequest, UpsertReply),
  sites: unary('retrieve.v1.sites', SitesRequest, SitesReply),
  delete: unary('retrieve.v1.delete', DeleteRequest, DeleteReply),
  profile: unary('retrieve.v1.profile', ProfileRequest, ProfileReply),
  names: unary('retrieve.v1.names', NamesRequest, NamesReply),
  items: unary('retrieve.v1.items', ItemsRequest, ItemsReply),
  score: stream('rank.v1.score', ScoreRequest, ScoredBatch, 'on-receipt'),
} as const;

/**
 * `ask.v1.cancel.<caller>.<queryId>` cancels the work of a query that `caller` asked for;
 * `…<queryId>.<callId>` one call of it. `caller` is the NATS user that publishes it (its
 * permissions allow only its own token), or ANONYMOUS_CALLER on a NATS without users.
 */
export const CANCEL_PREFIX = 'ask.v1.cancel';
export const ANONYMOUS_CALLER = '_';
export const cancelSubject = (caller: string, queryId: string, callId?: string): string =>
  `${CANCEL_PREFIX}.${caller}.${queryId}${callId ? `.${callId}` : ''}`;

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
/** The key a subjectToken came from. */
export function keyOfSubjectToken(token: string): string {
  if (!token.startsWith('_')) return token;
  const bytes = Uint8Array.from(token.slice(1).match(/../g) ?? [], (h) => parseInt(h, 16));
  return new TextDecoder().decode(bytes);
}
export const eventSubject = (contract: EventContract<z.ZodType>, key: string): string =>
  `${contract.subject}.${subjectToken(key)}`;

/** Every event subject askbus publishes; gateways share A2A task events through them. */
export const eventContracts = {
  /** `a2a.v1.events.<taskId>`: every event the gateway running a task gives its SDK event bus. */
  a2aTaskEvents: event('a2a.v1.events', A2aTaskEventEnvelope),
  /** `a2a.v1.cancel.<taskId>`: a gateway asks the one running the task to cancel it. */
  a2aCancelTask: event('a2a.v1.cancel', A2aCancelRequest),
  /** `mcp.v1.session.<sessionId>`: replies, relayed legacy POSTs and closes of a shared MCP session. */
  mcpSession: event('mcp.v1.session', McpSessionEvent),
} as const;

/**
 * In a declaration's `calls`: every tool contract that some service declares it serves (the
 * router dispatches to whichever tool config/tools.xml names). Permissions spell it out.
 */
export const EVERY_TOOL = Object.freeze({ kind: 'every-tool' as const });
export type EveryTool = typeof EVERY_TOOL;
