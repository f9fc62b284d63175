import { z } from 'zod';
import { defineTask, type ItemShown } from '@askbus/llm';
import { tokenize } from '@askbus/search-core';
import { describeItem, extractFacts, factsByPath } from '@askbus/understand';

/**
 * The tasks several tools share. `item_match`: is this candidate the item a name names? The
 * local answer goes by the words of the two names (glue words left out): the same words score
 * 96, every word of the name in the item's 70 to 90, some words shared less than 60.
 */
export type ItemMatchTask = { kind: 'item_match'; name: string; item: ItemShown };

export const ItemMatchAnswer = z.object({
  score: z.coerce.number().min(0).max(100),
  explanation: z.string().default(''),
});

/** Words that join a name's words without naming anything. */
const GLUE = new Set(['a', 'an', 'the', 'of', 'and', 'with', 'for', 'in', 'to', 'is', 'on', 'by', 'from']);

export function matchItem(name: string, item: ItemShown): z.input<typeof ItemMatchAnswer> {
  const a = tokenize(name).filter((t) => !GLUE.has(t));
  const b = tokenize(item.name).filter((t) => !GLUE.has(t));
  if (a.length === 0 || b.length === 0) return { score: 0, explanation: 'no name to match' };
  if (a.join(' ') === b.join(' ')) return { score: 96, explanation: `"${item.name}" is the item named` };
  const inter = a.filter((t) => b.includes(t)).length;
  if (inter === a.length) {
    return {
      score: 70 + Math.round((20 * a.length) / b.length),
      explanation: `"${item.name}" contains every word of "${name}"`,
    };
  }
  const jaccard = inter / new Set([...a, ...b]).size;
  return {
    score: Math.round(60 * jaccard),
    explanation: `"${item.name}" shares ${inter} of ${a.length} words with "${name}"`,
  };
}

export const itemMatchTask = defineTask({
  kind: 'item_match',
  schema: ItemMatchAnswer,
  local: (task: ItemMatchTask) => matchItem(task.name, task.item),
});

/** A short phrase about an item: its name, year and first sentence of description or facts. */
export function summarizeItem(item: ItemShown): string {
  const own = item.schema_object.description;
  return describeItem({
    name: item.name,
    facts: factsByPath(extractFacts(item.schema_object)),
    ...(typeof own === 'string' ? { description: own } : {}),
  });
}
