/**
 * Tool answers (details, compare, ensemble, recipe substitutions, the results map) in protocol
 * 0.5: the text item that says what the tool found, and resources whose `data` are schema.org
 * objects with their `@type`, as the spec's resources of an Answer are. The payloads belong to
 * the tool services, so each is read through a schema; one that does not fit is passed on as
 * a resource typed `Thing` with no text of its own.
 */
import { z } from 'zod';
import { CompareItems, EnsembleAnswer, ItemDetails, SubstitutionsAnswer } from '@askbus/contracts';
import type { Message } from '@askbus/contracts';

export interface ResourceContent {
  type: 'resource';
  resource: {
    uri?: string;
    mimeType?: string;
    text?: string;
    data: Record<string, unknown> | Record<string, unknown>[];
  };
}

/** What one tool message adds to a 0.5 answer. */
export interface ToolContent {
  texts: string[];
  resources: ResourceContent[];
}

type Schema = Record<string, unknown>;

const SchemaObj = z.record(z.string(), z.unknown());

const Item = z.object({
  name: z.string(),
  url: z.string(),
  site: z.string().optional(),
  schema_object: SchemaObj.optional(),
});

const Ensemble = z.object({
  result: z.object({
    ensemble_type: z.string().optional(),
    recommendations: EnsembleAnswer,
  }),
});

const Substitutions = z.object({
  substitution_data: SubstitutionsAnswer,
  reference_recipes: z.array(Item).default([]),
});

const ResultsMap = z.object({
  locations: z.array(z.object({ title: z.string(), address: z.string() })),
});

const typeOf = (schema: Schema | undefined): unknown => schema?.['@type'] ?? 'Thing';

/** An item as schema.org data: its object whole, typed, with its url, name and site. */
export function typedItem(item: z.infer<typeof Item>, extra: Schema = {}): Schema {
  const schema = item.schema_object ?? {};
  return {
    ...schema,
    '@type': typeOf(schema),
    url: schema.url ?? item.url,
    name: schema.name ?? item.name,
    ...(item.site !== undefined ? { site: item.site } : {}),
    ...extra,
  };
}

function resource(data: Schema | Schema[], uri?: string): ResourceContent {
  return { type: 'resource', resource: { ...(uri ? { uri } : {}), data } };
}

function details(m: ItemDetails): ToolContent {
  // Not found: the tool's own sentence says so, and there is no item to show.
  if (m.url === '') return { texts: [m.details], resources: [] };
  const lines = m.details.trim() ? `${m.name}\n${m.details}` : m.name;
  const data = typedItem(m, {
    details: m.details,
    ...(m.details_requested !== undefined ? { details_requested: m.details_requested } : {}),
    ...(m.score !== undefined ? { score: m.score } : {}),
    ...(m.explanation ? { explanation: m.explanation } : {}),
  });
  return { texts: [lines], resources: [resource(data, m.url)] };
}

function compare(m: CompareItems): ToolContent {
  const text = [m.comparison, m.verdict].filter((t) => t && t.trim()).join(' ');
  const resources = [resource(typedItem(m.item1), m.item1.url), resource(typedItem(m.item2), m.item2.url)];
  if (m.table?.length) {
    // The side-by-side facts as a schema.org Table about the two items.
    resources.push(
      resource({
        '@type': 'Table',
        name: `${m.item1.name} and ${m.item2.name} compared`,
        about: [m.item1.name, m.item2.name],
        ...(m.details_requested ? { description: `Compared on ${m.details_requested}` } : {}),
        rows: m.table,
      }),
    );
  }
  return { texts: [text || `${m.item1.name} and ${m.item2.name} compared.`], resources };
}

function ensemble(m: z.infer<typeof Ensemble>): ToolContent {
  const r = m.result.recommendations;
  const picks = r.items.map((i) => `${i.category}: ${i.name}`).join('; ');
  const tips = r.overall_tips.length ? ` ${r.overall_tips.join(' ')}` : '';
  const text = r.items.length
    ? `${r.theme}: ${picks}.${tips}`
    : `No items were found to put together for ${r.theme || 'this'}.`;
  const list: Schema = {
    '@type': 'ItemList',
    name: r.theme,
    ...(m.result.ensemble_type ? { additionalType: m.result.ensemble_type } : {}),
    numberOfItems: r.items.length,
    itemListElement: r.items.map((i, n) => ({
      '@type': 'ListItem',
      position: n + 1,
      name: i.name,
      url: i.url,
      description: i.description,
      category: i.category,
      why: i.why,
    })),
    ...(r.overall_tips.length ? { overall_tips: r.overall_tips } : {}),
  };
  return { texts: [text], resources: r.items.length ? [resource(list)] : [] };
}

function substitutions(m: z.infer<typeof Substitutions>): ToolContent {
  const d = m.substitution_data;
  const subs = d.substitutions.map(
    (s) => `${s.original_ingredient} → ${s.substitute}${s.ratio ? ` (${s.ratio})` : ''}`,
  );
  const recipe = m.reference_recipes[0]?.name;
  const head = recipe ? `Substitutions for ${recipe}` : 'Substitutions';
  const text = d.already_meets_requirements
    ? `${recipe ?? 'The recipe'} already meets the requirements.`
    : subs.length
      ? `${head}: ${subs.join('; ')}.`
      : `No substitutions were found${recipe ? ` for ${recipe}` : ''}.`;
  return {
    texts: [text + (d.general_tips.length ? ` ${d.general_tips.join(' ')}` : '')],
    resources: m.reference_recipes.map((r) =>
      resource(typedItem(r, { substitutions: d.substitutions }), r.url),
    ),
  };
}

function resultsMap(m: z.infer<typeof ResultsMap>): ToolContent {
  const places = m.locations.map((l) => ({ '@type': 'Place', name: l.title, address: l.address }));
  // The map accompanies the results, whose own text speaks for the answer.
  return {
    texts: [],
    resources: places.length ? [resource({ '@type': 'ItemList', itemListElement: places })] : [],
  };
}

const ENVELOPE = new Set(['message_id', 'sender_type', 'timestamp', 'conversation_id']);

/** A payload no schema fits: passed on whole, typed Thing unless it names a type. */
function unknownPayload(m: Message): ToolContent {
  const data: Schema = {};
  for (const [k, v] of Object.entries(m)) if (!ENVELOPE.has(k)) data[k] = v;
  return { texts: [], resources: [resource({ ...data, '@type': data['@type'] ?? 'Thing' })] };
}

/** The text and resources of a tool's message (undefined for other messages). */
export function toolContent(m: Message): ToolContent | undefined {
  const parse = <S extends z.ZodType>(schema: S, f: (v: z.infer<S>) => ToolContent): ToolContent => {
    const r = schema.safeParse(m);
    return r.success ? f(r.data) : unknownPayload(m);
  };
  switch (m.message_type) {
    case 'item_details':
      return parse(ItemDetails, details);
    case 'compare_items':
      return parse(CompareItems, compare);
    case 'ensemble_result':
      return parse(Ensemble, ensemble);
    case 'substitution_suggestions':
      return parse(Substitutions, substitutions);
    case 'results_map':
      return parse(ResultsMap, resultsMap);
    default:
      return undefined;
  }
}
