import { z } from 'zod';
import type { Constraint, NamedItem, NameMatch, Order, Understanding } from '@askbus/contracts';
import type { Llm } from '@askbus/llm';
import {
  formatRangeText,
  nameKey,
  toCanonical,
  unitOf,
  type PropertyModel,
  type SiteModel,
} from '@askbus/understand';

/**
 * A language model's reading of a question into the same structure the local parser gives:
 * one JSON-schema call with the site's profile in the prompt, its answer checked against that
 * profile (properties that exist, values the site has, numbers in the property's unit, names
 * the site's items carry). What does not check out is dropped; a call that fails or answers
 * nothing usable leaves the local parse, which is always computed first.
 */
export const LlmReading = z.object({
  intent: z.enum(['search', 'details', 'compare']).catch('search'),
  free_text: z.string().max(1_000).catch(''),
  item_names: z.array(z.string().max(300)).max(5).catch([]),
  asked_properties: z.array(z.string().max(300)).max(10).catch([]),
  ranges: z
    .array(
      z.object({
        property: z.string().max(300),
        min: z.number().nullable().catch(null),
        max: z.number().nullable().catch(null),
        unit: z.string().max(40).nullable().catch(null),
      }),
    )
    .max(10)
    .catch([]),
  values: z
    .array(
      z.object({
        property: z.string().max(300),
        values: z.array(z.string().max(300)).max(20),
        negated: z.boolean().catch(false),
      }),
    )
    .max(10)
    .catch([]),
  order: z
    .array(
      z.object({
        property: z.string().max(300),
        direction: z.enum(['asc', 'desc']),
        superlative: z.boolean().catch(false),
      }),
    )
    .max(5)
    .catch([]),
});
export type LlmReading = z.infer<typeof LlmReading>;

/** The profile as the model reads it: one line per property, the most common first. */
export function profilePrompt(model: SiteModel, maxProperties = 40): string {
  const lines = model.properties
    .filter((p) => p.kind !== 'text' && p.kind !== 'name')
    .sort((a, b) => b.count - a.count)
    .slice(0, maxProperties)
    .map((p) => {
      const unit = p.displayUnit ?? p.unit;
      if (p.kind === 'number')
        return `- ${p.path} (${p.label}): number${unit ? ` in ${unit}` : ''}, ${fmt(p, p.min)} to ${fmt(p, p.max)}`;
      if (p.kind === 'date')
        return `- ${p.path} (${p.label}): date, years ${Math.floor(p.min ?? 0)} to ${Math.floor(p.max ?? 0)}`;
      const values = (p.values ?? []).slice(0, 25).map((v) => v.value);
      return `- ${p.path} (${p.label}): one of ${values.join(' | ')}${(p.distinct ?? 0) > values.length ? ' | …' : ''}`;
    });
  const types = model.types.map((t) => t.type).join(', ');
  return `The site holds ${model.itemCount} items of type ${types}. Their properties:\n${lines.join('\n')}`;
}

function fmt(p: PropertyModel, v: number | undefined): string {
  if (v === undefined) return '?';
  const display = p.displayUnit ? unitOf(p.displayUnit) : undefined;
  const shown =
    display && display.canonical === p.unit && display.inverse === undefined ? v / display.factor : v;
  return String(Math.round(shown * 100) / 100);
}

export function readingPrompt(query: string, model: SiteModel): string {
  return [
    "Read the user's question against this site and answer with JSON only.",
    profilePrompt(model),
    'Fields: intent ("search" for a list, "details" for facts about one named item, "compare" for two named items);',
    'item_names (items the question names, as written); asked_properties (property paths the question asks about);',
    'ranges (property path, min and/or max in the unit listed for it, dates as years); values (property path and the values it must have, spelled as listed);',
    'order (property path, "desc" for most/highest/heaviest, "asc" for least/lowest/cheapest; superlative true for "the most …");',
    'free_text (the words no property covers). Use only the property paths listed.',
    `Question: ${query}`,
  ].join('\n');
}

/**
 * The model's reading checked against the site: what names no property, no value of it, or no
 * item is dropped. `names` are the retriever's name matches for the question.
 */
