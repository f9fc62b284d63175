/**
 * `who`: which loaded sites can answer a question, and how well: the one ranking of the who
 * tool (services/tool-who, for the router) and of the gateway's /who and MCP `who`, so that
 * they agree. A site's score is its best item's score for the question's subject on the local
 * scorer's 0–100 scale (scoreItem: how much of the question the item matches), so a score
 * means the same whatever the other sites are, and a question no item matches (gibberish)
 * gets no site.
 */
import type { ItemLike } from './fields';
import { parseQuery } from './query';
import { scoreItem } from './score';

/** Items retrieved per site to judge it. */
export const WHO_SEARCH_SIZE = 20;

/** A site is named only when an item of it scores above 59 (NLWeb's who sends above 59). */
export const WHO_MIN_SCORE = 60;

/** What one site is judged on: its description and the items the retriever found for the subject. */
export interface SiteEvidence {
  name: string;
  itemCount: number;
  types: string[];
  items: readonly (ItemLike & { url: string })[];
}

/** One site that can answer. */
export interface SiteRank {
  name: string;
  /** 0–100: how well the site's best item matches the question's subject. */
  score: number;
  /** The site's retrieved items that scored at least WHO_MIN_SCORE (at most WHO_SEARCH_SIZE). */
  matches: number;
  /** The items the retriever returned for the site. */
  hits: number;
  item_count: number;
  types: string[];
  /** The best-matching item. */
  best: { name: string; url: string; score: number };
}

/**
 * The subject of a "which site can …" question: what the sites are judged on. "which site can
 * tell me about fuel efficient cars" → "fuel efficient cars"; any other question is its own subject.
 */
export function whoSubject(query: string): string {
  const q = query
    .trim()
    .replace(/[?!.]+$/, '')
    .replace(
      /^(?:(?:which|what) (?:web)?sites?|who|where)\s+(?:(?:can|could|would|will|should|do|does)\s+)?(?:i\s+)?(?:tell me|help me( with)?|answer questions|know|has|have|find|look for|learn|get)?\s*(?:(?:information|info|anything|something|questions)\s+)?(?:about|on|with|for|of)?\s*/i,
      '',
    )
    .trim();
  return q || query.trim();
}

/** Best first: a higher score, then more matching items, then by name. */
export function compareSiteRanks(a: SiteRank, b: SiteRank): number {
  return b.score - a.score || b.matches - a.matches || a.name.localeCompare(b.name);
}

/**
 * Ranks sites for a question from what the retriever found on each: every item is scored for
 * the question's subject, a site scores its best item's score, and only sites scoring at least
 * `minScore` (default WHO_MIN_SCORE) are kept, best first, at most `maxSites` (default 10).
 */
export function rankWhoSites(
  query: string,
  evidence: readonly SiteEvidence[],
  opts: { maxSites?: number; minScore?: number } = {},
): SiteRank[] {
  const minScore = opts.minScore ?? WHO_MIN_SCORE;
  const parsed = parseQuery(whoSubject(query));
  const ranked: SiteRank[] = [];
  for (const site of evidence) {
    let best: SiteRank['best'] | undefined;
    let matches = 0;
    for (const item of site.items) {
      const { score } = scoreItem(parsed, item);
      if (score >= minScore) matches++;
      if (!best || score > best.score) {
        const name =
          item.name ?? (typeof item.schema_object.name === 'string' ? item.schema_object.name : '');
        best = { name, url: item.url, score };
      }
    }
    if (!best || best.score < minScore) continue;
    ranked.push({
      name: site.name,
      score: best.score,
      matches,
      hits: site.items.length,
      item_count: site.itemCount,
      types: site.types,
      best,
    });
  }
  return ranked.sort(compareSiteRanks).slice(0, opts.maxSites ?? 10);
}
