import { toStoredItem } from '@askbus/contracts';
import type { MessageBody, RetrievedItem } from '@askbus/contracts';
import type { Bus, HandlerContext } from '@askbus/bus';
import { extractParams, llmFromEnv, type Llm } from '@askbus/llm';
import { ask, rank, retrieve, serveTool, str, type ToolDeps } from '@askbus/tools';
import { ensembleTask } from './task';

export * from './task';

/** The ensemble tool: items that go together, one search per part → intermediate messages, `ensemble_result`. */
export async function* runEnsemble(
  req: { ask: { query: string; site: string[] }; params: Record<string, unknown> },
  ctx: HandlerContext,
  deps: ToolDeps,
): AsyncGenerator<MessageBody> {
  const fallback = extractParams('ensemble', req.ask.query);
  const given = Array.isArray(req.params.queries) ? req.params.queries.map(String).filter(Boolean) : [];
  const queries = (given.length ? given : (fallback.queries as string[])).slice(0, 6);
  const type = str(req.params.ensemble_type) || str(fallback.ensemble_type) || 'generic';
  // NLWeb: max(10, 60 / n) candidates per part.
  const per = Math.max(10, Math.floor(60 / queries.length));
  const seen = new Set<string>();
  let total = 0;
  const groups: { query: string; items: (RetrievedItem & { score: number })[] }[] = [];
  for (const q of queries) yield { message_type: 'intermediate_message', content: `Looking for ${q}` };
  const found = await Promise.all(
    queries.map(async (q) => {
      const items = await retrieve(deps.bus, ctx, q, req.ask.site, per);
      const scores = new Map(
        (await rank(deps.bus, ctx, q, items.map(toStoredItem))).map((s) => [s.url, s.score]),
      );
      return {
        q,
        items: items.map((i) => ({ ...i, score: scores.get(i.url) ?? 0 })).sort((a, b) => b.score - a.score),
      };
    }),
  );
  for (const { q, items } of found) {
    total += items.length;
    // An item picked for one part is not picked again for another.
    const fresh = items.filter((i) => !seen.has(i.url) && i.score > 0);
    for (const i of fresh.slice(0, 2)) seen.add(i.url);
    groups.push({ query: q, items: fresh.slice(0, 2) });
    const names = fresh.slice(0, 2).map((i) => i.name);
    yield {
      message_type: 'intermediate_message',
      content: names.length ? `Top picks for ${q}: ${names.join(', ')}` : `Nothing found for ${q}`,
    };
  }
  const answer = await ask(
    deps.llm,
    ensembleTask,
    { kind: 'ensemble', query: req.ask.query, ensemble_type: type, groups },
    `Build a ${type} from these items for "${req.ask.query}": one item per part, with why it fits.`,
    ctx.signal,
  );
  yield {
    message_type: 'ensemble_result',
    '@type': 'EnsembleRecommendation',
    result: {
      success: answer.items.length > 0,
      ensemble_type: type,
      recommendations: { theme: answer.theme, items: answer.items, overall_tips: answer.overall_tips },
      total_items_retrieved: total,
    },
  };
}

export function startEnsembleTool(bus: Bus, opts: { llm?: Llm } = {}): { llm: Llm } {
  const llm = opts.llm ?? llmFromEnv();
  serveTool(bus, 'ensemble', { bus, llm }, runEnsemble);
  return { llm };
}
