import type { ScoredItem, StoredItem, Understanding } from '@askbus/contracts';
import { analyzeItem, parseQuery, scoreItem, type AnalyzedItem } from '@askbus/search-core';
import {
  describeItem,
  extractFacts,
  factsByPath,
  prepareQuestion,
  scoreUnderstood,
  type ItemAnalysis,
} from '@askbus/understand';

/** What the ranker scores of an item (a StoredItem, or a RankItem read back). */
export type RankView = Pick<StoredItem, 'url' | 'name' | '@type' | 'schema_object'>;

/**
 * An item with what scoring reads of it, computed on first use and then kept: its facts and
 * its words (whatever the question), and the description the plain scorer gives it (the same
 * for every question). A ranker keeps these between requests (AnalysisCache).
 */
export interface AnalysedItem extends ItemAnalysis {
  readonly item: RankView;
  /** The plain scorer's description (no understanding): about the item, not the question. */
  readonly plainDescription: string;
}

/** The item's analysis, each part computed when first read. */
export function analyseItem(item: RankView): AnalysedItem {
  let facts: ItemAnalysis['facts'] | undefined;
  let words: AnalyzedItem | undefined;
  let plain: string | undefined;
  const analysed: AnalysedItem = {
    item,
    get facts() {
      return (facts ??= factsByPath(extractFacts(item.schema_object)));
    },
    get words() {
      return (words ??= analyzeItem(item));
    },
    get plainDescription() {
      if (plain === undefined) {
        const own = item.schema_object.description;
        plain = describeItem({
          name: item.name,
          facts: analysed.facts,
          ...(typeof own === 'string' ? { description: own } : {}),
        });
      }
      return plain;
    },
  };
  return analysed;
}

/**
 * Scores a batch with the local scorer and returns it best first. With an understanding the
 * score says how well each item satisfies the question's constraints, orders and free words
 * (understand's scoreUnderstood); without one it is search-core's word match. Either way the
 * description is about the item, for people, and the match diagnostics go to `debug`. Ties
 * keep the input order (the retriever's), so the same batch always comes back the same way.
 */
export function rankItems(
  query: string,
  items: readonly RankView[],
  understanding?: Understanding,
): ScoredItem[] {
  return rankAnalysed(query, items.map(analyseItem), understanding);
}

/** rankItems over items analysed already (a ranker's cache): the same scores, the same order. */
export function rankAnalysed(
  query: string,
  items: readonly AnalysedItem[],
  understanding?: Understanding,
): ScoredItem[] {
  const score = understanding ? understood(understanding) : plain(query);
  return items
    .map((a, index) => ({ index, scored: { url: a.item.url, ...score(a) } }))
    .sort((a, b) => b.scored.score - a.scored.score || a.index - b.index)
    .map((x) => x.scored);
}

type Scorer = (a: AnalysedItem) => { score: number; description: string; debug: string };

function understood(u: Understanding): Scorer {
  const q = prepareQuestion(u); // once per batch, not once per item
  return (a) => scoreUnderstood(q, a.item, a);
}

function plain(query: string): Scorer {
  const parsed = parseQuery(query);
  return (a) => {
    const { score, description: debug } = scoreItem(parsed, a.words);
    return { score, description: a.plainDescription, debug };
  };
}
