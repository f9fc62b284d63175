import { itemDetailsMessage } from '@askbus/contracts';
import type { MessageBody, RetrievedItem, StoredItem } from '@askbus/contracts';
import { describeItem, extractFacts, factsByPath, schemaMemberName, unitOf } from '@askbus/understand';
import type { Bus } from '@askbus/bus';
import { extractParams, llmFromEnv, type Llm } from '@askbus/llm';
import {
  ask,
  itemMatchTask,
  itemNamed,
  itemsByUrl,
  retrieve,
  serveTool,
  str,
  type ToolDeps,
} from '@askbus/tools';

/** Candidates searched for the item's name (NLWeb: 20). */
const NUM_CANDIDATES = 20;
/** NLWeb's thresholds: a match above 75 is sent at once; above 59 is kept as the best found. */
const SEND = 75;
const RECORD = 59;

const SKIP = new Set(['@context', '@type', 'url', 'image', 'name']);

/** A value of a schema.org field as text. */
export function fieldText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (Array.isArray(v)) return v.map(fieldText).filter(Boolean).join(', ');
  if (typeof v === 'string') {
    // a schema.org enumeration member written as its URL: its name ("In Stock")
    return schemaMemberName(v) ?? v;
  }
  if (typeof v !== 'object') return String(v);
  const o = v as Record<string, unknown>;
  // schema.org's rating scale is 1-5 unless the rating says otherwise
  if ('ratingValue' in o)
    return `${String(o.ratingValue)}/${String(o.bestRating ?? 5)}${o.ratingCount ? ` (${String(o.ratingCount)} votes)` : ''}`;
  // a MonetaryAmount: its number in its currency, per the period its QuantitativeValue names
  if (typeof o.currency === 'string' && o.value !== null && typeof o.value === 'object') {
    const q = o.value as Record<string, unknown>;
    const per = typeof q.unitText === 'string' ? ` per ${q.unitText.toLowerCase()}` : '';
    return `${fieldText(q.value ?? q.minValue)} ${o.currency}${per}`;
  }
  if ('value' in o) {
    // a unit as people write it: "kg" for the UN/CEFACT code "KGM"
    const code = typeof o.unitCode === 'string' ? o.unitCode : undefined;
    const unit = typeof o.unitText === 'string' ? o.unitText : (unitOf(code)?.spellings[0] ?? code);
    return `${o.name ? `${String(o.name)}: ` : ''}${fieldText(o.value)}${unit ? ` ${unit}` : ''}`;
  }
  if (typeof o.name === 'string') return o.name;
  return Object.entries(o)
    .filter(([k]) => !k.startsWith('@'))
    .map(([k, x]) => `${k} ${fieldText(x)}`)
    .join(', ');
}

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
  // the fields asked about come first (the router read which ones from the site's profile)
  const wanted = askedPaths.map((p) => p.split('.')[0]!).filter((k, i, a) => a.indexOf(k) === i);
  const lines: string[] = [
    describeItem({
      name: item.name,
      facts: factsByPath(extractFacts(o)),
      asked: askedPaths,
      ...(typeof o.description === 'string' ? { description: o.description } : {}),
    }),
  ];
  for (const k of wanted) if (o[k] !== undefined) lines.push(`${k}: ${fieldText(o[k])}`);
  for (const [k, v] of Object.entries(o)) {
    if (SKIP.has(k) || k === 'description' || wanted.includes(k)) continue;
    const t = fieldText(v);
    if (t) lines.push(`${k}: ${t}`);
  }
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
