import { contracts, type MessageBody, type ResultItem } from '@askbus/contracts';
import type { Bus, HandlerContext } from '@askbus/bus';
import { llmFromEnv, type Llm } from '@askbus/llm';
import { WHO_SEARCH_SIZE, rankWhoSites, whoSubject } from '@askbus/search-core';
import type { SiteEvidence, SiteRank } from '@askbus/search-core';
import { retrieve, serveTool, type ToolDeps } from '@askbus/tools';

export { whoSubject } from '@askbus/search-core';

/** A site that can answer, as a result pointing at `?site=…&query=…` (NLWeb's who results). */
export function siteResult(s: SiteRank, subject: string): ResultItem {
  const types = s.types.join(', ');
  return {
    '@type': 'Item',
    url: `?site=${encodeURIComponent(s.name)}&query=${encodeURIComponent(subject)}&tool=search`,
    name: s.name,
    site: s.name,
    siteUrl: s.name,
    score: s.score,
    description:
      `${s.name} has ${s.item_count} ${types || ''} items; ${s.matches} of those found match, best: ${s.best.name}.`.replace(
        /\s+/g,
        ' ',
      ),
    schema_object: {
      '@type': 'WebSite',
      name: s.name,
      about: s.types,
      matches: s.matches,
      hits: s.hits,
      item_count: s.item_count,
      best_match: s.best,
    },
  };
}

/**
 * The who tool: which loaded sites can answer a query. Every site (of `site`, or all of them for
 * `site=all`) is searched at once for the question's subject, and the sites are ranked by
 * search-core's rankWhoSites: the same ranking as the gateway's /who and MCP `who`. Sites that
 * can answer are sent best first; none is `no_results`.
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
  const evidence = await Promise.all(
    wanted.map(async (site): Promise<SiteEvidence> => ({
      name: site.name,
      itemCount: site.itemCount,
      types: site.types,
      items: await retrieve(deps.bus, ctx, subject, [site.name], WHO_SEARCH_SIZE),
    })),
  );
  const ranked = rankWhoSites(req.ask.query, evidence, { maxSites: req.ask.maxResults ?? 10 });
  if (ranked.length === 0)
    yield { message_type: 'no_results', content: `No loaded site can answer "${req.ask.query}".` };
  else yield { message_type: 'result', content: ranked.map((s) => siteResult(s, subject)) };
}

export function startWhoTool(bus: Bus, opts: { llm?: Llm } = {}): { llm: Llm } {
  const llm = opts.llm ?? llmFromEnv();
  serveTool(bus, 'who', { bus, llm }, runWho);
  return { llm };
}
