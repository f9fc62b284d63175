import type { z } from 'zod';
import { EnsembleAnswer } from '@askbus/contracts';
import { defineTask, type ItemShown } from '@askbus/llm';
import { summarizeItem } from '@askbus/tools';

/** The ensemble tool's model task: one item per part of the request, that go together. */
export type EnsembleTask = {
  kind: 'ensemble';
  query: string;
  ensemble_type: string;
  groups: { query: string; items: (ItemShown & { url: string })[] }[];
};

export { EnsembleAnswer };

export const ensembleTask = defineTask({ kind: 'ensemble', schema: EnsembleAnswer, local: ensemble });

/** The local answer: the top item of each part, a theme naming them and a tip for the kind of ensemble. */
export function ensemble(task: EnsembleTask): z.input<typeof EnsembleAnswer> {
  const items = task.groups.flatMap((g) => {
    const top = g.items[0];
    if (!top) return [];
    return [
      {
        category: g.query,
        name: top.name,
        url: top.url,
        description: summarizeItem(top),
        why: `the best match for "${g.query}"`,
      },
    ];
  });
  const theme =
    items.length > 0
      ? `${task.ensemble_type.replace(/_/g, ' ')}: ${items.map((i) => i.name).join(' + ')}`
      : `nothing found for ${task.query}`;
  const tips =
    task.ensemble_type === 'movie_night'
      ? ['Start with the lighter film and end with the more intense one.']
      : task.ensemble_type === 'meal_planning'
        ? ['Prepare what keeps well first, and the dish served hot last.']
        : [`Each pick is the top match for its part of "${task.query}".`];
  return { theme, items, overall_tips: tips };
}
