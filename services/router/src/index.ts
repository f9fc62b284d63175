import { contracts, type StoredItem } from '@askbus/contracts';
import type { Bus, HandlerContext } from '@askbus/bus';
import { llmFromEnv, loadPrompts } from '@askbus/llm';
import { runAsk } from './ask-pipeline';
import type { AnswerModel } from './post-ranking';
import { defaultSearchSettings, type SearchPorts, type SearchSettings } from './search-pipeline';

export * from './ask-pipeline';
export * from './search-pipeline';
export * from './post-ranking';
export { mergeAsync } from './merge';

export interface RouterOptions {
  search?: Partial<SearchSettings>;
  /** Limit of one retrieval call. */
  retrieveTimeoutMs?: number;
  /** Language model and prompts of summarize / generate (default: ASKBUS_LLM_*, config/prompts.json). */
  model?: AnswerModel;
}

/** The search path's ports over NATS: the retriever and the ranker replicas behind their subjects. */
export function busPorts(bus: Bus, ctx: HandlerContext, retrieveTimeoutMs = 10_000): SearchPorts {
  return {
    retrieve: async (req, signal) =>
      (await bus.request(contracts.search, req, ctx.onward({ signal, timeoutMs: retrieveTimeoutMs }))).items,
    score: (query: string, items: StoredItem[], signal: AbortSignal) =>
      bus.stream(contracts.score, { query, items }, ctx.onward({ signal })),
  };
}

/**
 * Serves `ask.v1.run`: one AskRequest in, NLWeb messages out as a stream. Returns the answer
 * model in use, whose client's counters feed the metrics.
 */
export function startRouter(bus: Bus, opts: RouterOptions = {}): { model: AnswerModel } {
  const settings: SearchSettings = { ...defaultSearchSettings, ...opts.search };
  const model = opts.model ?? { llm: llmFromEnv(), prompts: loadPrompts() };
  bus.serveStream(contracts.ask, (req, ctx) =>
    runAsk(req, busPorts(bus, ctx, opts.retrieveTimeoutMs), ctx.signal, settings, undefined, model),
  );
  return { model };
}

/** Router settings from the environment (ASKBUS_RANK_BATCH, ASKBUS_CANDIDATES, ASKBUS_COLLATE_MS). */
export function routerOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): RouterOptions {
  const num = (name: string): number | undefined => {
    const v = env[name];
    if (v === undefined || v === '') return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number, got "${v}"`);
    return n;
  };
  const search: Partial<SearchSettings> = {};
  const batch = num('ASKBUS_RANK_BATCH');
  if (batch) search.rankBatchSize = batch;
  const candidates = num('ASKBUS_CANDIDATES');
  if (candidates) search.numCandidates = candidates;
  const collate = num('ASKBUS_COLLATE_MS');
  if (collate !== undefined) search.collateMs = collate;
  return { search };
}
