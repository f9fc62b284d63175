import { contracts, whoSiteItem, type AskFilters, type MessageBody, type SiteInfo } from '@askbus/contracts';
import type { Bus, HandlerContext } from '@askbus/bus';
import { llmFromEnv, type Llm } from '@askbus/llm';
import { WHO_SEARCH_SIZE, rankWhoSites, whoSubject } from '@askbus/search-core';
import type { SiteEvidence } from '@askbus/search-core';
import { serveTool, type ToolDeps } from '@askbus/tools';

export { whoSubject } from '@askbus/search-core';

const typesOf = (v: AskFilters[string] | undefined): string[] =>
  (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((t): t is string => typeof t === 'string');

/** The loaded types of a site that the wanted ones name (case-insensitive), in the site's spelling. */
export function matchingTypes(wanted: readonly string[], site: SiteInfo): string[] {
  const want = new Set(wanted.map((t) => t.trim().toLowerCase()));
  return site.types.filter((t) => want.has(t.toLowerCase()));
}

/**
 * The who tool: which loaded sites can answer a query; the one answer to it (the gateway's /who,
 * MCP's and A2A's `who` ask the router for this tool). Every site (of `site`, or all of them for
 * `site=all`) is searched at once for the question's subject, and the sites are ranked by
 * search-core's rankWhoSites. A `type` filter counts only items of those schema.org types
 * (sites holding none of them are left out). Sites that can answer are sent best first; none
 * is `no_results`.
 */
export async function* runWho(
  req: { ask: { query: string; site: string[]; maxResults?: number; filters?: AskFilters | undefined } },
  ctx: HandlerContext,
  deps: ToolDeps,
): AsyncGenerator<MessageBody> {
  const loaded = (await deps.bus.request(contracts.sites, {}, ctx.onward({ timeoutMs: 10_000 }))).sites;
  const subject = whoSubject(req.ask.query);
  const wantedTypes = typesOf(req.ask.filters?.type);
  const wanted = (
    req.ask.site.includes('all') ? loaded : loaded.filter((s) => req.ask.site.includes(s.name))
  ).flatMap((site) => {
    const types = wantedTypes.length ? matchingTypes(wantedTypes, site) : undefined;
    return types && types.length === 0 ? [] : [{ site, types }];
  });
  yield {
    message_type: 'intermediate_message',
    content: `Asking ${wanted.map((w) => w.site.name).join(', ')}`,
  };
  const evidence = await Promise.all(
    wanted.map(async ({ site, types }): Promise<SiteEvidence> => {
      const { items } = await deps.bus.request(
        contracts.search,
        { query: subject, site: [site.name], numResults: WHO_SEARCH_SIZE, ...(types ? { types } : {}) },
        ctx.onward({ timeoutMs: 10_000 }),
      );
      return { name: site.name, itemCount: site.itemCount, types: site.types, items };
    }),
  );
  const ranked = rankWhoSites(req.ask.query, evidence, { maxSites: req.ask.maxResults ?? 10 });
  if (ranked.length === 0)
    yield { message_type: 'no_results', content: `No loaded site can answer "${req.ask.query}".` };
  else yield { message_type: 'result', content: ranked.map((s) => whoSiteItem(s, subject)) };
}

export function startWhoTool(bus: Bus, opts: { llm?: Llm } = {}): { llm: Llm } {
  const llm = opts.llm ?? llmFromEnv();
  serveTool(bus, 'who', { bus, llm }, runWho);
  return { llm };
}
