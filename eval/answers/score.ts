/**
 * Scoring for eval:answers, pure: what an NLWeb answer (REST /ask, streaming=false) showed the
 * user, how each question fared against its predicates, and the per-site figures.
 *
 * - precision@5 (constraint questions): relevant items among the first five shown, divided by
 *   min(5, relevant rows); 0 when nothing is shown while relevant rows exist.
 * - routing: the tool that answered (`item_details` → details, `compare_items` → compare, a
 *   `result` list → search) against the kind's expected tool.
 * - item accuracy: details — the `item_details` item is an expected row; compare — both
 *   compared items are expected rows, one for each side.
 */
import { z } from 'zod';
import { select, type EvaluateOptions, type Row } from './predicate';
import { EXPECTED_TOOL, KINDS, type Kind, type Question, type Tool } from './questions';
import type { EvalRecord } from './sites/site';

export const TOP_K = 5;

/** The tool an answer came from; `none` when it carried nothing but text (no_results, …). */
export type AnsweredBy = Tool | 'other' | 'none' | 'error';

export interface ShownItem {
  url: string;
  name: string;
}

export interface Answer {
  tool: AnsweredBy;
  /** What the user sees, in order: the result list, else the detailed item, else the compared two. */
  items: ShownItem[];
  detailsUrl?: string;
  compareUrls?: string[];
  /** The tool the router chose, from its debug `tool_selection` message (ASKBUS_ROUTER_DEBUG=1). */
  chosen?: string;
  /** Text messages (no_results, errors, …) for a miss report. */
  notes: string[];
}

const Shown = z.object({ url: z.string(), name: z.string().catch('') });
const AnswerBody = z.object({ messages: z.array(z.looseObject({ message_type: z.string() })) });
const ResultList = z.object({ content: z.array(Shown) });
const Details = z.object({
  url: z.string().catch(''),
  name: z.string().catch(''),
  details: z.string().optional().catch(undefined),
});
const Selection = z.object({ selected_tool: z.string() });
const Compared = z.object({
  item1: Shown.optional().catch(undefined),
  item2: Shown.optional().catch(undefined),
});
const Note = z.object({
  content: z.string().optional().catch(undefined),
  error: z.string().optional().catch(undefined),
});

const OTHER_TOOL_MESSAGES = new Set(['ensemble_result', 'substitution_suggestions']);
const NOTE_MESSAGES = new Set(['no_results', 'error', 'ask_user', 'site_is_irrelevant_to_query']);

/** Reads a non-streaming REST /ask body (query_id, results, messages). */
export function readAnswer(body: unknown): Answer {
  const parsed = AnswerBody.safeParse(body);
  if (!parsed.success)
    return { tool: 'error', items: [], notes: [`unreadable answer: ${parsed.error.message}`] };
  const list: ShownItem[] = [];
  const notes: string[] = [];
  let details: ShownItem | undefined;
  let compared: ShownItem[] | undefined;
  let other = false;
  let failed = false;
  let chosen: string | undefined;
  for (const m of parsed.data.messages) {
    const type = m.message_type;
    if (type === 'result') {
      const r = ResultList.safeParse(m); // a Summary's content is text, not a list
      if (r.success) list.push(...r.data.content);
    } else if (type === 'item_details') {
      const d = Details.parse(m);
      details ??= { url: d.url, name: d.name };
      if (!d.url) notes.push(`item_details: ${d.details ?? 'no item'}`);
    } else if (type === 'tool_selection') {
      chosen ??= Selection.safeParse(m).data?.selected_tool;
    } else if (type === 'compare_items') {
      const c = Compared.parse(m);
      compared ??= [c.item1, c.item2].filter((x): x is ShownItem => x !== undefined);
    } else if (OTHER_TOOL_MESSAGES.has(type)) {
      other = true;
    }
    if (NOTE_MESSAGES.has(type)) {
      const n = Note.parse(m);
      notes.push(`${type}: ${n.content ?? n.error ?? ''}`);
      if (type === 'error') failed = true;
    }
  }
  const seen = { notes, ...(chosen ? { chosen } : {}) };
  if (details)
    return { tool: 'details', items: details.url ? [details] : [], detailsUrl: details.url, ...seen };
  if (compared) return { tool: 'compare', items: compared, compareUrls: compared.map((c) => c.url), ...seen };
  // an item shown twice is still one item to the user
  const distinct = list.filter((x, i) => list.findIndex((y) => y.url === x.url) === i);
  if (distinct.length) return { tool: 'search', items: distinct, ...seen };
  return { tool: other ? 'other' : failed ? 'error' : 'none', items: [], ...seen };
}

/** What each question's predicates select, as item URLs (rows that did not become items never count). */
export interface Expected {
  relevant?: Set<string>;
  items?: Set<string>[];
}

/**
 * The rows as predicates see them: the data's own fields, plus "@name" and "@url" (the item's
 * name and url) so a named item can be picked where the data has no name of its own (penguins).
 */
const judged = new WeakMap<readonly EvalRecord[], Row[]>();

