import { toStoredItem, toResultItem } from '@askbus/contracts';
import type { MessageBody } from '@askbus/contracts';
import type { Bus, HandlerContext } from '@askbus/bus';
import { extractParams, llmFromEnv, type Llm } from '@askbus/llm';
import { ask, itemMatchTask, rank, retrieve, serveTool, str, type ToolDeps } from '@askbus/tools';
import { substitutionsTask } from './task';

export * from './task';

type Req = {
  ask: { query: string; site: string[]; maxResults?: number; minScore?: number };
  params: Record<string, unknown>;
};
const escape = (s: string): string => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** recipe_substitutions: the recipe (up to 3 searched), then one model call → `substitution_suggestions`. */
export async function* runSubstitutions(
  req: Req,
  ctx: HandlerContext,
  deps: ToolDeps,
): AsyncGenerator<MessageBody> {
  const fallback = extractParams('recipe_substitutions', req.ask.query);
  const recipeName = str(req.params.recipe_name) || str(fallback.recipe_name) || req.ask.query;
  const need = str(req.params.dietary_need) || str(fallback.dietary_need);
  const ingredient = str(req.params.unavailable_ingredient) || str(fallback.unavailable_ingredient);
  const found = (await retrieve(deps.bus, ctx, recipeName, req.ask.site, 3)).filter(
    (i) => i['@type'] === 'Recipe',
  );
  const matched = await Promise.all(
    found.map(async (item) => ({
      item,
      score: (
        await ask(
          deps.llm,
          itemMatchTask,
          { kind: 'item_match', name: recipeName, item },
          `Is this "${recipeName}"?`,
          ctx.signal,
        )
      ).score,
    })),
  );
  const recipe = matched.sort((a, b) => b.score - a.score)[0]?.item;
  if (!recipe) {
    yield { message_type: 'no_results', content: `Could not find a recipe for "${recipeName}".` };
    return;
  }
  const answer = await ask(
    deps.llm,
    substitutionsTask,
    {
      kind: 'substitutions',
      query: req.ask.query,
      recipe,
      dietary_need: need,
      unavailable_ingredient: ingredient,
    },
    `Suggest ingredient substitutions for this recipe${need ? ` to make it ${need}` : ''}${ingredient ? ` without ${ingredient}` : ''}.`,
    ctx.signal,
  );
  const html = answer.substitutions.length
    ? `<h2>Substitutions for ${escape(recipe.name)}</h2><ul>${answer.substitutions
        .map(
          (s) =>
            `<li><b>${escape(s.original_ingredient)}</b> → ${escape(s.substitute)} (${escape(s.ratio)})${s.notes ? `: ${escape(s.notes)}` : ''}</li>`,
        )
        .join('')}</ul>`
    : `<p>${escape(recipe.name)} already meets your requirements; no substitution is needed.</p>`;
  yield {
    message_type: 'substitution_suggestions',
    content: html,
    substitution_data: { ...answer, dietary_need: need, unavailable_ingredient: ingredient },
    reference_recipes: [
      { name: recipe.name, url: recipe.url, site: recipe.site, schema_object: recipe.schema_object },
    ],
  };
}

/** accompaniment: "X that would go well with Y", retrieved and ranked → `result`. */
export async function* runAccompaniment(
  req: Req,
  ctx: HandlerContext,
  deps: ToolDeps,
): AsyncGenerator<MessageBody> {
  const fallback = extractParams('accompaniment', req.ask.query);
  const wanted = str(req.params.search_query) || str(fallback.search_query) || req.ask.query;
  const main = str(req.params.main_item) || str(fallback.main_item);
  const query = main ? `${wanted} that would go well with ${main}` : wanted;
  yield { message_type: 'intermediate_message', content: `Looking for ${query}` };
  const items = (await retrieve(deps.bus, ctx, query, req.ask.site, 50)).filter(
    (i) => !main || !i.name.toLowerCase().includes(main.toLowerCase()),
  );
  const scored = await rank(deps.bus, ctx, wanted, items.map(toStoredItem));
  const byUrl = new Map(items.map((i) => [i.url, i]));
  const min = req.ask.minScore ?? 51;
  const results = scored
    .filter((s) => s.score > min && byUrl.has(s.url))
    .sort((a, b) => b.score - a.score)
    .slice(0, req.ask.maxResults ?? 10)
    .map((s) => toResultItem(byUrl.get(s.url)!, s.score, s.description));
  if (results.length === 0)
    yield { message_type: 'no_results', content: `Nothing found that goes well with ${main || 'that'}.` };
  else yield { message_type: 'result', content: results };
}

/** The recipe tool service serves both recipe handlers. */
export function startRecipeTool(bus: Bus, opts: { llm?: Llm } = {}): { llm: Llm } {
  const llm = opts.llm ?? llmFromEnv();
  serveTool(bus, 'recipe_substitutions', { bus, llm }, runSubstitutions);
  serveTool(bus, 'accompaniment', { bus, llm }, runAccompaniment);
  return { llm };
}
