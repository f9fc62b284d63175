import { contracts, toolContract, toRankItem, type StoredItem, type Understanding } from '@askbus/contracts';
import { WordNet } from '@askbus/embeddings';
import { Understander, type UnderstandPorts } from './understand';
import { SchemaTypeWords } from './relevance';
import { loadTools, type ToolsConfig } from '@askbus/tools';
import type { Bus, HandlerContext } from '@askbus/bus';
import { llmFromEnv, loadPrompts } from '@askbus/llm';
import { runAsk } from './ask-pipeline';
import { Admission, admitted } from './admission';
import { answerDeadline } from './deadline';
import type { RoutingDeps } from './route';
import { resultsIn, type QuerySummary } from './routing-telemetry';
import type { SelectionSettings } from './tool-selection';
import type { AnswerModel } from './post-ranking';
import { defaultSearchSettings, type SearchPorts, type SearchSettings } from './search-pipeline';
import { RankBatching } from './rank-batching';

export * from './ask-pipeline';
export * from './search-pipeline';
export * from './post-ranking';
export * from './route';
export * from './tool-selection';
export { mergeAsync } from './merge';
export { Admission } from './admission';
export * from './understand';
export * from './understand-llm';
export * from './relevance';
export { answerDeadline, untilDeadline } from './deadline';

export interface RouterOptions {
  search?: Partial<SearchSettings>;
  /** Limit of one retrieval call, from when it is sent. */
  retrieveTimeoutMs?: number;
  /**
   * Calls to the retriever (searches, profiles, names) this router has running at once; more
   * wait their turn before they are sent (admission.ts). Default 16.
   */
  retrieverConcurrency?: number;
  /** Language model and prompts of summarize / generate (default: ASKBUS_LLM_*, config/prompts.json). */
  model?: AnswerModel;
  /**
   * Tool routing (prepare steps, tool selection, FastTrack): the tools (default: ASKBUS_TOOLS or
   * config/tools.xml, validated at start), or false for the search path only.
   */
  tools?: ToolsConfig | false;
  selection?: SelectionSettings;
  fastTrack?: boolean;
  debug?: boolean;
  onRouted?: RoutingDeps['onRouted'];
  /** Called once per query when its answer ended: the request log line (see routing-telemetry). */
  onAnswered?: (summary: QuerySummary) => void;
  /**
   * Time budget of one query from its arrival (ms): past it the router stops waiting (prepare
   * steps, retrieval, ranking, tools, the summary or answer being written) and answers with what
   * it has; a retrieval still running is an error, there being nothing to answer from. The caller's deadline applies
   * too, less a reserve for the last messages (see answerDeadline). Default: none of its own.
   */
  queryDeadlineMs?: number;
  /** Read questions against the sites' profiles (default true; false: plain text search only). */
  understand?: boolean;
  /**
   * Inactivity limit of the router's streams from rankers and tool services (ms): how soon a
   * service that died mid-answer is noticed. Keep it well above their heartbeat interval (2 s).
   * Default: the bus's (15 s).
   */
  inactivityMs?: number;
}

/** The sites' item types from the retriever, cached for a few seconds. */
function siteTypesFrom(bus: Bus, ttlMs = 5_000): RoutingDeps['siteTypes'] {
  let cache: { at: number; types: Map<string, string[]> } | undefined;
  return async (site, signal) => {
    if (!cache || Date.now() - cache.at > ttlMs) {
      const { sites } = await bus.request(contracts.sites, {}, { timeoutMs: 2_000, signal });
      cache = { at: Date.now(), types: new Map(sites.map((s) => [s.name, s.types])) };
    }
    const names = site.includes('all') ? [...cache.types.keys()] : site;
    return [...new Set(names.flatMap((n) => cache!.types.get(n) ?? []))];
  };
}

/** The search path's ports over NATS: the retriever and the ranker replicas behind their subjects. */
export function busPorts(
  bus: Bus,
  ctx: HandlerContext,
  retrieveTimeoutMs = 10_000,
  inactivityMs?: number,
  understander?: Understander,
  admission?: Admission,
  batching?: RankBatching,
): SearchPorts {
  const search = (req: Parameters<SearchPorts['retrieve']>[0], signal: AbortSignal) =>
    bus.request(contracts.search, req, ctx.onward({ signal, timeoutMs: retrieveTimeoutMs }));
  return {
    retrieve: async (req, signal) => await admitted(admission, signal, () => search(req, signal)),
    score: async function* (
      query: string,
      items: StoredItem[],
      signal: AbortSignal,
      understanding?: Understanding,
    ) {
      const stream = bus.stream(
        contracts.score,
        { query, items: items.map(toRankItem), ...(understanding ? { understanding } : {}) },
        ctx.onward({ signal, ...(inactivityMs ? { inactivityMs } : {}) }),
      );
      for await (const batch of stream) {
        batching?.observe(batch.items);
        yield batch.items;
      }
    },
    ...(batching ? { rankBatchSize: () => batching.size() } : {}),
    ...(understander
      ? {
          understand: async (query: string, site: string[], signal: AbortSignal) =>
            (await understander.understand(query, site, signal))?.understanding,
        }
      : {}),
  };
}

