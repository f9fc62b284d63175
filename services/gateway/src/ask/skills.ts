/**
 * What the agent surfaces (MCP's tools, A2A's skills) share: the arguments of ask and who, the
 * outputs of list_sites and who, and their answers as text.
 */
import { z } from 'zod';
import { SiteInfo, WhoSite } from '@askbus/contracts';
import type { Answer } from './fold';

export const siteArg = z
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
  site: siteArg,
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

export const ListSitesArgs = z.object({});
export const ListSitesOutput = z.object({ sites: z.array(SiteInfo) });
export type ListSitesOutput = z.infer<typeof ListSitesOutput>;

export const WhoArgs = z.object({
  query: z.string().trim().min(1).max(10_000).describe('The question to find sites for'),
  max_sites: z.number().int().min(1).max(100).optional().describe('At most this many sites (default 10)'),
});
export type WhoArgs = z.infer<typeof WhoArgs>;

export const WhoOutput = z.object({ query: z.string(), sites: z.array(WhoSite) });
export type WhoOutput = z.infer<typeof WhoOutput>;

/** The first zod issue as one readable line. */
export function issueText(err: z.ZodError): string {
  const issue = err.issues[0];
  if (!issue) return 'invalid arguments';
  const path = issue.path.join('.');
  return path ? `${path}: ${issue.message}` : issue.message;
}

export const oneLine = (s: string, max = 300): string => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
};

export function renderAsk(out: Answer): string {
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
  if (out.sites.length === 0) return `No loaded site can answer "${out.query}".`;
  return [
    `Sites that can answer "${out.query}", best first:`,
    ...out.sites.map(
      (s, i) => `${i + 1}. ${s.name}: score ${s.score}, ${s.matches} matching items (best: ${s.best.name})`,
    ),
  ].join('\n');
}
