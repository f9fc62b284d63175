import { compareItemsMessage } from '@askbus/contracts';
import type { CompareSide, MessageBody, StoredItem } from '@askbus/contracts';
import type { Bus, HandlerContext } from '@askbus/bus';
import { extractParams, llmFromEnv, type Llm } from '@askbus/llm';
import {
  ask,
  fieldRows,
  itemMatchTask,
  itemNamed,
  itemsByUrl,
  retrieve,
  serveTool,
  str,
  type FieldRow,
  type ToolDeps,
} from '@askbus/tools';
import { z } from 'zod';
import { compareTask, Preference } from './task';

/** The router's `prefer` parameter, checked: preferences that do not parse are left out. */
function preferOf(raw: unknown): { prefer?: Preference[] } {
  const parsed = z.array(Preference).max(8).safeParse(raw);
  return parsed.success && parsed.data.length ? { prefer: parsed.data } : {};
}

export * from './task';

/** Candidates per name (NLWeb: 20) and the match threshold (FindItemPrompt: > 75). */
const NUM_CANDIDATES = 20;
const MATCH = 75;
const SKIP = new Set(['url', 'image', 'name', 'description']);

/** The best match for a name among its candidates, or undefined when none scores above MATCH. */
async function findItem(
  deps: ToolDeps,
  ctx: HandlerContext,
  name: string,
  site: string[],
  url?: string,
): Promise<{ item: StoredItem; score: number } | undefined> {
  // the item the router found named in the question, else the one the name index finds
  const direct = url
    ? (await itemsByUrl(deps.bus, ctx, [url]))[0]
    : await itemNamed(deps.bus, ctx, name, site);
  if (direct) return { item: direct, score: 100 };
  const candidates = await retrieve(deps.bus, ctx, name, site, NUM_CANDIDATES);
  const scored = await Promise.all(
    candidates.map(async (item) => {
      try {
        const m = await ask(
          deps.llm,
          itemMatchTask,
          { kind: 'item_match', name, item },
          `Is this "${name}"?`,
          ctx.signal,
        );
        return { item, score: m.score };
      } catch {
        return { item, score: 0 };
      }
    }),
  );
  const best = scored.sort((a, b) => b.score - a.score || b.item.retrievalScore - a.item.retrievalScore)[0];
  return best && best.score > MATCH ? best : undefined;
}

/**
 * Both items' properties side by side: one row per property either item has, in words, the
 * named values (`additionalProperty`) and an offer's price lined up by what they are.
 */
export function comparisonTable(
  a: StoredItem,
  b: StoredItem,
): { field: string; item1: string; item2: string }[] {
  const rowsA = fieldRows(a.schema_object, SKIP);
  const rowsB = fieldRows(b.schema_object, SKIP);
  const id = (r: FieldRow): string => `${r.key}\u0000${r.field.toLowerCase()}`;
  const ids = [...new Set([...rowsA, ...rowsB].map(id))];
  const textOf = (rows: FieldRow[], key: string): string =>
    rows
      .filter((r) => id(r) === key)
      .map((r) => r.text)
      .join(', ');
  return ids.map((key) => ({
    field: [...rowsA, ...rowsB].find((r) => id(r) === key)!.field,
    item1: textOf(rowsA, key),
    item2: textOf(rowsB, key),
  }));
}

/** The compare tool: two named items → `compare_items` with a table and a verdict. */
export async function* runCompare(
  req: { ask: { query: string; site: string[] }; params: Record<string, unknown> },
  ctx: HandlerContext,
  deps: ToolDeps,
): AsyncGenerator<MessageBody> {
  const fallback = extractParams('compare', req.ask.query);
  const name1 = str(req.params.item1_name) || str(req.params.item1) || str(fallback.item1_name);
  const name2 = str(req.params.item2_name) || str(req.params.item2) || str(fallback.item2_name);
  const requested = str(req.params.details_requested) || 'everything';
  if (!name1 || !name2) {
    yield {
      message_type: 'no_results',
      content: `Which two items do you want compared? "${req.ask.query}" does not name two.`,
    };
    return;
  }
  yield { message_type: 'intermediate_message', content: `Looking for ${name1} and ${name2}` };
  const [a, b] = await Promise.all([
    findItem(deps, ctx, name1, req.ask.site, str(req.params.item1_url) || undefined),
    findItem(deps, ctx, name2, req.ask.site, str(req.params.item2_url) || undefined),
  ]);
  if (!a || !b) {
    const missing = [!a ? name1 : undefined, !b ? name2 : undefined].filter(Boolean).join(' and ');
    yield { message_type: 'no_results', content: `Could not find ${missing} to compare.` };
    return;
  }
  const answer = await ask(
    deps.llm,
    compareTask,
    {
      kind: 'compare',
      query: req.ask.query,
      details_requested: requested,
      item1: a.item,
      item2: b.item,
      ...(Array.isArray(req.params.asked_paths)
        ? { aspects: req.params.asked_paths.filter((p): p is string => typeof p === 'string') }
        : {}),
      ...preferOf(req.params.prefer),
    },
    `Compare these two items for the user's question "${req.ask.query}" and give a verdict.`,
    ctx.signal,
  );
  const side = (x: StoredItem): CompareSide => ({
    name: x.name,
    url: x.url,
    site: x.site,
    schema_object: x.schema_object,
  });
  yield compareItemsMessage({
    comparison: answer.comparison,
    verdict: answer.verdict,
    details_requested: requested,
    table: comparisonTable(a.item, b.item),
    item1: side(a.item),
    item2: side(b.item),
  });
}

export function startCompareTool(bus: Bus, opts: { llm?: Llm } = {}): { llm: Llm } {
  const llm = opts.llm ?? llmFromEnv();
  serveTool(bus, 'compare', { bus, llm }, runCompare);
  return { llm };
}