export function judgedRows(records: readonly EvalRecord[]): Row[] {
  let rows = judged.get(records);
  if (!rows) judged.set(records, (rows = records.map((r) => ({ ...r.row, '@name': r.name, '@url': r.url }))));
  return rows;
}

export function expectedFor(
  q: Question,
  records: readonly EvalRecord[],
  opts: EvaluateOptions = {},
): Expected {
  const rows = judgedRows(records);
  const urls = (p: Parameters<typeof select>[0]) =>
    new Set(select(p, rows, opts).map((i) => records[i]!.url));
  switch (q.kind) {
    case 'constraint':
      return { relevant: urls(q.relevant) };
    case 'details':
      return { items: [urls(q.item)] };
    case 'compare':
      return { items: q.items.map(urls) };
    case 'search':
      return {};
  }
}

/** Problems that would make a question unjudgeable: nothing relevant, or no item to name. */
export function problemsOf(q: Question, e: Expected): string[] {
  const out: string[] = [];
  if (e.relevant && e.relevant.size === 0) out.push(`${q.id}: no row satisfies "relevant"`);
  e.items?.forEach((s, i) => {
    if (s.size === 0) out.push(`${q.id}: no row satisfies item ${i + 1}`);
  });
  if (q.kind === 'compare' && e.items?.[0] && e.items[1] && [...e.items[0]].some((u) => e.items![1]!.has(u)))
    out.push(`${q.id}: the two compared items overlap`);
  return out;
}

export interface Outcome {
  id: string;
  kind: Kind;
  query: string;
  expectedTool: Tool;
  tool: AnsweredBy;
  /** The tool the router chose, when it said (it may differ from the answer's: a tool that found nothing). */
  chosen?: string;
  routed: boolean;
  /** constraint questions */
  precision?: number;
  relevantCount?: number;
  /** details and compare questions */
  itemCorrect?: boolean;
  /** The first five shown, each marked relevant (constraint) or expected (details/compare). */
  shown: Array<ShownItem & { ok: boolean }>;
  notes: string[];
}

export function judge(q: Question, e: Expected, a: Answer): Outcome {
  const expectedTool = EXPECTED_TOOL[q.kind];
  const anyExpected = (url: string) => e.items?.some((s) => s.has(url)) ?? false;
  const first = a.items.slice(0, TOP_K);
  const out: Outcome = {
    id: q.id,
    kind: q.kind,
    query: q.query,
    expectedTool,
    tool: a.tool,
    ...(a.chosen ? { chosen: a.chosen } : {}),
    routed: a.tool === expectedTool,
    shown: first.map((i) => ({ ...i, ok: e.relevant ? e.relevant.has(i.url) : anyExpected(i.url) })),
    notes: a.notes,
  };
  if (e.relevant) {
    const hits = first.filter((i) => e.relevant!.has(i.url)).length;
    out.relevantCount = e.relevant.size;
    out.precision = e.relevant.size === 0 ? 0 : hits / Math.min(TOP_K, e.relevant.size);
  }
  if (q.kind === 'details')
    out.itemCorrect = a.detailsUrl !== undefined && (e.items?.[0]?.has(a.detailsUrl) ?? false);
  if (q.kind === 'compare') out.itemCorrect = bothCompared(e.items ?? [], a.compareUrls ?? []);
  return out;
}

/** Each expected side matched by a different compared item. */
function bothCompared(sides: Set<string>[], urls: string[]): boolean {
  const [a, b] = sides;
  if (!a || !b) return false;
  return urls.some((u, i) => a.has(u) && urls.some((v, j) => j !== i && b.has(v)));
}

export interface Rate {
  n: number;
  correct: number;
  /** correct / n, or null when there is nothing to measure */
  rate: number | null;
}

export interface Summary {
  questions: number;
  precisionAt5: { n: number; mean: number | null };
  routing: Rate;
  routingByKind: Record<Kind, Rate>;
  detailsItem: Rate;
  compareItem: Rate;
}

const rate = (n: number, correct: number): Rate => ({ n, correct, rate: n ? correct / n : null });

export function summarize(outcomes: readonly Outcome[]): Summary {
  const count = (xs: readonly Outcome[], ok: (o: Outcome) => boolean) =>
    rate(xs.length, xs.filter(ok).length);
  const of = (k: Kind) => outcomes.filter((o) => o.kind === k);
  const precisions = outcomes.flatMap((o) => (o.precision === undefined ? [] : [o.precision]));
  return {
    questions: outcomes.length,
    precisionAt5: {
      n: precisions.length,
      mean: precisions.length ? precisions.reduce((s, p) => s + p, 0) / precisions.length : null,
    },
    routing: count(outcomes, (o) => o.routed),
    routingByKind: Object.fromEntries(KINDS.map((k) => [k, count(of(k), (o) => o.routed)])) as Record<
      Kind,
      Rate
    >,
    detailsItem: count(of('details'), (o) => o.itemCorrect === true),
    compareItem: count(of('compare'), (o) => o.itemCorrect === true),
  };
}

/** A miss: a constraint question below full precision, a wrong route, or a wrong item. */
export const isMiss = (o: Outcome): boolean =>
  !o.routed || (o.precision !== undefined && o.precision < 1) || o.itemCorrect === false;
