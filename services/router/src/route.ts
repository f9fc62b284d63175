import type {
  AskRequest,
  Message,
  MessageBody,
  NamedItem,
  ResultItem,
  ToolHandler,
  ToolRunRequest,
  Understanding,
} from '@askbus/contracts';
import {
  completeOrLocal,
  DecontextualizeAnswer,
  RelevanceAnswer,
  RequiredInfoAnswer,
  truthy,
  taskPrompt,
  type Llm,
  type RoutingTask,
} from '@askbus/llm';
import { toolsFor, type ToolsConfig } from '@askbus/tools';
import type { z } from 'zod';
import { BusError } from '@askbus/bus';
import { untilDeadline } from './deadline';
import { foreignTypes, type NamedType } from './relevance';
import { postRanking, type AnswerModel } from './post-ranking';
import {
  runSearch,
  type SearchFindings,
  type SearchPorts,
  type SearchSettings,
  type SearchStats,
} from './search-pipeline';
import {
  defaultSelectionSettings,
  selectTools,
  SEARCH_TOOL,
  type SelectionSettings,
  type SelectionStats,
  type ToolChoice,
} from './tool-selection';

/** What tool routing needs besides the search ports: a model, the tools, the sites' types, the tool services. */
export interface RoutingDeps {
  llm: Llm;
  tools: ToolsConfig;
  /** The schema.org types of the sites' items, most common first ([] when unknown). */
  siteTypes(site: string[], signal: AbortSignal): Promise<string[]>;
  /**
   * The schema.org types a question's words name, each with its word (relevance.ts
   * `SchemaTypeWords`): what the
   * local model's irrelevance check reads. Without it no question is turned away offline.
   */
  namedTypes?: (query: string) => NamedType[];
  runTool(handler: ToolHandler, req: ToolRunRequest, signal: AbortSignal): AsyncIterable<Message>;
  selection?: SelectionSettings;
  /** Run retrieval and ranking of the raw query at once, beside the prepare steps (default true). */
  fastTrack?: boolean;
  /** Send NLWeb's debug-only `tool_selection` message. */
  debug?: boolean;
  /** Told how each query was routed (logs, eval, bench). */
  onRouted?: (stats: RoutingStats) => void;
  /**
   * For one query: when the prepare steps stop waiting on the model (epoch ms) and take their
   * defaults (the query as asked, relevant, enough information, the best tool scored so far).
   */
  deadline?: number;
}

export interface RoutingStats {
  tool: string;
  score: number;
  selection: SelectionStats;
  fastTrack: 'used' | 'aborted' | 'ineligible';
  fastTrackAbortReason?: string;
  decontextualized?: string;
  irrelevant?: boolean;
  askedUser?: boolean;
  toolFailed?: string;
}

/**
 * Pulls an async generator eagerly into a buffer, so FastTrack work goes on while the prepare
 * steps run; `drain()` replays what came and goes on to the end, returning the generator's value.
 */
class Pump<T, R> {
  private readonly buf: T[] = [];
  private finished = false;
  private result: R | undefined;
  private error: unknown;
  private failed = false;
  private wake: (() => void) | undefined;

  constructor(gen: AsyncGenerator<T, R, undefined>) {
    void this.run(gen);
  }

  private async run(gen: AsyncGenerator<T, R, undefined>): Promise<void> {
    try {
      for (;;) {
        const step = await gen.next();
        if (step.done) {
          this.result = step.value;
          break;
        }
        this.buf.push(step.value);
        this.wake?.();
      }
    } catch (err) {
      this.failed = true;
      this.error = err;
    } finally {
      this.finished = true;
      this.wake?.();
    }
  }

  async *drain(): AsyncGenerator<T, R, undefined> {
    for (;;) {
      const next = this.buf.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.finished) {
        if (this.failed) throw this.error;
        return this.result as R;
      }
      await new Promise<void>((r) => (this.wake = r));
      this.wake = undefined;
    }
  }
}