/** The understander's ports over NATS: the retriever's profiles and name index. */
export function understandPorts(bus: Bus, admission?: Admission): UnderstandPorts {
  return {
    profiles: async (site, known, signal) =>
      (
        await admitted(admission, signal, () =>
          bus.request(contracts.profile, { site: [...site], known }, { signal, timeoutMs: 5_000 }),
        )
      ).profiles,
    names: async (site, text, signal) =>
      (
        await admitted(admission, signal, () =>
          bus.request(contracts.names, { site: [...site], text }, { signal, timeoutMs: 5_000 }),
        )
      ).matches,
  };
}

/**
 * Serves `ask.v1.run`: one AskRequest in, NLWeb messages out as a stream. Returns the answer
 * model in use, whose client's counters feed the metrics.
 */
export function startRouter(
  bus: Bus,
  opts: RouterOptions = {},
): { model: AnswerModel; admission: Admission } {
  const settings: SearchSettings = { ...defaultSearchSettings, ...opts.search };
  const model = opts.model ?? { llm: llmFromEnv(), prompts: loadPrompts() };
  const tools = opts.tools === undefined ? loadTools() : opts.tools;
  const siteTypes = siteTypesFrom(bus);
  const typeWords = new SchemaTypeWords(WordNet.get());
  const namedTypes = (query: string) => typeWords.named(query);
  const admission = new Admission(opts.retrieverConcurrency ?? 16);
  // questions are read against the sites' profiles (opts.understand false: plain text search)
  const understander =
    opts.understand === false
      ? undefined
      : new Understander(understandPorts(bus, admission), WordNet.get(), { llm: model.llm });
  const inactivity = opts.inactivityMs ? { inactivityMs: opts.inactivityMs } : {};
  // a batch size set by hand holds; otherwise it follows who scores (rank-batching.ts)
  const batching =
    opts.search?.rankBatchSize === undefined ? new RankBatching(settings.rankBatchSize) : undefined;
  bus.serveStream(contracts.ask, (req, ctx) => {
    const deadline = answerDeadline(Date.now(), ctx.deadline, opts.queryDeadlineMs);
    const routing: RoutingDeps | undefined = tools
      ? {
          llm: model.llm,
          tools,
          siteTypes,
          namedTypes,
          // A tool gets the query's deadline: past it, it stops and the query ends with an error.
          runTool: (handler, toolReq, signal) =>
            bus.stream(
              toolContract(handler),
              toolReq,
              ctx.onward({ signal, ...inactivity, ...(deadline === undefined ? {} : { deadline }) }),
            ),
          ...(deadline === undefined ? {} : { deadline }),
          ...(opts.selection ? { selection: opts.selection } : {}),
          ...(opts.fastTrack === undefined ? {} : { fastTrack: opts.fastTrack }),
          ...(opts.debug ? { debug: true } : {}),
          onRouted: (stats) => {
            tool = stats.tool;
            opts.onRouted?.(stats);
          },
        }
      : undefined;
    let tool = req.tool ?? 'search';
    const answer = runAsk(
      req,
      busPorts(bus, ctx, opts.retrieveTimeoutMs, opts.inactivityMs, understander, admission, batching),
      ctx.signal,
      deadline === undefined ? settings : { ...settings, rankDeadline: deadline },
      undefined,
      model,
      routing,
    );
    const answered = opts.onAnswered;
    if (!answered) return answer;
    return (async function* () {
      const started = performance.now();
      let results = 0;
      let outcome: QuerySummary['outcome'] = 'ok';
      try {
        for await (const m of answer) {
          results += resultsIn(m);
          if (m.message_type === 'error') outcome = 'error';
          yield m;
        }
      } catch (err) {
        outcome = ctx.signal.aborted ? 'cancelled' : 'error';
        throw err;
      } finally {
        answered({
          queryId: ctx.queryId,
          traceId: ctx.traceparent.split('-')[1] ?? '',
          site: req.site,
          tool,
          results,
          ms: Math.round(performance.now() - started),
          outcome: ctx.signal.aborted ? 'cancelled' : outcome,
        });
      }
    })();
  });
  return { model, admission };
}

/**
 * Router settings from the environment (ASKBUS_RANK_BATCH, ASKBUS_CANDIDATES, ASKBUS_COLLATE_MS,
 * ASKBUS_QUERY_DEADLINE_MS, ASKBUS_ROUTER_INACTIVITY_MS, ASKBUS_ROUTER_RETRIEVER_CONCURRENCY,
 * ASKBUS_ROUTER_DEBUG=1,
 * ASKBUS_FAST_TRACK=0; the tools file is ASKBUS_TOOLS).
 */
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
  // NLWeb's debug-only tool_selection message (AskRequest has no debug field).
  const debug = env.ASKBUS_ROUTER_DEBUG === '1' || env.ASKBUS_ROUTER_DEBUG === 'true';
  const fastTrack = env.ASKBUS_FAST_TRACK !== '0';
  const queryDeadlineMs = num('ASKBUS_QUERY_DEADLINE_MS');
  const inactivityMs = num('ASKBUS_ROUTER_INACTIVITY_MS');
  const retrieverConcurrency = num('ASKBUS_ROUTER_RETRIEVER_CONCURRENCY');
  return {
    ...(retrieverConcurrency ? { retrieverConcurrency } : {}),
    search,
    ...(debug ? { debug } : {}),
    ...(fastTrack ? {} : { fastTrack }),
    ...(queryDeadlineMs ? { queryDeadlineMs } : {}),
    ...(inactivityMs ? { inactivityMs } : {}),
  };
}
