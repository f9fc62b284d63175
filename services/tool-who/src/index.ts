import { toStoredItem } from '@askbus/contracts';
import { contracts, type MessageBody, type ResultItem } from '@askbus/contracts';
import type { Bus, HandlerContext } from '@askbus/bus';
import { llmFromEnv, type Llm } from '@askbus/llm';
import { rank, retrieve, serveTool, type ToolDeps } from '@askbus/tools';

/** Items retrieved per site to judge it; NLWeb's early send (> 59) and final (> 70) thresholds. */
const PER_SITE = 5;
const SEND = 59;

/** The subject of a "which site can …" question: what the sites are judged on. */
export function whoSubject(query: string): string {
  const q = query
    .trim()
    .replace(/[?!.]+$/, '')
    .replace(
      /^(?:(?:which|what) (?:web)?sites?|who|where)\s+(?:(?:can|could|would|will|should|do|does)\s+)?(?:i\s+)?(?:tell me|help me( with)?|answer questions|know|has|have|find|look for|learn|get)?\s*(?:(?:information|info|anything|something|questions)\s+)?(?:about|on|with|for|of)?\s*/i,
      '',
    )
    .trim();
  return q || query;
}

/**
 * The who tool: which loaded sites can answer a query. Every site (of `site`, or all of them for
 * `site=all`) is searched at once, its best items scored by the ranker; a site's score is its best
 * item's. Sites above 59 are sent best first, each as a result pointing at `?site=…&query=…`.
 */
export async function* runWho(
  req: { ask: { query: string; site: string[]; maxResults?: number } },
  ctx: HandlerContext,
  deps: ToolDeps,
): AsyncGenerator<MessageBody> {
  const loaded = (await deps.bus.request(contracts.sites, {}, ctx.onward({ timeoutMs: 10_000 }))).sites;
  const subject = whoSubject(req.ask.query);
  const wanted = req.ask.site.includes('all') ? loaded : loaded.filter((s) => req.ask.site.includes(s.name));
  yield { message_type: 'intermediate_message', content: `Asking ${wanted.map((s) => s.name).join(', ')}` };
  const judged = await Promise.all(
    wanted.map(async (site) => {
      const items = await retrieve(deps.bus, ctx, subject, [site.name], PER_SITE);
      const scores = await rank(deps.bus, ctx, subject, items.map(toStoredItem));
      const best = scores.sort((a, b) => b.score - a.score)[0];
      const top = items.find((i) => i.url === best?.url);
      return { site, score: best?.score ?? 0, top, count: items.length };
    }),
  );
  const results: ResultItem[] = judged
    .filter((j) => j.score > SEND)
    .sort((a, b) => b.score - a.score)
    .slice(0, req.ask.maxResults ?? 10)
    .map((j) => ({
      '@type': 'Item',
      url: `?site=${encodeURIComponent(j.site.name)}&query=${encodeURIComponent(subject)}&tool=search`,
      name: j.site.name,
      site: j.site.name,
      siteUrl: j.site.name,
      score: j.score,
      description: `${j.site.name} has ${j.site.itemCount} ${j.site.types.join(', ')} items${j.top ? `; best match: ${j.top.name}` : ''}.`,
      schema_object: { '@type': 'WebSite', name: j.site.name, about: j.site.types },
    }));
  if (results.length === 0)
    yield { message_type: 'no_results', content: `No loaded site can answer "${req.ask.query}".` };
  else yield { message_type: 'result', content: results };
}

export function startWhoTool(bus: Bus, opts: { llm?: Llm } = {}): { llm: Llm } {
  const llm = opts.llm ?? llmFromEnv();
  serveTool(bus, 'who', { bus, llm }, runWho);
  return { llm };
}