export function checkReading(
  reading: LlmReading,
  query: string,
  model: SiteModel,
  names: readonly NameMatch[],
  local: Understanding,
): Understanding | undefined {
  const constraints: Constraint[] = [];
  for (const r of reading.ranges) {
    const p = model.byPath.get(r.property);
    if (!p || (p.kind !== 'number' && p.kind !== 'date') || (r.min === null && r.max === null)) continue;
    const unit = r.unit ? unitOf(r.unit) : p.displayUnit ? unitOf(p.displayUnit) : undefined;
    const conv = (v: number | null): number | undefined =>
      v === null
        ? undefined
        : p.kind === 'number' && unit && unit.dimension === p.dimension
          ? toCanonical(v, unit)
          : v;
    const min = conv(r.min);
    const max = p.kind === 'date' && r.max !== null ? r.max + 1 : conv(r.max);
    constraints.push({
      kind: 'range',
      target: { path: p.path },
      ...(min !== undefined ? { min } : {}),
      ...(max !== undefined ? { max } : {}),
      minInclusive: true,
      maxInclusive: p.kind !== 'date',
      phrase: p.label,
      text:
        p.kind === 'date'
          ? `from ${r.min ?? '…'}–${r.max ?? '…'}`
          : formatRangeText(p.label, p, min, max, true, true),
      confidence: 0.8,
    });
  }
  for (const v of reading.values) {
    const p = model.byPath.get(v.property);
    if (!p || p.kind !== 'enum') continue;
    const known = new Map((p.values ?? []).map((x) => [nameKey(x.value), x.value]));
    const exact = v.values.map((x) => known.get(nameKey(x))).filter((x): x is string => x !== undefined);
    // a value the site does not have is kept only when some values contain its words
    const contained = v.values
      .filter((x) => !known.has(nameKey(x)))
      .map((x) => nameKey(x).split(' '))
      .filter((w) => w.join('') !== '' && (model.valueWords.get(w.at(-1)!)?.get(p) ?? 0) > 0);
    if (exact.length === 0 && contained.length === 0) continue;
    constraints.push({
      kind: 'value',
      path: p.path,
      values: exact.map((x) => x.toLowerCase()),
      contains: contained,
      negated: v.negated,
      phrase: v.values.join(', '),
      text: `${v.negated ? 'not ' : ''}${p.label} ${[...exact, ...contained.map((w) => w.join(' '))].join(' or ')}`,
      confidence: 0.8,
    });
  }
  const orders: Order[] = [];
  for (const o of reading.order) {
    const p = model.byPath.get(o.property);
    if (!p || (p.kind !== 'number' && p.kind !== 'date')) continue;
    orders.push({
      target: { path: p.path },
      direction: o.direction,
      strength: o.superlative ? 'sort' : 'prefer',
      phrase: p.label,
      text: `${o.direction === 'desc' ? 'highest' : 'lowest'} ${p.label}`,
      ...(p.quantiles ? { quantiles: p.quantiles } : {}),
    });
  }
  const named: NamedItem[] = [];
  for (const n of reading.item_names) {
    const key = nameKey(n);
    const match =
      names.find((m) => m.items.some((i) => nameKey(i.name) === key)) ??
      names.find((m) => nameKey(query.slice(m.start, m.end)) === key);
    const item = match?.items.find((i) => nameKey(i.name) === key) ?? match?.items[0];
    if (item && !named.some((x) => x.url === item.url))
      named.push({
        phrase: n,
        url: item.url,
        name: item.name,
        site: item.site,
        type: item.type,
        exact: true,
      });
  }
  // a details or compare reading needs its items; otherwise it is a search
  const intent =
    reading.intent === 'details' && named.length >= 1
      ? 'details'
      : reading.intent === 'compare' && named.length >= 2
        ? 'compare'
        : 'search';
  const asked = [
    ...new Set([
      ...reading.asked_properties.filter((p) => model.byPath.has(p)),
      ...constraints
        .map((k) =>
          k.kind === 'range' && 'path' in k.target ? k.target.path : k.kind === 'value' ? k.path : '',
        )
        .filter(Boolean),
      ...orders.map((o) => ('path' in o.target ? o.target.path : '')),
    ]),
  ];
  if (
    intent === 'search' &&
    constraints.length === 0 &&
    orders.length === 0 &&
    named.length === 0 &&
    !reading.free_text.trim()
  )
    return undefined;
  return {
    text: query,
    freeText: reading.free_text,
    types: local.types,
    constraints,
    orders,
    named: intent === 'search' ? named.slice(0, 5) : named.slice(0, intent === 'details' ? 1 : 2),
    intent,
    asked,
    noun: local.noun,
    source: 'llm',
  };
}

/** Asks the model, checks its answer; undefined when the call fails or nothing checks out. */
export async function llmReading(
  llm: Llm,
  query: string,
  model: SiteModel,
  names: readonly NameMatch[],
  local: Understanding,
  signal: AbortSignal,
): Promise<Understanding | undefined> {
  try {
    const answer = (await llm.complete({
      messages: [{ role: 'user', content: readingPrompt(query, model) }],
      tier: 'high',
      jsonSchema: LlmReading,
      schemaName: 'question_reading',
      signal,
    })) as LlmReading;
    return checkReading(answer, query, model, names, local);
  } catch {
    return undefined;
  }
}
