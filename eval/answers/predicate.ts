/**
 * The relevance predicates of eval:answers: which rows of a data set's ORIGINAL records answer a
 * question, written as JSON in the question files and judged here, independent of the engine.
 *
 *   {"all":[{"field":"Species","eq":"Gentoo"},{"field":"Body Mass (g)","gt":6000}]}
 *   {"year":"Release Date","between":[1990,1999]}
 *   {"difference":["Worldwide Gross","Production Budget"],"lt":0}
 *   {"top":10,"by":"Body Mass (g)","where":{"field":"Island","eq":"Dream"}}
 *
 * A test reads one value from a row (a source: field, year/month/day/date of a date field, or
 * the difference/sum/ratio of two number fields) and applies every operator it carries (eq, in,
 * contains, matches, gt, gte, lt, lte, between, exists). `top` keeps the N best rows by a value
 * among the rows its `where` selects, rows tied with the N-th included. A row without the value
 * fails every operator except `exists: false`.
 */
import { z } from 'zod';

export type Row = Record<string, unknown>;
type Scalar = string | number | boolean;
type Bound = string | number;

/** Where a test's value comes from. A string is a field name (exact key, else a dotted path). */
export type Source =
  | { field: string }
  | { year: string }
  | { month: string }
  | { day: string }
  | { date: string }
  | { difference: [string, string] }
  | { sum: [string, string] }
  | { ratio: [string, string] };

export interface Operators {
  eq?: Scalar;
  in?: Scalar[];
  contains?: string;
  matches?: string;
  gt?: Bound;
  gte?: Bound;
  lt?: Bound;
  lte?: Bound;
  between?: [Bound, Bound];
  exists?: boolean;
}

export type Predicate =
  | { all: Predicate[] }
  | { any: Predicate[] }
  | { not: Predicate }
  | { top: number; by: string | Source; order?: 'asc' | 'desc'; where?: Predicate }
  | (Source & Operators);

const SOURCE_KEYS = ['field', 'year', 'month', 'day', 'date', 'difference', 'sum', 'ratio'] as const;
const OPERATOR_KEYS = [
  'eq',
  'in',
  'contains',
  'matches',
  'gt',
  'gte',
  'lt',
  'lte',
  'between',
  'exists',
] as const;
const KINDS = ['all', 'any', 'not', 'top', ...SOURCE_KEYS] as const;

const scalar = z.union([z.string(), z.number(), z.boolean()]);
const bound = z.union([z.number(), z.string()]);
const fieldName = z.string().min(1);
const pair = z.tuple([fieldName, fieldName]);

const sourceShape = {
  field: fieldName.optional(),
  year: fieldName.optional(),
  month: fieldName.optional(),
  day: fieldName.optional(),
  date: fieldName.optional(),
  difference: pair.optional(),
  sum: pair.optional(),
  ratio: pair.optional(),
};

const SourceSchema: z.ZodType<Source> = z.strictObject(sourceShape).superRefine((v, ctx) => {
  const present = SOURCE_KEYS.filter((k) => v[k] !== undefined);
  if (present.length !== 1)
    ctx.addIssue({
      code: 'custom',
      message: `a value source needs exactly one of ${SOURCE_KEYS.join(', ')}`,
    });
}) as unknown as z.ZodType<Source>;

