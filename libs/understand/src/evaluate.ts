import type { Constraint, Order, Target, Understanding } from '@askbus/contracts';
import type { Fact } from './facts';
import { nameKey } from './names';

/**
 * How an item measures up to an understood question, from its facts alone: which constraints
 * it satisfies, where it stands on each order (0..1, from the site's quantiles), and the number
 * a superlative sorts it by. The retriever filters and sorts with it; rankers score with it.
 */
export type FactMap = ReadonlyMap<string, readonly Fact[]>;

/** The number a target gives for an item: a property's first number, or a quantity derived from two. */
export function targetValue(target: Target, facts: FactMap): number | undefined {
  if ('path' in target) return firstNumber(facts.get(target.path));
  const a = firstNumber(facts.get(target.derived.a));
  const b = firstNumber(facts.get(target.derived.b));
  if (a === undefined || b === undefined) return undefined;
  return derivedQuantity(target.derived.op, a, b);
}

/** A quantity derived from two numbers (undefined: a ratio to 0). */
export function derivedQuantity(
  op: Extract<Target, { derived: unknown }>['derived']['op'],
  a: number,
  b: number,
): number | undefined {
  switch (op) {
    case 'difference':
      return a - b;
    case 'sum':
      return a + b;
    case 'ratio':
      return b === 0 ? undefined : a / b;
    case 'gap':
      return Math.abs(a - b);
  }
}

function firstNumber(list: readonly Fact[] | undefined): number | undefined {
  for (const f of list ?? []) if (f.num !== undefined) return f.num;
  return undefined;
}

/** Whether the item satisfies a constraint (an item without the property does not). */
export function satisfies(k: Constraint, facts: FactMap): boolean {
  if (k.kind === 'range') {
    const values =
      'path' in k.target
        ? (facts.get(k.target.path) ?? []).map((f) => f.num).filter((n): n is number => n !== undefined)
        : [targetValue(k.target, facts)].filter((n): n is number => n !== undefined);
    return values.some((v) => inRange(v, k));
  }
  const strings = (facts.get(k.path) ?? []).map((f) => f.str).filter((s): s is string => s !== undefined);
  const hit = strings.some((s) => valueMatches(s, k.values, k.contains));
  return k.negated ? !hit : hit;
}

function inRange(v: number, k: Extract<Constraint, { kind: 'range' }>): boolean {
  if (k.min !== undefined && (k.minInclusive ? v < k.min : v <= k.min)) return false;
  if (k.max !== undefined && (k.maxInclusive ? v > k.max : v >= k.max)) return false;
  return true;
}

const keyCache = new Map<string, string>();
function cachedKey(s: string): string {
  let k = keyCache.get(s);
  if (k === undefined) {
    k = nameKey(s);
    if (keyCache.size > 50_000) keyCache.clear();
    keyCache.set(s, k);
  }
  return k;
}

/** A value equals one of `values` (folded) or contains one of the word sequences. */
export function valueMatches(
  value: string,
  values: readonly string[],
  contains: readonly (readonly string[])[],
): boolean {
  if (values.length && values.includes(value.toLowerCase())) return true;
  if (values.length || contains.length) {
    const key = cachedKey(value);
    if (values.some((v) => cachedKey(v) === key)) return true;
    if (contains.length) {
      const padded = ` ${key} `;
      return contains.some((seq) => padded.includes(` ${seq.join(' ')} `));
    }
  }
  return false;
}

/** Where a value stands among the site's values, 0..1, from its 11 quantiles. */
export function percentile(value: number, quantiles: readonly number[] | undefined): number {
  if (!quantiles || quantiles.length < 2) return 0.5;
  const q = quantiles;
  if (value <= q[0]!) return 0;
  if (value >= q[q.length - 1]!) return 1;
  for (let i = 1; i < q.length; i++) {
    if (value <= q[i]!) {
      const span = q[i]! - q[i - 1]!;
      const within = span > 0 ? (value - q[i - 1]!) / span : 1;
      return (i - 1 + within) / (q.length - 1);
    }
  }
  return 1;
}

/** How well an item fits one order, 0..1 (1 = the top of what the question asks for); undefined without a value. */
export function orderFit(o: Order, facts: FactMap): number | undefined {
  const v = targetValue(o.target, facts);
  return v === undefined ? undefined : fitOfValue(o, v);
}

/** How well a value fits one order, 0..1 (orderFit of an item with this value). */
export function fitOfValue(o: Pick<Order, 'quantiles' | 'direction'>, v: number): number {
  const p = o.quantiles ? percentile(v, o.quantiles) : 0.5 + Math.atan(v / (Math.abs(v) + 1)) / Math.PI;
  return o.direction === 'desc' ? p : 1 - p;
}

