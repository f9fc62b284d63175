import type { ScoredItem, StoredItem, Understanding } from '@askbus/contracts';
import { parseQuery, scoreItem } from '@askbus/search-core';
import {
  describeItem,
  extractFacts,
  factsByPath,
  prepareQuestion,
  scoreUnderstood,
} from '@askbus/understand';

/**
 * Scores a batch with the local scorer and returns it best first. With an understanding the
 * score says how well each item satisfies the question's constraints, orders and free words
 * (understand's scoreUnderstood); without one it is search-core's word match. Either way the
 * description is about the item, for people, and the match diagnostics go to `debug`. Ties
 * keep the input order (the retriever's), so the same batch always comes back the same way.
 */
export function rankItems(
  query: string,
  items: readonly StoredItem[],
  understanding?: Understanding,
): ScoredItem[] {
  const score = understanding ? understood(understanding) : plain(query);
  return items
    .map((item, index) => ({ index, scored: { url: item.url, ...score(item) } }))
    .sort((a, b) => b.scored.score - a.scored.score || a.index - b.index)
    .map((x) => x.scored);
}

type Scorer = (item: StoredItem) => { score: number; description: string; debug: string };

function understood(u: Understanding): Scorer {
  const q = prepareQuestion(u); // once per batch, not once per item
  return (item) => scoreUnderstood(q, item);
}

function plain(query: string): Scorer {
  const parsed = parseQuery(query);
  return (item) => {
    const { score, description: debug } = scoreItem(parsed, item);
    const own = item.schema_object.description;
    const description = describeItem({
      name: item.name,
      facts: factsByPath(extractFacts(item.schema_object)),
      ...(typeof own === 'string' ? { description: own } : {}),
    });
    return { score, description, debug };
  };
}
