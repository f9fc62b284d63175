/**
 * `who`: which loaded sites can answer a query, ranked by the retriever's own matches per site.
 * Shared by MCP's `who` tool and the REST /who endpoint (2025 parameters and protocol 0.5).
 */
import type { Bus, CallOptions } from '@askbus/bus';
import { contracts } from '@askbus/contracts';
import type { SiteInfo } from '@askbus/contracts';

/** How many items the retriever is asked for per site; a site's hits are capped by it. */
export const WHO_SEARCH_SIZE = 20;

/** One site that can answer, with the numbers behind its rank. */
export interface SiteRank {
  name: string;
  /** Items of the site the retriever matched (at most WHO_SEARCH_SIZE). */
  hits: number;
  /** The retriever's best relevance among them (its own scale, higher is better). */
  top_score: number;
  item_count: number;
  types: string[];
}

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

/** Best first: more hits, then a better top score, then by name. */
export function compareRanks(a: SiteRank, b: SiteRank): number {
  return b.hits - a.hits || b.top_score - a.top_score || a.name.localeCompare(b.name);
}

/**
 * Asks the retriever for the loaded sites, searches each for the query (in parallel) and ranks
 * the sites with at least one hit. Bus failures are thrown as they come (BusError).
 */
export async function rankSites(bus: Bus, q: WhoQuery, opts: CallOptions = {}): Promise<SiteRank[]> {
  const { sites } = await bus.request(contracts.sites, {}, opts);
  const ranked = await Promise.all(
    sites.map(async (s): Promise<SiteRank | undefined> => {
      const types = q.types?.length ? matchingTypes(q.types, s) : undefined;
      if (types && types.length === 0) return undefined;
      const { items } = await bus.request(
        contracts.search,
        { query: q.query, site: [s.name], numResults: WHO_SEARCH_SIZE, ...(types ? { types } : {}) },
        opts,
      );
      return {
        name: s.name,
        hits: items.length,
        top_score: items.reduce((m, i) => Math.max(m, i.retrievalScore), 0),
        item_count: s.itemCount,
        types: s.types,
      };
    }),
  );
  return ranked
    .filter((s): s is SiteRank => s !== undefined && s.hits > 0)
    .sort(compareRanks)
    .slice(0, q.maxSites ?? 10);
}

/**
 * 0-100 scores for ranked sites (best first), as NLWeb's who results carry. The first site scores
 * 100; each other site its hits relative to the most hits, weighted by its top retrieval score
 * relative to the best one (3/4 hits, 1/4 top score). Scores never rise down the list, so they
 * agree with the ranking (by hits, then top score).
 */
export function whoScores(ranked: readonly SiteRank[]): number[] {
  const bestHits = Math.max(0, ...ranked.map((s) => s.hits));
  const bestTop = Math.max(0, ...ranked.map((s) => s.top_score));
  let ceiling = 100;
  return ranked.map((s, i) => {
    if (i === 0) return 100;
    const hitPart = bestHits > 0 ? s.hits / bestHits : 0;
    const topPart = bestTop > 0 ? Math.max(0, s.top_score) / bestTop : 1;
    ceiling = Math.min(ceiling, Math.round(100 * hitPart * (0.75 + 0.25 * topPart)));
    return ceiling;
  });
}
