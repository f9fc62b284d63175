/**
 * `who`: which loaded sites can answer a query. Shared by MCP's `who` tool and the REST /who
 * endpoint (2025 parameters and protocol 0.5). The ranking is search-core's rankWhoSites, the
 * same the who tool (services/tool-who) answers the router with: the gateway only gathers what
 * the retriever finds on each site.
 */
import type { Bus, CallOptions } from '@askbus/bus';
import { contracts } from '@askbus/contracts';
import type { SiteInfo } from '@askbus/contracts';
import { WHO_SEARCH_SIZE, rankWhoSites, whoSubject } from '@askbus/search-core';
import type { SiteEvidence, SiteRank } from '@askbus/search-core';

export { WHO_SEARCH_SIZE, WHO_MIN_SCORE, compareSiteRanks as compareRanks } from '@askbus/search-core';
export type { SiteRank } from '@askbus/search-core';

export interface WhoQuery {
  query: string;
  /** At most this many sites (default 10). */
  maxSites?: number;
  /**
   * Only items of these schema.org types count (case-insensitive: `movie` finds `Movie`).
   * Sites holding none of them are left out.
   */
  types?: string[];
}

/** The loaded types of a site that the wanted ones name, in the site's own spelling. */
export function matchingTypes(wanted: readonly string[], site: SiteInfo): string[] {
  const want = new Set(wanted.map((t) => t.trim().toLowerCase()));
  return site.types.filter((t) => want.has(t.toLowerCase()));
}

/**
 * Asks the retriever for the loaded sites, searches each for the query's subject (in
 * parallel) and ranks the sites that can answer. Bus failures are thrown as they come (BusError).
 */
export async function rankSites(bus: Bus, q: WhoQuery, opts: CallOptions = {}): Promise<SiteRank[]> {
  const { sites } = await bus.request(contracts.sites, {}, opts);
  const subject = whoSubject(q.query);
  const evidence = await Promise.all(
    sites.map(async (s): Promise<SiteEvidence | undefined> => {
      const types = q.types?.length ? matchingTypes(q.types, s) : undefined;
      if (types && types.length === 0) return undefined;
      const { items } = await bus.request(
        contracts.search,
        { query: subject, site: [s.name], numResults: WHO_SEARCH_SIZE, ...(types ? { types } : {}) },
        opts,
      );
      return { name: s.name, itemCount: s.itemCount, types: s.types, items };
    }),
  );
  return rankWhoSites(
    q.query,
    evidence.filter((e): e is SiteEvidence => e !== undefined),
    { maxSites: q.maxSites ?? 10 },
  );
}