/** Parses one predicate; the error names what is wrong and where. */
export const PredicateSchema: z.ZodType<Predicate> = z.lazy(() =>
  z
    .strictObject({
      all: z.array(PredicateSchema).min(1).optional(),
      any: z.array(PredicateSchema).min(1).optional(),
      not: PredicateSchema.optional(),
      top: z.number().int().positive().optional(),
      by: z.union([fieldName, SourceSchema]).optional(),
      order: z.enum(['asc', 'desc']).optional(),
      where: PredicateSchema.optional(),
      ...sourceShape,
      eq: scalar.optional(),
      in: z.array(scalar).min(1).optional(),
      contains: z.string().min(1).optional(),
      matches: z
        .string()
        .min(1)
        .refine((p) => compiles(p), { message: 'matches must be a valid regular expression' })
        .optional(),
      gt: bound.optional(),
      gte: bound.optional(),
      lt: bound.optional(),
      lte: bound.optional(),
      between: z.tuple([bound, bound]).optional(),
      exists: z.boolean().optional(),
    })
    .superRefine((v, ctx) => {
      const kinds = KINDS.filter((k) => v[k] !== undefined);
      if (kinds.length !== 1) {
        ctx.addIssue({
          code: 'custom',
          message: `a predicate needs exactly one of ${KINDS.join(', ')}; got ${kinds.join(', ') || 'none'}`,
        });
        return;
      }
      const ops = OPERATOR_KEYS.filter((k) => v[k] !== undefined);
      const isTest = (SOURCE_KEYS as readonly string[]).includes(kinds[0]!);
      if (isTest && ops.length === 0)
        ctx.addIssue({ code: 'custom', message: `a test needs at least one of ${OPERATOR_KEYS.join(', ')}` });
      if (!isTest && ops.length > 0)
        ctx.addIssue({
          code: 'custom',
          message: `${ops.join(', ')} belong to a test (field, year, …), not to ${kinds[0]}`,
        });
      if (kinds[0] === 'top' && v.by === undefined)
        ctx.addIssue({ code: 'custom', message: 'top needs "by": the field (or value source) to rank by' });
      if (kinds[0] !== 'top' && (v.by !== undefined || v.order !== undefined || v.where !== undefined))
        ctx.addIssue({ code: 'custom', message: 'by, order and where belong to top' });
    }),
) as unknown as z.ZodType<Predicate>;

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern, 'i');
    return true;
  } catch {
    return false;
  }
}

export interface EvaluateOptions {
  /**
   * Reads a date field's value the way the data set means it (for example movies.json's
   * "Jun 12 1998" with its two-digit-year repairs). Default: numbers are epoch milliseconds,
   * strings are ISO dates or what Date.parse reads. Dates are taken in UTC.
   */
  readDate?: (value: unknown, field: string) => Date | undefined;
}

/** A field's value: the exact key first (keys such as "Body Mass (g)"), else a dotted path. */
export function fieldValue(row: Row, field: string): unknown {
  if (Object.hasOwn(row, field)) return row[field];
  let at: unknown = row;
  for (const part of field.split('.')) {
    if (Array.isArray(at)) at = at[Number(part)];
    else if (typeof at === 'object' && at !== null) at = (at as Row)[part];
    else return undefined;
  }
  return at;
}

const isMissing = (v: unknown): boolean =>
  v === null || v === undefined || (typeof v === 'string' && v.trim() === '');

function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

export function defaultReadDate(value: unknown): Date | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? new Date(value) : undefined;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const iso = /^\d{4}-\d{2}-\d{2}$/.test(value.trim()) ? `${value.trim()}T00:00:00Z` : value;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? undefined : new Date(t);
}

/** The value a source reads from a row, or undefined when the row has none. */
export function sourceValue(source: Source, row: Row, opts: EvaluateOptions = {}): Scalar | undefined {
  const readDate = (field: string): Date | undefined => {
    const v = fieldValue(row, field);
    if (isMissing(v)) return undefined;
    return (opts.readDate ?? defaultReadDate)(v, field);
  };
  const numbers = ([a, b]: [string, string]): [number, number] | undefined => {
    const x = asNumber(fieldValue(row, a));
    const y = asNumber(fieldValue(row, b));
    return x === undefined || y === undefined ? undefined : [x, y];
  };
  if ('field' in source) {
    const v = fieldValue(row, source.field);
    return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : undefined;
  }
  if ('year' in source) return readDate(source.year)?.getUTCFullYear();
  if ('month' in source) {
    const d = readDate(source.month);
    return d ? d.getUTCMonth() + 1 : undefined;
  }
  if ('day' in source) return readDate(source.day)?.getUTCDate();
  if ('date' in source) return readDate(source.date)?.toISOString().slice(0, 10);
  if ('difference' in source) {
    const n = numbers(source.difference);
    return n ? n[0] - n[1] : undefined;
  }
  if ('sum' in source) {
    const n = numbers(source.sum);
    return n ? n[0] + n[1] : undefined;
  }
  const n = numbers(source.ratio);
  return n && n[1] !== 0 ? n[0] / n[1] : undefined;
}

const norm = (v: Scalar): string => String(v).trim().toLowerCase();

function equals(value: Scalar, want: Scalar): boolean {
  if (typeof want === 'number') return asNumber(value) === want;
  if (typeof want === 'boolean') return value === want || norm(value) === String(want);
  return norm(value) === norm(want);
}

