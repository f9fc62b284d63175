import { itemDetailsMessage } from '@askbus/contracts';
import type { MessageBody, RetrievedItem, StoredItem } from '@askbus/contracts';
import { describeItem, extractFacts, factsByPath } from '@askbus/understand';
import type { Bus } from '@askbus/bus';
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

/** Candidates searched for the item's name (NLWeb: 20). */
const NUM_CANDIDATES = 20;
/** NLWeb's thresholds: a match above 75 is sent at once; above 59 is kept as the best found. */
const SEND = 75;
const RECORD = 59;

const SKIP_ROWS = new Set(['url', 'image', 'name', 'description']);

/**
 * The item's facts as text: a sentence about it with the asked facts first (`askedPaths`, from
 * the router's understanding of the question), then every field.
 */
export function detailsText(
  item: StoredItem,
  _requested: string,
  askedPaths: readonly string[] = [],
): string {
  const o = item.schema_object;
  const lines: string[] = [
    describeItem({
      name: item.name,
      facts: factsByPath(extractFacts(o)),
      asked: askedPaths,
      ...(typeof o.description === 'string' ? { description: o.description } : {}),
    }),
  ];
  // the rows asked about come first (the router read which ones from the site's profile):
  // `weight`, or `additionalProperty.battery life` and `offers.price` for one row of a key
  const asked = (r: FieldRow): boolean =>
    askedPaths.some((p) => p === r.key || p.toLowerCase() === `${r.key}.${r.field}`.toLowerCase());
  const rows = fieldRows(o, SKIP_ROWS);
  for (const r of [...rows.filter(asked), ...rows.filter((r) => !asked(r))])
    lines.push(`${r.field}: ${r.text}`);
  return lines.join('\n');
}

/** The details tool: one named item's facts → `item_details`. */
export async function* runDetails(
  req: { ask: { query: string; site: string[] }; params: Record<string, unknown> },
  ctx: Parameters<typeof retrieve>[1],
  deps: ToolDeps,
): AsyncGenerator<MessageBody> {
  const { bus, llm } = deps;
  const fallback = extractParams('details', req.ask.query);
  const name = str(req.params.item_name) || str(fallback.item_name) || req.ask.query;
  const requested = str(req.params.details_requested) || str(fallback.details_requested) || 'everything';
  const askedPaths = Array.isArray(req.params.asked_paths)
    ? req.params.asked_paths.filter((p): p is string => typeof p === 'string')
    : [];
  // the item the router found named in the question, else the one the name index finds
  const url = str(req.params.item_url);
  const direct = url
    ? (await itemsByUrl(deps.bus, ctx, [url]))[0]
    : await itemNamed(deps.bus, ctx, name, req.ask.site);
  if (direct) {
    yield itemDetailsMessage({
      name: direct.name,
      details: detailsText(direct, requested, askedPaths),
      details_requested: requested,
      score: 100,
      explanation: `The question names ${direct.name}.`,
      url: direct.url,
      site: direct.site,
      schema_object: direct.schema_object,
    });
    return;
  }
  if (!name) {
    yield {
      message_type: 'no_results',
      content: `Which item do you want details of? "${req.ask.query}" names none.`,
    };
    return;
  }
  const candidates = await retrieve(bus, ctx, name, req.ask.site, NUM_CANDIDATES);
  const stop = new AbortController();
  const signal = AbortSignal.any([ctx.signal, stop.signal]);
  let best: { item: RetrievedItem; score: number; explanation: string } | undefined;
  // Every candidate is matched at once; the first above SEND wins and the rest are cancelled.
  await new Promise<void>((resolve) => {
    let pending = candidates.length;
    if (pending === 0) resolve();
    for (const item of candidates) {
      ask(
        llm,
        itemMatchTask,
        { kind: 'item_match', name, item },
        `Does this item match the name "${name}"?`,
        signal,
      )
        .then((m) => {
          if (m.score > RECORD && (!best || m.score > best.score))
            best = { item, score: m.score, explanation: m.explanation };
          if (m.score > SEND) {
            stop.abort();
            resolve();
          }
        })
        .catch(() => undefined)
        .finally(() => {
          if (--pending === 0) resolve();
        });
    }
  });
  if (!best) {
    yield itemDetailsMessage({
      name,
      details: `Could not find any items matching "${name}".`,
      score: 0,
      explanation: '',
      url: '',
      site: req.ask.site.join(','),
    });
    return;
  }
  const { item, score, explanation } = best;
  yield itemDetailsMessage({
    name: item.name,
    details: detailsText(item, requested, askedPaths),
    details_requested: requested,
    score,
    explanation,
    url: item.url,
    site: item.site,
    schema_object: item.schema_object,
  });
}

export function startDetailsTool(bus: Bus, opts: { llm?: Llm } = {}): { llm: Llm } {
  const llm = opts.llm ?? llmFromEnv();
  serveTool(bus, 'details', { bus, llm }, runDetails);
  return { llm };
}
