/**
 * The MCP tools' schemas and their text renderings. Inputs are validated with zod; inputs and
 * outputs are advertised as JSON Schema in tools/list.
 */
import { z } from 'zod';
import { ResultItem, SiteInfo } from '@askbus/contracts';

const site = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .describe(
    'A site name, a comma-separated list, or a list of names; "all" (the default) searches every site',
  );

const mode = z
  .enum(['list', 'summarize', 'generate'])
  .optional()
  .describe('list: ranked items; summarize: items plus a summary; generate: a generated answer');

export const AskArgs = z.object({
  query: z.string().trim().min(1).max(10_000).describe('The question, in plain language'),
  site,
  mode,
  generate_mode: mode.describe('NLWeb\'s name of "mode"'),
  prev: z
    .array(z.string().max(10_000))
    .max(50)
    .optional()
    .describe('Earlier queries of this conversation, oldest first'),
  max_results: z.number().int().min(1).max(100).optional().describe('At most this many results (default 10)'),
});
export type AskArgs = z.infer<typeof AskArgs>;

export const AskOutput = z.object({
  query_id: z.string(),
  query: z.string(),
  site: z.array(z.string()),
  mode: z.string(),
  results: z.array(ResultItem),
  summary: z.string().optional(),
  answer: z.string().optional(),
  /** The router needs more from the user before it can answer. */
  ask_user: z.string().optional(),
  /** Progress texts the router sent along the way. */
  notes: z.array(z.string()),
  errors: z.array(z.string()),
});
export type AskOutput = z.infer<typeof AskOutput>;

export const ListSitesArgs = z.object({});
export const ListSitesOutput = z.object({ sites: z.array(SiteInfo) });
export type ListSitesOutput = z.infer<typeof ListSitesOutput>;

export const WhoArgs = z.object({
  query: z.string().trim().min(1).max(10_000).describe('The question to find sites for'),
  max_sites: z.number().int().min(1).max(100).optional().describe('At most this many sites (default 10)'),
});
export type WhoArgs = z.infer<typeof WhoArgs>;

export const WhoSite = z.object({
  name: z.string(),
  hits: z.number().int(),
  top_score: z.number(),
  item_count: z.number().int(),
  types: z.array(z.string()),
});
export const WhoOutput = z.object({ query: z.string(), sites: z.array(WhoSite) });
export type WhoOutput = z.infer<typeof WhoOutput>;

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
    output: AskOutput,
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
] as const;

export type ToolName = (typeof TOOL_DEFS)[number]['name'];

/** The first zod issue as one readable line. */
export function issueText(err: z.ZodError): string {
  const issue = err.issues[0];
  if (!issue) return 'invalid arguments';
  const path = issue.path.join('.');
  return path ? `${path}: ${issue.message}` : issue.message;
}

const oneLine = (s: string, max = 300): string => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
};

export function renderAsk(out: AskOutput): string {
  const lines: string[] = [];
  const where = out.site.join(', ');
  if (out.ask_user && out.results.length === 0) {
    lines.push(out.ask_user);
    return lines.join('\n');
  }
  lines.push(
    `${out.results.length} result${out.results.length === 1 ? '' : 's'} for "${out.query}" (site: ${where}, mode: ${out.mode})`,
  );
  if (out.answer) lines.push('', `Answer: ${out.answer}`);
  if (out.summary) lines.push('', `Summary: ${out.summary}`);
  if (out.results.length) lines.push('');
  out.results.forEach((r, i) => {
    lines.push(`${i + 1}. ${r.name} (score ${r.score}, ${r.site}) ${r.url}`);
    if (r.description) lines.push(`   ${oneLine(r.description)}`);
  });
  if (out.ask_user) lines.push('', `The router asks: ${out.ask_user}`);
  for (const e of out.errors) lines.push('', `Error: ${e}`);
  return lines.join('\n');
}

export function renderSites(out: ListSitesOutput): string {
  if (out.sites.length === 0) return 'No sites are loaded.';
  return [
    `${out.sites.length} site${out.sites.length === 1 ? '' : 's'}:`,
    ...out.sites.map((s) => `- ${s.name}: ${s.itemCount} items (${s.types.join(', ') || 'no types'})`),
  ].join('\n');
}

export function renderWho(out: WhoOutput): string {
  if (out.sites.length === 0) return `No loaded site has items matching "${out.query}".`;
  return [
    `Sites that can answer "${out.query}", best first:`,
    ...out.sites.map(
      (s, i) => `${i + 1}. ${s.name}: ${s.hits} matching items, best score ${Number(s.top_score.toFixed(3))}`,
    ),
  ].join('\n');
}