/** value ⋛ bound: numerically for a number bound, as text (ISO dates) for a string bound. */
function compare(value: Scalar, b: Bound): number | undefined {
  if (typeof b === 'number') {
    const n = asNumber(value);
    return n === undefined ? undefined : n - b;
  }
  const s = String(value);
  return s < b ? -1 : s > b ? 1 : 0;
}

/** A test's operators as one check, built once per test (its regular expression compiled once). */
function checkOf(ops: Operators): (value: Scalar | undefined) => boolean {
  const checks: Array<(v: Scalar) => boolean> = [];
  const cmp = (b: Bound, ok: (c: number) => boolean) => (v: Scalar) => {
    const c = compare(v, b);
    return c !== undefined && ok(c);
  };
  const { eq, in: among, contains, matches, gt, gte, lt, lte, between, exists } = ops;
  if (eq !== undefined) checks.push((v) => equals(v, eq));
  if (among !== undefined) checks.push((v) => among.some((w) => equals(v, w)));
  if (contains !== undefined) checks.push((v) => norm(v).includes(contains.toLowerCase()));
  if (matches !== undefined) {
    const re = new RegExp(matches, 'i');
    checks.push((v) => re.test(String(v)));
  }
  if (gt !== undefined) checks.push(cmp(gt, (c) => c > 0));
  if (gte !== undefined) checks.push(cmp(gte, (c) => c >= 0));
  if (lt !== undefined) checks.push(cmp(lt, (c) => c < 0));
  if (lte !== undefined) checks.push(cmp(lte, (c) => c <= 0));
  if (between !== undefined)
    checks.push(
      cmp(between[0], (c) => c >= 0),
      cmp(between[1], (c) => c <= 0),
    );
  return (value) => {
    if (exists !== undefined && exists !== (value !== undefined)) return false;
    if (checks.length === 0) return true;
    return value !== undefined && checks.every((check) => check(value));
  };
}

function sourceOf(p: Source & Operators): Source {
  for (const k of SOURCE_KEYS) {
    const v = (p as unknown as Record<string, unknown>)[k];
    if (v !== undefined) return { [k]: v } as Source;
  }
  throw new Error('a test without a value source'); // PredicateSchema rules this out
}

/** Which rows satisfy a predicate: one boolean per row, in order. */
export function evaluate(p: Predicate, rows: readonly Row[], opts: EvaluateOptions = {}): boolean[] {
  if ('all' in p) {
    const parts = p.all.map((q) => evaluate(q, rows, opts));
    return rows.map((_, i) => parts.every((part) => part[i]));
  }
  if ('any' in p) {
    const parts = p.any.map((q) => evaluate(q, rows, opts));
    return rows.map((_, i) => parts.some((part) => part[i]));
  }
  if ('not' in p) return evaluate(p.not, rows, opts).map((x) => !x);
  if ('top' in p) return topRows(p, rows, opts);
  const source = sourceOf(p);
  const check = checkOf(p);
  return rows.map((row) => check(sourceValue(source, row, opts)));
}

/** The N best rows by a number among those `where` selects; rows tied with the N-th are kept too. */
function topRows(
  p: { top: number; by: string | Source; order?: 'asc' | 'desc'; where?: Predicate },
  rows: readonly Row[],
  opts: EvaluateOptions,
): boolean[] {
  const by: Source = typeof p.by === 'string' ? { field: p.by } : p.by;
  const within = p.where ? evaluate(p.where, rows, opts) : rows.map(() => true);
  const sign = p.order === 'asc' ? 1 : -1;
  const ranked = rows
    .map((row, i) => ({ i, v: asNumber(sourceValue(by, row, opts)) }))
    .filter((x): x is { i: number; v: number } => within[x.i] === true && x.v !== undefined)
    .sort((a, b) => sign * (a.v - b.v));
  const cut = ranked[Math.min(p.top, ranked.length) - 1]?.v;
  const chosen = new Set(ranked.filter((x) => cut !== undefined && sign * (x.v - cut) <= 0).map((x) => x.i));
  return rows.map((_, i) => chosen.has(i));
}

/** The indices of the rows a predicate selects. */
export function select(p: Predicate, rows: readonly Row[], opts: EvaluateOptions = {}): number[] {
  return evaluate(p, rows, opts).flatMap((ok, i) => (ok ? [i] : []));
}
