/** The tables and miss listings eval:answers prints, and its Markdown file. */
import type { Outcome, Rate, Summary } from './score';

export interface SiteResult {
  site: string;
  summary: Summary;
  outcomes: Outcome[];
}

const pct = (x: number | null): string => (x === null ? '–' : `${(100 * x).toFixed(1)}%`);
const ratio = (r: Rate): string => (r.n === 0 ? '–' : `${pct(r.rate)} (${r.correct}/${r.n})`);
const p5 = (s: Summary): string =>
  s.precisionAt5.mean === null ? '–' : `${s.precisionAt5.mean.toFixed(3)} (n=${s.precisionAt5.n})`;

const HEADER = ['site', 'questions', 'precision@5 (constraint)', 'routing', 'details item', 'compare item'];

function rows(results: readonly SiteResult[], overall: Summary): string[][] {
  const row = (name: string, s: Summary) => [
    name,
    String(s.questions),
    p5(s),
    ratio(s.routing),
    ratio(s.detailsItem),
    ratio(s.compareItem),
  ];
  return [...results.map((r) => row(r.site, r.summary)), row('overall', overall)];
}

/** A plain-text table for the terminal. */
export function textTable(results: readonly SiteResult[], overall: Summary): string {
  const all = [HEADER, ...rows(results, overall)];
  const widths = HEADER.map((_, c) => Math.max(...all.map((r) => r[c]!.length)));
  const line = (r: string[]) =>
    r
      .map((cell, c) => cell.padEnd(widths[c]!))
      .join('  ')
      .trimEnd();
  return [line(all[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...all.slice(1).map(line)].join('\n');
}

/** Routing by question kind, for the terminal. */
export function routingByKindText(results: readonly SiteResult[]): string {
  return results
    .map((r) => {
      const kinds = Object.entries(r.summary.routingByKind)
        .filter(([, rt]) => rt.n > 0)
        .map(([k, rt]) => `${k} ${rt.correct}/${rt.n}`)
        .join(', ');
      return `  ${r.site}: ${kinds}`;
    })
    .join('\n');
}

/** One miss: the question, what it got, the first five shown with ✓/✗, and how many rows were relevant. */
export function missText(site: string, o: Outcome): string {
  const head = `[${site} ${o.id} ${o.kind}] "${o.query}"`;
  const chose = o.chosen && o.chosen !== o.tool ? ` (the router chose ${o.chosen})` : '';
  const route = `answered by ${o.tool}${chose}${o.routed ? '' : `, expected ${o.expectedTool}`}`;
  const score =
    o.precision !== undefined
      ? `precision@5 ${o.precision.toFixed(2)}, ${o.relevantCount} relevant rows`
      : o.itemCorrect !== undefined
        ? `item ${o.itemCorrect ? 'right' : 'wrong'}`
        : '';
  const lines = [`${head}\n    ${[route, score].filter(Boolean).join('; ')}`];
  for (const s of o.shown) lines.push(`    ${s.ok ? '✓' : '✗'} ${s.name}`);
  if (o.shown.length === 0) lines.push('    (nothing shown)');
  for (const n of o.notes.slice(0, 2)) lines.push(`    · ${n.length > 160 ? `${n.slice(0, 157)}…` : n}`);
  return lines.join('\n');
}

/** eval/results/answers.md: the table, routing by kind, and when and how it was run. */
export function markdown(
  results: readonly SiteResult[],
  overall: Summary,
  meta: Record<string, string>,
): string {
  const all = [HEADER, ...rows(results, overall)];
  const md = (r: string[]) => `| ${r.join(' | ')} |`;
  const byKind = results.map((r) =>
    md([
      r.site,
      ...(['constraint', 'details', 'compare', 'search'] as const).map((k) =>
        ratio(r.summary.routingByKind[k]),
      ),
    ]),
  );
  return [
    '# eval:answers',
    '',
    ...Object.entries(meta).map(([k, v]) => `- ${k}: ${v}`),
    '',
    md(all[0]!),
    md(all[0]!.map(() => '---')),
    ...all.slice(1).map(md),
    '',
    'Routing by question kind:',
    '',
    md(['site', 'constraint', 'details', 'compare', 'search']),
    md(['---', '---', '---', '---', '---']),
    ...byKind,
    '',
  ].join('\n');
}
