/**
 * Tool answers NLWeb's own chat pages have no renderer for (compare, recipe substitutions, and
 * on the May 2025 page ensembles), as what every page does render: an answer text and a list
 * of items (NLWeb's `nlws`). The tool messages' payloads are parsed here, not trusted.
 */
import { z } from 'zod';
import type { Message, ResultItem } from '@askbus/contracts';

const SchemaObject = z.record(z.string(), z.unknown());

const Side = z.object({
  name: z.string().catch(''),
  url: z.string().catch(''),
  site: z.string().catch(''),
  description: z.string().catch(''),
  schema_object: SchemaObject.catch({}),
});
type Side = z.infer<typeof Side>;

const CompareItems = z.object({
  comparison: z.string().catch(''),
  verdict: z.string().catch(''),
  item1: Side,
  item2: Side,
});

const Substitutions = z.object({
  content: z.string().catch(''),
  substitution_data: z
    .object({
      substitutions: z
        .array(
          z.object({
            original_ingredient: z.string().catch(''),
            substitute: z.string().catch(''),
            ratio: z.string().catch(''),
            notes: z.string().catch(''),
          }),
        )
        .catch([]),
    })
    .optional()
    .catch(undefined),
  reference_recipes: z.array(Side).catch([]),
});

const EnsembleItem = z.looseObject({
  name: z.string().catch(''),
  url: z.string().catch(''),
  description: z.string().catch(''),
  category: z.string().optional().catch(undefined),
  why: z.string().optional().catch(undefined),
  why_recommended: z.string().optional().catch(undefined),
});

export const EnsembleResult = z.object({
  result: z.object({
    recommendations: z.object({
      theme: z.string().catch(''),
      items: z.array(EnsembleItem).catch([]),
      overall_tips: z.array(z.string()).catch([]),
    }),
  }),
});

/** An answer text and its items: what NLWeb's `nlws` message carries. */
export interface TextAnswer {
  answer: string;
  items: ResultItem[];
}

const asItem = (s: Side): ResultItem => ({
  '@type': 'Item',
  url: s.url,
  name: s.name,
  site: s.site,
  siteUrl: s.site,
  score: 0,
  description: s.description,
  schema_object: s.schema_object,
});

/** The text of the tool's HTML (its values are escaped by the tool), for pages that show text. */
function htmlToText(html: string): string {
  return html
    .replace(/<\/(h\d|p|li)>/g, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)))
    .replace(/&(lt|gt|quot|amp);/g, (_, e: string) => ({ lt: '<', gt: '>', quot: '"', amp: '&' })[e] ?? '')
    .replace(/\n{2,}/g, '\n')
    .trim();
}

/** compare_items as text and the two items. */
function compareAnswer(m: unknown): TextAnswer | undefined {
  const c = CompareItems.safeParse(m);
  if (!c.success) return undefined;
  const answer = [c.data.comparison, c.data.verdict].filter(Boolean).join('\n\n');
  return { answer, items: [asItem(c.data.item1), asItem(c.data.item2)] };
}

/** substitution_suggestions as text (one line a substitution) and the recipes it used. */
function substitutionAnswer(m: unknown): TextAnswer | undefined {
  const s = Substitutions.safeParse(m);
  if (!s.success) return undefined;
  const lines = (s.data.substitution_data?.substitutions ?? []).map(
    (x) =>
      `${x.original_ingredient} → ${x.substitute}${x.ratio ? ` (${x.ratio})` : ''}${x.notes ? `: ${x.notes}` : ''}`,
  );
  const answer = lines.length > 0 ? lines.join('\n') : htmlToText(s.data.content);
  return { answer, items: s.data.reference_recipes.map(asItem) };
}

/** ensemble_result as its theme and tips, and the recommended items. */
function ensembleAnswer(m: unknown): TextAnswer | undefined {
  const e = EnsembleResult.safeParse(m);
  if (!e.success) return undefined;
  const r = e.data.result.recommendations;
  const answer = [r.theme, ...r.overall_tips].filter(Boolean).join('\n');
  const items = r.items.map((i) =>
    asItem({
      name: i.name,
      url: i.url,
      site: '',
      description: [i.category, i.description, i.why ?? i.why_recommended].filter(Boolean).join(' — '),
      schema_object: {},
    }),
  );
  return { answer, items };
}

/** The answer text and items of a tool message no page renders itself; undefined for others. */
export function toolTextAnswer(m: Message, ensembles: boolean): TextAnswer | undefined {
  switch (m.message_type) {
    case 'compare_items':
      return compareAnswer(m);
    case 'substitution_suggestions':
      return substitutionAnswer(m);
    case 'ensemble_result':
      return ensembles ? ensembleAnswer(m) : undefined;
    default:
      return undefined;
  }
}

/**
 * ensemble_result for the pages that render it (Aug 2025, Nov 2025): as the tool sent it, with
 * each item's `why` also under the name those pages read (`why_recommended`).
 */
export function pageEnsemble(m: Message): Record<string, unknown> | undefined {
  const e = EnsembleResult.safeParse(m);
  if (!e.success) return undefined;
  const r = e.data.result.recommendations;
  const items = r.items.map((i) => ({ ...i, why_recommended: i.why_recommended ?? i.why ?? '' }));
  return {
    ...m,
    result: {
      ...e.data.result,
      ...(m as unknown as { result: object }).result,
      recommendations: { ...r, items },
    },
  };
}

/** An item_details message's text: the item's name and the details asked for. */
export function detailsText(m: Message): string {
  const d = m as { name?: unknown; details?: unknown };
  const name = typeof d.name === 'string' ? d.name : '';
  const details =
    typeof d.details === 'string'
      ? d.details
      : d.details && typeof d.details === 'object'
        ? Object.entries(d.details as Record<string, unknown>)
            .map(([k, v]) => `${k}: ${String(v)}`)
            .join(', ')
        : '';
  return name && details && !details.includes(name) ? `${name}: ${details}` : details || name;
}
