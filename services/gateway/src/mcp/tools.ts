/**
 * The MCP tools' schemas and their text renderings. Inputs are validated with zod; inputs and
 * outputs are advertised as JSON Schema in tools/list.
 */
import { z } from 'zod';
import { CompareItems, ItemDetails, ResultItem } from '@askbus/contracts';
import { Answer } from '../ask/fold';
import { AskArgs, ListSitesArgs, ListSitesOutput, WhoArgs, WhoOutput, oneLine, siteArg } from '../ask/skills';

const site = siteArg;

const detailsRequested = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .optional()
  .describe('What to tell about the item, e.g. "director", "rating", "release date" (default: everything)');

export const DetailsArgs = z
  .object({
    item: z.string().trim().min(1).max(1_000).optional().describe('The item\'s name, e.g. "Pale Rider"'),
    query: z
      .string()
      .trim()
      .min(1)
      .max(10_000)
      .optional()
      .describe('Instead of item: a question about one item, e.g. "who directed Alien"'),
    site,
    details_requested: detailsRequested,
  })
  .superRefine((a, ctx) => {
    if ((a.item === undefined) === (a.query === undefined))
      ctx.addIssue({ code: 'custom', path: ['item'], message: 'give either item or query (not both)' });
    else if (a.query !== undefined && a.details_requested !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['details_requested'],
        message: 'goes with item; with query, ask for the detail in the query text',
      });
  });
export type DetailsArgs = z.infer<typeof DetailsArgs>;

export const CompareArgs = z.object({
  item1: z.string().trim().min(1).max(1_000).describe('The first item\'s name, e.g. "Alien"'),
  item2: z.string().trim().min(1).max(1_000).describe('The second item\'s name, e.g. "Blade Runner"'),
  site,
  details_requested: detailsRequested.describe(
    'What to compare them on: price, rating, mileage, mpg, power, horsepower, budget, gross, year or length (default: everything)',
  ),
});
export type CompareArgs = z.infer<typeof CompareArgs>;

/** What details and compare have in common: the query sent and what came back besides the answer. */
const toolRun = {
  query_id: z.string(),
  /** The query text sent to the router with the tool. */
  query: z.string(),
  site: z.array(z.string()),
  /** Progress texts, no_results and the like. */
  notes: z.array(z.string()),
  errors: z.array(z.string()),
  /** Search results the router sent instead of the tool's answer (it does when the tool fails). */
  results: z.array(ResultItem).optional(),
};

export const DetailsOutput = z.object({
  ...toolRun,
  /** The item found, absent when none matched. */
  item: ItemDetails.optional(),
});
export type DetailsOutput = z.infer<typeof DetailsOutput>;

export const CompareOutput = z.object({
  ...toolRun,
  /** The comparison, absent when the items were not both found. */
  comparison: CompareItems.optional(),
});
export type CompareOutput = z.infer<typeof CompareOutput>;

/** The aspects the compare tool reads off "compare X and Y in terms of …" (libs/llm extractParams). */
export const COMPARE_ASPECTS = [
  'price',
  'rating',
  'mileage',
  'mpg',
  'power',
  'horsepower',
  'budget',
  'gross',
  'year',
  'length',
] as const;
/** Words the compare tool splits "compare X and Y" at (libs/llm extractParams). */
const COMPARE_SPLIT = /\s(?:and|vs\.?|versus|or|with|to|better than)\s/i;

/** The query text that makes the details tool find `item` (it reads the name and detail off it). */
export function detailsQuery(args: DetailsArgs): string {
  if (args.query !== undefined) return args.query;
  const d = args.details_requested;
  // extractParams reads "what is the <one or two words> of <name>"; anything else asks for everything.
  if (d && d.toLowerCase() !== 'everything' && /^[A-Za-z0-9]+(?: [A-Za-z0-9]+)?$/.test(d))
    return `what is the ${d} of ${args.item ?? ''}`;
  return `tell me about ${args.item ?? ''}`;
}

/**
 * The query text that makes the compare tool compare item1 and item2, whether the items were
 * swapped to keep a name with "and"/"or"/… in second place (the tool splits at the first such
 * word), and the note when details_requested is not an aspect the tool reads.
 */
