import type { ScoredItem, StoredItem } from '@askbus/contracts';
import { parseQuery, scoreItem } from '@askbus/search-core';

/**
 * Scores a batch with search-core's local scorer and returns it best first. Ties keep the
 * input order (the retriever's), so the same batch always comes back the same way.
 */
export function rankItems(query: string, items: readonly StoredItem[]): ScoredItem[] {
  const parsed = parseQuery(query); // once per batch, not once per item
  return items
    .map((item, index) => ({ index, scored: { url: item.url, ...scoreItem(parsed, item) } }))
    .sort((a, b) => b.scored.score - a.scored.score || a.index - b.index)
    .map((x) => x.scored);
}
