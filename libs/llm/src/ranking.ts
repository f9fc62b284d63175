import { z } from 'zod';
import type { StoredItem } from '@askbus/contracts';
import { parseQuery, scoreItem } from '@askbus/search-core';
import { describeItem, extractFacts, factsByPath } from '@askbus/understand';

/** The answer to a one-item ranking prompt (NLWeb's returnStruc: score 0–100, description). */
export const RankAnswer = z.object({
  score: z.coerce.number().min(0).max(100),
  description: z.string(),
});
export type RankAnswer = z.infer<typeof RankAnswer>;

/** The answer to a batch ranking prompt: one entry per item, keyed by the item's index. */
export const RankBatchAnswer = z.object({
  results: z.array(RankAnswer.extend({ index: z.coerce.number().int().min(0) })),
});
export type RankBatchAnswer = z.infer<typeof RankBatchAnswer>;

/** How an item is shown to a model: its schema.org JSON, with its name and type. */
export function itemForPrompt(item: Pick<StoredItem, 'name' | '@type' | 'schema_object'>): string {
  return JSON.stringify({ '@type': item['@type'], name: item.name, ...item.schema_object });
}

/** Reads back an item shown by `itemForPrompt` (the fake server and tests use it). */
export function itemFromPrompt(json: string): Pick<StoredItem, 'name' | '@type' | 'schema_object'> {
  const obj = JSON.parse(json) as Record<string, unknown>;
  return {
    name: typeof obj.name === 'string' ? obj.name : '',
    '@type': typeof obj['@type'] === 'string' ? obj['@type'] : 'Thing',
    schema_object: obj,
  };
}

/** The deterministic judgement of the local scorer, in the ranking answer's shape. */
export function localRankAnswers(
  query: string,
  items: readonly Pick<StoredItem, 'name' | '@type' | 'schema_object'>[],
): RankAnswer[] {
  const parsed = parseQuery(query);
  return items.map((item) => {
    // the score is the word match; the description is about the item, for people
    const { score } = scoreItem(parsed, item);
    const own = item.schema_object.description;
    const description = describeItem({
      name: item.name,
      facts: factsByPath(extractFacts(item.schema_object)),
      ...(typeof own === 'string' ? { description: own } : {}),
    });
    return { score, description };
  });
}

/**
 * Ranking prompts mark the question and the items so that a test double can read them back:
 * `<question>…</question>` and `<item index="n">{json}</item>`.
 */
export function readRankingPrompt(
  prompt: string,
): { query: string; items: { index: number; json: string }[] } | undefined {
  const q = /<question>([\s\S]*?)<\/question>/.exec(prompt);
  if (!q) return undefined;
  const items: { index: number; json: string }[] = [];
  for (const m of prompt.matchAll(/<item(?:\s+index="(\d+)")?>([\s\S]*?)<\/item>/g)) {
    items.push({ index: Number(m[1] ?? items.length), json: m[2]!.trim() });
  }
  return { query: q[1]!.trim(), items };
}