/** A prepare step's answer: the model's, else the local provider's (a failing model degrades, never fails, the query). */
async function ask<S extends z.ZodType>(
  llm: Llm,
  schema: S,
  task: RoutingTask,
  text: string,
  signal: AbortSignal,
  queryId?: string,
): Promise<z.infer<S>> {
  const { answer } = await completeOrLocal(llm, {
    messages: [{ role: 'user', content: taskPrompt(text, task) }],
    tier: 'high',
    jsonSchema: schema,
    schemaName: task.kind,
    task,
    signal,
    ...(queryId ? { queryId } : {}),
  });
  return answer;
}

/**
 * NLWeb's runQuery after the begin message: the prepare steps (decontextualization, relevance,
 * required information, tool selection) run concurrently, and FastTrack retrieval and ranking of
 * the raw query start at once beside them. FastTrack is cancelled (call-level cancel of its
 * retrieval and ranking calls) and its results discarded as soon as decontextualization changes
 * the query, the site is irrelevant, information is missing, or the top tool is not search.
 */
export async function* routeAsk(
  req: AskRequest,
  ports: SearchPorts,
  signal: AbortSignal,
  settings: SearchSettings,
  stats: SearchStats | undefined,
  model: AnswerModel | undefined,
  routing: RoutingDeps,
): AsyncGenerator<MessageBody, void, undefined> {
  const { llm } = routing;
  const explicit = req.tool;
  const siteKey = req.site.includes('all') ? 'all' : req.site[0]!;
  const routed: RoutingStats = {
    tool: 'search',
    score: 0,
    selection: { calls: 0, completed: 0, saved: 0, failed: 0, elapsedMs: 0 },
    fastTrack: 'ineligible',
  };

  // FastTrack: only for a first query on ordinary sites, when no other tool was asked for.
  const ftControl = new AbortController();
  const eligible =
    routing.fastTrack !== false &&
    req.prev.length === 0 &&
    siteKey !== 'all' &&
    (explicit === undefined || explicit === 'search');
  const ftFindings: SearchFindings = {};
  const fastTrack = eligible
    ? new Pump(
        runSearch(req, ports, AbortSignal.any([signal, ftControl.signal]), settings, stats, ftFindings),
      )
    : undefined;
  if (fastTrack) routed.fastTrack = 'used';
  const abortFastTrack = (reason: string): void => {
    if (!fastTrack || ftControl.signal.aborted) return;
    routed.fastTrack = 'aborted';
    routed.fastTrackAbortReason = reason;
    ftControl.abort();
  };

  // A model slower than the query's deadline must not hold the answer back: past it, every
  // prepare step takes its default.
  const prepareSignal = untilDeadline(signal, routing.deadline);
  const types = routing.siteTypes(req.site, prepareSignal).catch(() => [] as string[]);
  // the question against the site's profile: its named items route to details and compare
  const understood = ports.understand
    ? ports.understand(req.query, req.site, prepareSignal).catch(() => undefined)
    : Promise.resolve(undefined);
  const itemType = types.then((t) => t[0] ?? 'Thing');

  const decon = (async () => {
    if (req.prev.length === 0) return { changed: false, query: req.query };
    try {
      const a = await ask(
        llm,
        DecontextualizeAnswer,
        { kind: 'decontextualize', query: req.query, prev: req.prev },
        `The user asked, in order: ${JSON.stringify(req.prev)}. Their new question is "${req.query}". If it is a follow-up that needs the earlier questions to be understood (err on the side of follow-up), rewrite it to stand alone.`,
        prepareSignal,
        req.queryId,
      );
      const q = a.decontextualized_query.trim();
      const changed = truthy(a.requires_decontextualization) && q !== '' && q !== req.query;
      if (changed) abortFastTrack('decontextualized');
      return { changed, query: changed ? q : req.query };
    } catch {
      return { changed: false, query: req.query };
    }
  })();

  const relevance = (async () => {
    // The who tool asks which sites are relevant at all: no one site's relevance applies.
    if (explicit === 'who') return { irrelevant: false, explanation: '' };
    try {
      const siteTypes = await types;
      const named = routing.namedTypes?.(req.query) ?? [];
      const foreign = named.length ? foreignTypes(named, siteTypes, await understood) : [];
      const a = await ask(
        llm,
        RelevanceAnswer,
        { kind: 'relevance', query: req.query, site: siteKey, siteTypes, foreign },
        `The site ${siteKey} holds ${siteTypes.join(', ') || 'items'}. Is the question "${req.query}" irrelevant to it?`,
        prepareSignal,
        req.queryId,
      );
      const irrelevant = truthy(a.site_is_irrelevant_to_query);
      if (irrelevant) abortFastTrack('irrelevant');
      return { irrelevant, explanation: a.explanation_for_irrelevance };
    } catch {
      return { irrelevant: false, explanation: '' };
    }
  })();

  const required = (async () => {
    if (explicit !== undefined) return { found: true, question: '' };
    try {
      const a = await ask(
        llm,
        RequiredInfoAnswer,
        { kind: 'required_info', query: req.query, itemType: await itemType },
        `Does the question "${req.query}" say enough to search for ${await itemType} items? If not, what should the user be asked?`,
        prepareSignal,
        req.queryId,
      );
      const found = truthy(a.required_info_found);
      if (!found) abortFastTrack('required_info');
      return { found, question: a.user_question };
    } catch {
      return { found: true, question: '' };
    }
  })();

  const selection = (async (): Promise<{ ranked: ToolChoice[]; stats: SelectionStats }> => {
    const type = await itemType;
    const tools = toolsFor(routing.tools, siteKey, type);
    if (explicit !== undefined) {
      // on every site at once, the tools any site has may be asked for by name (MCP details on "all")
      const anySite = siteKey === 'all' ? toolsFor(routing.tools, 'default', type) : [];
      const tool =
        tools.find((t) => t.name === explicit) ??
        anySite.find((t) => t.name === explicit) ??
        (explicit === 'search' ? SEARCH_TOOL : undefined);
      if (!tool) {
        // a tool the site does not have is the caller's mistake: say which tools it has
        const names = [...new Set(['search', ...tools.map((t) => t.name)])];
        throw new BusError(
          'bad_request',
          `There is no tool "${explicit}" for ${siteKey === 'all' ? 'all sites' : `site ${siteKey}`} (${type} items); its tools are: ${names.join(', ')}.`,
        );
      }
      const stats: SelectionStats = {
        calls: 0,
        completed: 0,
        saved: 0,
        failed: 0,
        elapsedMs: 0,
        skipped: 'explicit',
      };
      if (tool.name !== 'search') abortFastTrack('explicit_tool');
      return { ranked: [{ tool, score: 100, params: {} }], stats };
    }
    const { query, changed } = await decon;
    // a rewritten question is understood again (the first understanding was of the raw one)
    const u =
      changed && ports.understand
        ? await ports.understand(query, req.site, prepareSignal).catch(() => undefined)
        : await understood;
    const result = await selectTools(
      llm,
      tools,
      query,
      type,
      prepareSignal,
      routing.selection ?? defaultSelectionSettings,
      u ? { intent: u.intent, named: u.named.map((n) => n.name), asked: u.asked } : undefined,
      req.queryId,
    );
    if (result.ranked[0]!.tool.name !== 'search') abortFastTrack('tool');
    return result;
  })();

  const [d, rel, info, sel] = await Promise.all([decon, relevance, required, selection]);
  const top = sel.ranked[0]!;
  routed.selection = sel.stats;
  routed.tool = top.tool.name;
  routed.score = top.score;
  const done = (): void => routing.onRouted?.(routed);

  if (rel.irrelevant) {
    abortFastTrack('irrelevant');
    routed.irrelevant = true;
    done();
    yield { message_type: 'site_is_irrelevant_to_query', content: rel.explanation };
    return;
  }
  if (!info.found) {
    abortFastTrack('required_info');
    routed.askedUser = true;
    done();
    yield { message_type: 'ask_user', content: info.question };
    return;
  }
  if (d.changed) {
    routed.decontextualized = d.query;
    yield {
      message_type: 'decontextualized_query',
      decontextualized_query: d.query,
      original_query: req.query,
    };
  }
  if (routing.debug) {
    yield {
      message_type: 'tool_selection',
      selected_tool: top.tool.name,
      score: top.score,
      parameters: top.params,
      query: d.query,
      time_elapsed: `${(sel.stats.elapsedMs / 1000).toFixed(3)}s`,
      ...(sel.stats.skipped ? { llm_skipped: true } : {}),
      calls: sel.stats.calls,
      calls_saved: sel.stats.saved,
    };
  }
  const query = { ...req, query: d.query };

  const handler = top.tool.handler;
  if (top.tool.name !== 'search' && handler !== undefined) {
    let begun = false;
    // the items the question names, as the retriever found them, go with the tool's parameters
    const named = d.changed ? undefined : await understood;
    const params = withNamedItems(
      top.tool.name,
      top.params,
      named?.named ?? [],
      named?.asked ?? [],
      named?.orders ?? [],
    );
    try {
      for await (const m of routing.runTool(handler, { ask: query, params }, signal)) {
        begun = true;
        yield unstamp(m);
      }
      done();
      return;
    } catch (err) {
      if (signal.aborted) throw err;
      const failure = BusError.from(err);
      routed.toolFailed = failure.message;
      // Once the tool has begun its answer the query is its own: a failure then (the service
      // died, timed out or broke mid-answer) ends the query with an error naming the tool.
      // Before that, the router can still search instead, as NLWeb falls back to ranking.
      if (begun) {
        done();
        throw new BusError(failure.code, `The ${top.tool.name} tool failed mid-answer: ${failure.message}`);
      }
      yield {
        message_type: 'status',
        content: `The ${top.tool.name} tool failed (${routed.toolFailed}); searching instead.`,
      };
    }
  }

  // The search path: FastTrack's results when its bet held, else a fresh search.
  let final: ResultItem[];
  let findings: SearchFindings;
  if (fastTrack && !ftControl.signal.aborted) {
    final = yield* fastTrack.drain();
    findings = ftFindings;
  } else {
    abortFastTrack('search_again');
    findings = {};
    final = yield* runSearch(query, ports, signal, settings, stats, findings);
  }
  done();
  for await (const body of postRanking(query, final, model, signal, settings.rankDeadline, findings))
    yield body;
}