export function compareQuery(args: CompareArgs): { query: string; swapped: boolean; note?: string } {
  let [a, b] = [args.item1, args.item2];
  const swapped = COMPARE_SPLIT.test(a) && !COMPARE_SPLIT.test(b);
  if (swapped) [a, b] = [b, a];
  const d = args.details_requested?.toLowerCase();
  const known = d !== undefined && (COMPARE_ASPECTS as readonly string[]).includes(d);
  const query = `compare ${a} and ${b}${known ? ` in terms of ${d}` : ''}`;
  const note =
    d !== undefined && !known && d !== 'everything'
      ? `details_requested "${args.details_requested}" is not one the compare tool reads (${COMPARE_ASPECTS.join(', ')}); the comparison covers everything.`
      : undefined;
  return { query, swapped, ...(note ? { note } : {}) };
}

/** True when the compare tool could not tell the two names apart in "compare X and Y". */
export const namesAmbiguous = (args: CompareArgs): boolean =>
  COMPARE_SPLIT.test(args.item1) && COMPARE_SPLIT.test(args.item2);

/** JSON Schema of a zod object for tools/list (draft-neutral: no $schema, which plain Ajv rejects). */
export function jsonSchema(
  schema: z.ZodType,
  io: 'input' | 'output',
): { type: 'object'; [k: string]: unknown } {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return { ...rest, type: 'object' };
}

export const TOOL_DEFS = [
  {
    name: 'ask',
    title: 'Ask the site',
    description:
      "Ask a question in plain language about the sites' schema.org data (recipes, movies, products, …). " +
      'Returns the ranked items, and a summary or answer when mode asks for one.',
    input: AskArgs,
    output: Answer,
  },
  {
    name: 'list_sites',
    title: 'List the sites',
    description: 'Lists the loaded sites with their item counts and schema.org types.',
    input: ListSitesArgs,
    output: ListSitesOutput,
  },
  {
    name: 'who',
    title: 'Which sites can answer',
    description: 'Ranks the loaded sites by how many of their items match a question, with their best score.',
    input: WhoArgs,
    output: WhoOutput,
  },
  {
    name: 'details',
    title: 'Details of one item',
    description:
      'Finds one named item (a movie, recipe, car, …) on the sites and tells about it: everything, or the ' +
      'detail asked for (director, rating, release date, …). Give item (its name) or query (a question about it).',
    input: DetailsArgs,
    output: DetailsOutput,
  },
  {
    name: 'compare',
    title: 'Compare two items',
    description:
      'Finds two named items on the sites and compares them: a comparison, a verdict and their fields side by side.',
    input: CompareArgs,
    output: CompareOutput,
  },
] as const;

export type ToolName = (typeof TOOL_DEFS)[number]['name'];

/** Notes, fallback search results and errors of a details or compare run, as text lines. */
function renderRest(out: DetailsOutput | CompareOutput, lines: string[]): string {
  for (const n of out.notes) lines.push('', n);
  if (out.results?.length) {
    lines.push('', 'Search results instead:');
    out.results.forEach((r, i) => lines.push(`${i + 1}. ${r.name} (score ${r.score}, ${r.site}) ${r.url}`));
  }
  for (const e of out.errors) lines.push('', `Error: ${e}`);
  return lines.join('\n');
}

export function renderDetails(out: DetailsOutput): string {
  const lines: string[] = [];
  const it = out.item;
  if (it) {
    lines.push(`${it.name} (${it.site}) ${it.url}`.trim());
    if (it.details_requested && it.details_requested !== 'everything')
      lines.push(`Details asked for: ${it.details_requested}`);
    lines.push('', it.details);
  } else lines.push(`No item found for "${out.query}" (site: ${out.site.join(', ')}).`);
  return renderRest(out, lines);
}

export function renderCompare(out: CompareOutput): string {
  const lines: string[] = [];
  const c = out.comparison;
  if (c) {
    lines.push(
      `${c.item1.name} (${c.item1.site}) ${c.item1.url}`,
      `vs. ${c.item2.name} (${c.item2.site}) ${c.item2.url}`,
    );
    lines.push('', c.comparison);
    if (c.verdict) lines.push('', `Verdict: ${c.verdict}`);
    if (c.table?.length) {
      lines.push('', `| field | ${c.item1.name} | ${c.item2.name} |`, '| --- | --- | --- |');
      const cell = (s: string): string => oneLine(s, 120).replace(/\|/g, '\\|');
      for (const r of c.table) lines.push(`| ${r.field} | ${cell(r.item1)} | ${cell(r.item2)} |`);
    }
  } else lines.push(`No comparison for "${out.query}" (site: ${out.site.join(', ')}).`);
  return renderRest(out, lines);
}