export interface Satisfaction {
  failed: Constraint[];
  /** Mean fit of the orders (0..1); 1 when there are none. */
  fit: number;
  /** The sort key of the first superlative (larger is better), when the item has it. */
  sortKey: number | undefined;
  /** Whether the question's first superlative could place the item at all. */
  sortable: boolean;
}

export function satisfaction(u: Pick<Understanding, 'constraints' | 'orders'>, facts: FactMap): Satisfaction {
  const failed = u.constraints.filter((k) => !satisfies(k, facts));
  let sum = 0;
  let n = 0;
  for (const o of u.orders) {
    n++;
    sum += orderFit(o, facts) ?? 0;
  }
  const sort = u.orders.find((o) => o.strength === 'sort');
  const raw = sort ? targetValue(sort.target, facts) : undefined;
  return {
    failed,
    fit: n ? sum / n : 1,
    sortKey: raw === undefined || !sort ? undefined : sort.direction === 'desc' ? raw : -raw,
    sortable: sort === undefined || raw !== undefined,
  };
}

/** Whether an understanding asks anything of the items beyond words. */
export function hasStructure(u: Pick<Understanding, 'constraints' | 'orders'> | undefined): boolean {
  return !!u && (u.constraints.length > 0 || u.orders.length > 0);
}

/** 11 quantiles (0, 10 … 100 %) of the numbers given (missing ones left out); undefined when there are none. */
export function quantilesOf(values: readonly (number | undefined)[]): number[] | undefined {
  return quantilesOfSorted(
    values.filter((v): v is number => v !== undefined && Number.isFinite(v)).sort((a, b) => a - b),
  );
}

/** quantilesOf of numbers already sorted ascending. */
export function quantilesOfSorted(sorted: ArrayLike<number>): number[] | undefined {
  if (sorted.length === 0) return undefined;
  const out: number[] = [];
  for (let i = 0; i <= 10; i++) {
    const at = (sorted.length - 1) * (i / 10);
    const lo = Math.floor(at);
    const hi = Math.ceil(at);
    out.push(sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo));
  }
  return out;
}

/**
 * quantilesOfSorted of a list given as its distinct numbers ascending, each with how many times
 * it occurs: the same quantiles, without listing every occurrence.
 */
export function quantilesOfCounted(
  sorted: ArrayLike<number>,
  counts: ArrayLike<number>,
): number[] | undefined {
  // ends[i]: how many occurrences the numbers up to sorted[i] make
  const ends = new Float64Array(counts.length);
  let total = 0;
  for (let i = 0; i < counts.length; i++) ends[i] = total += counts[i]!;
  if (sorted.length === 0 || total === 0) return undefined;
  // the number at a position of the occurrences listed in order: the first whose end is past it
  const valueAt = (position: number): number => {
    let lo = 0;
    let hi = ends.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ends[mid]! > position) hi = mid;
      else lo = mid + 1;
    }
    return sorted[lo]!;
  };
  const out: number[] = [];
  for (let i = 0; i <= 10; i++) {
    const position = (total - 1) * (i / 10);
    const lo = Math.floor(position);
    const hi = Math.ceil(position);
    const low = valueAt(lo);
    out.push(low + (valueAt(hi) - low) * (position - lo));
  }
  return out;
}

/**
 * Constraints made into one test, for scanning many items: value sets folded once, no
 * allocation per item (satisfies() does the same, one constraint at a time).
 */
export function compileConstraints(constraints: readonly Constraint[]): (facts: FactMap) => boolean {
  const tests = constraints.map((k): ((facts: FactMap) => boolean) => {
    if (k.kind === 'range') {
      if (!('path' in k.target)) return (facts) => satisfies(k, facts);
      const path = k.target.path;
      return (facts) => {
        const list = facts.get(path);
        if (!list) return false;
        for (const f of list) if (f.num !== undefined && inRange(f.num, k)) return true;
        return false;
      };
    }
    const keys = new Set(k.values.map((v) => cachedKey(v)));
    const seqs = k.contains.map((seq) => ` ${seq.join(' ')} `);
    const path = k.path;
    const negated = k.negated;
    return (facts) => {
      let hit = false;
      for (const f of facts.get(path) ?? []) {
        if (f.str === undefined) continue;
        const key = cachedKey(f.str);
        if (keys.has(key) || (seqs.length > 0 && seqs.some((q) => ` ${key} `.includes(q)))) {
          hit = true;
          break;
        }
      }
      return negated ? !hit : hit;
    };
  });
  return (facts) => {
    for (const t of tests) if (!t(facts)) return false;
    return true;
  };
}