/**
 * The tool's parameters with the named items' URLs (and their names as the site writes them):
 * details takes the first (`item_url`), compare the first two (`item1_url`, `item2_url`).
 */
function withNamedItems(
  tool: string,
  params: Record<string, unknown>,
  named: readonly NamedItem[],
  asked: readonly string[],
  orders: Understanding['orders'] = [],
): Record<string, unknown> {
  const [a, b] = named;
  const paths = asked.length ? { asked_paths: [...asked] } : {};
  // "which is cheaper": the side a comparative word prefers, for compare's verdict
  const prefer = orders.flatMap((o) =>
    'path' in o.target ? [{ path: o.target.path, direction: o.direction, word: o.phrase }] : [],
  );
  if (tool === 'details' && a) return { ...params, item_name: a.name, item_url: a.url, ...paths };
  if (tool === 'compare' && a && b)
    return {
      ...params,
      item1_name: a.name,
      item1_url: a.url,
      item2_name: b.name,
      item2_url: b.url,
      ...paths,
      ...(prefer.length ? { prefer } : {}),
    };
  return params;
}

/** A message from a tool service without its envelope: the router stamps its own. */
function unstamp(m: Message): MessageBody {
  const {
    message_id: _id,
    timestamp: _t,
    conversation_id: _c,
    ...body
  } = m as Message & Record<string, unknown>;
  return body as MessageBody;
}
