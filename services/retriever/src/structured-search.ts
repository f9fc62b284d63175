import type {
  Constraint,
  Order,
  RetrievedItem,
  SearchOutcome,
  StoredItem,
  Target,
  Understanding,
} from '@askbus/contracts';
import { satisfaction, targetValue, type FactMap } from '@askbus/understand';
import { siftDown } from './min-heap';

/**
 * Search with an understood question: the constraints filter the items of the sites, the
 * orders and the free words rank what is left, the items the question names exactly go first.
 * When the constraints together exclude every item, the least sure is dropped (and said so)
 * until some item is left, so a question most items nearly satisfy is never answered with
 * nothing. `structuredSearch` does it all in memory (the embedded index); the PostgreSQL store
 * filters in SQL and ranks its rows with `rankCandidates`.
 */
export interface InMemorySource {
  facts(item: StoredItem): FactMap;
  /**
   * Exactly the items of these sites and types that pass every constraint (from the property
   * columns where they answer, each remaining constraint tested on the items left).
   */
  select(
    constraints: readonly Constraint[],
    sites: ReadonlySet<string> | undefined,
    types: ReadonlySet<string> | undefined,
  ): Selection;
  /** 11 quantiles of a target's numbers over the items of these sites and types (quantilesOf). */
  quantiles(
    target: Target,
    sites: ReadonlySet<string> | undefined,
    types: ReadonlySet<string> | undefined,
  ): number[] | undefined;
  /** Item URLs ranked by text relevance to `text` among `allowed` (best first, at most `depth`). */
  textRanks(
    text: string,
    allowed: ReadonlySet<string> | Selection,
    depth: number,
    keywordOnly?: boolean,
  ): Promise<string[]>;
}

/** The items that pass a question's constraints, without materialising them until asked. */
export interface Selection {
  /** How many items pass. */
  readonly count: number;
  /** The item at this URL when it passes (decoded: only for the items returned). */
  get(url: string): StoredItem | undefined;
  /**
   * The URLs of the passing items that have the target's number, best first by `direction`, with their
   * sort keys as `satisfaction` gives them (desc: the number, asc: minus it): the first `n`
   * and every item tied with the n-th (all of them when fewer than `n` have the number).
   */
  best(target: Target, direction: 'asc' | 'desc', n: number): Array<{ url: string; sortKey: number }>;
  /**
   * Every passing item's URL (or only these, passing or not) and its fit to these orders
   * (satisfaction's fit), from the columns.
   */
  fits(orders: readonly Order[], only?: readonly string[]): { urls: string[]; fits: Float64Array };
  /** Whether the item at this URL passes (nothing decoded). */
  has(url: string): boolean;
  /**
   * The passing items not in `skip` of best fit to one order: the first `n` and every item tied
   * with the n-th, with their fits; undefined when only `fits` over every item can tell.
   */
  bestFits?(
    order: Order,
    n: number,
    skip: ReadonlySet<string>,
  ): { urls: string[]; fits: Float64Array } | undefined;
  /** The URLs of the passing items not in `skip`, the first `n` in URL order (all when fewer). */
  firstByUrl?(n: number, skip: ReadonlySet<string>): string[];
}

export interface Candidate {
  item: StoredItem;
  /** Mean fit of the orders, 0..1. */
  fit: number;
  /** The superlative's number (larger first), when the item has it. */
  sortKey: number | undefined;
  /** Text relevance, 0..1. */
  text: number;
}

/** How much the orders weigh against the free words when both rank (no superlative). */
const ORDER_WEIGHT = 0.6;

/** The constraint to drop first: the least sure; among equals derived quantities, then word values. */
export function weakest(constraints: readonly Constraint[]): Constraint | undefined {
  return [...constraints].sort((a, b) => a.confidence - b.confidence || relaxOrder(b) - relaxOrder(a))[0];
}

function relaxOrder(k: Constraint): number {
  if (k.kind === 'range' && 'derived' in k.target) return 3;
  if (k.kind === 'value' && k.contains.length > 0 && k.values.length === 0) return 2;
  return 1;
}

/** An item as a candidate, when it satisfies the constraints. */
export function candidateOf(
  item: StoredItem,
  facts: FactMap,
  u: Pick<Understanding, 'constraints' | 'orders'>,
): Candidate | undefined {
  const s = satisfaction(u, facts);
  if (s.failed.length > 0) return undefined;
  return { item, fit: s.fit, sortKey: s.sortKey, text: 0 };
}

/** Text relevance from a ranking of URLs (best first): 1 at the top, falling off slowly. */
export function applyTextRanks(candidates: Candidate[], ranks: readonly string[]): void {
  const position = new Map(ranks.map((url, i) => [url, i]));
  for (const c of candidates) {
    const at = position.get(c.item.url);
    c.text = at === undefined ? 0 : 1 / (1 + at / 10);
  }
}

/** Orders candidates as the question asks and keeps the first `numResults`. */
export function rankCandidates(
  candidates: Candidate[],
  u: Understanding,
  numResults: number,
): RetrievedItem[] {
  const sort = u.orders.some((o) => o.strength === 'sort');
  const hasOrders = u.orders.length > 0;
  const hasWords = u.freeText.trim() !== '';
  const score = (c: Candidate): number =>
    hasOrders && hasWords
      ? ORDER_WEIGHT * c.fit + (1 - ORDER_WEIGHT) * c.text
      : hasOrders
        ? c.fit + 0.01 * c.text
        : c.text;
  const named = new Set(u.named.filter((n) => n.exact).map((n) => n.url));
  // keys computed once per candidate, not once per comparison (tens of thousands of candidates)
  const keyed = candidates.map((c) => ({ c, named: named.has(c.item.url), score: score(c) }));
  keyed.sort((a, b) => {
    if (a.named !== b.named) return a.named ? -1 : 1;
    if (sort) {
      const ka = a.c.sortKey;
      const kb = b.c.sortKey;
      // items that have the sorted number first, by it; then the rest
      if (ka !== undefined && kb !== undefined && ka !== kb) return kb - ka;
      if ((ka === undefined) !== (kb === undefined)) return ka === undefined ? 1 : -1;
    }
    return b.score - a.score || (a.c.item.url < b.c.item.url ? -1 : 1);
  });
  keyed.forEach((k, i) => (candidates[i] = k.c));
  const n = Math.max(1, numResults);
  return candidates
    .slice(0, numResults)
    .map((c, i) => ({ ...c.item, retrievalScore: Math.round((1 - i / n) * 1e4) / 1e4 }));
}

export async function structuredSearch(
  src: InMemorySource,
  question: Understanding,
  sites: ReadonlySet<string> | undefined,
  types: ReadonlySet<string> | undefined,
  numResults: number,
): Promise<{ items: RetrievedItem[]; outcome: SearchOutcome }> {
  let u = question;
  // derived quantities (profit, total score) have no profile quantiles: take them from the items
  const orders = u.orders.map((o) =>
    o.quantiles ? o : { ...o, quantiles: src.quantiles(o.target, sites, types) },
  );
  u = { ...u, orders };
  let constraints = [...u.constraints];
  const relaxed: string[] = [];
  const named = new Set(u.named.filter((n) => n.exact).map((n) => n.url));
  const sort = u.orders.find((o) => o.strength === 'sort');
  let selection = src.select(constraints, sites, types);
  while (selection.count === 0 && constraints.length > 0) {
    const drop = weakest(constraints)!;
    constraints = constraints.filter((k) => k !== drop);
    relaxed.push(drop.text);
    selection = src.select(constraints, sites, types);
  }
  // without free words the question's own words still order what is left a little;
  // they only break ties then: the keyword half is enough for that
  const rankText = u.freeText.trim() || u.text;
  const keywordOnly = !u.freeText.trim();
  const depth = Math.max(numResults * 4, 200);
  const need = numResults + named.size;
  // A superlative orders by its number first: only items whose number can reach the first
  // `numResults` (and the named ones) are candidates, taken from the column's order; their fit
  // only breaks ties among them, and the words rank them only among themselves.
  const best = sort ? selection.best(sort.target, sort.direction, need) : [];
  if (sort && best.length >= need) {
    const top: Candidate[] = best.map(({ url, sortKey }) => ({ item: stub(url), fit: 0, sortKey, text: 0 }));
    const inTop = new Set(top.map((c) => c.item.url));
    for (const url of named) {
      const item = inTop.has(url) ? undefined : selection.get(url);
      if (!item) continue;
      const raw = targetValue(sort.target, src.facts(item));
      const sortKey = raw === undefined ? undefined : sort.direction === 'desc' ? raw : -raw;
      top.push({ item, fit: 0, sortKey, text: 0 });
    }
    const fitted = selection.fits(
      u.orders,
      top.map((c) => c.item.url),
    );
    const fitByUrl = new Map(fitted.urls.map((url, i) => [url, fitted.fits[i]!]));
    for (const c of top) c.fit = fitByUrl.get(c.item.url) ?? 0;
    if (rankText && top.length > 1)
      applyTextRanks(
        top,
        await src.textRanks(rankText, new Set(top.map((c) => c.item.url)), depth, keywordOnly),
      );
    return {
      items: materialise(rankCandidates(top, u, numResults), selection),
      outcome: { matched: selection.count, relaxed, orders },
    };
  }
  // Otherwise the words rank every passing item; of those they leave unranked only the best
  // `need` by fit (then URL, as rankCandidates breaks ties) can reach the first results.
  const ranks =
    rankText && selection.count > 1
      ? await src.textRanks(rankText, selection, depth, keywordOnly)
      : undefined;
  const candidates: Candidate[] = [];
  const ranked = new Set(ranks);
  // one order: the best by fit walked from its end, and the fits of the ranked and named items,
  // instead of the fit of every passing item
  const kept = new Set([...ranked, ...named]);
  if (!sort && u.orders.length === 0 && selection.firstByUrl) {
    // Without orders every passing item fits alike (1), so of those the words leave unranked
    // only the first `need` by URL (rankCandidates' last tie-break) can reach the results: what
    // `contenders` keeps of every item's fit, without listing every passing item (~15 ms a
    // question at 300k items, for "comedies from the 90s").
    for (const url of [...[...kept].filter((url) => selection.has(url)), ...selection.firstByUrl(need, kept)])
      candidates.push({ item: stub(url), fit: 1, sortKey: undefined, text: 0 });
    if (ranks) applyTextRanks(candidates, ranks);
    return {
      items: materialise(rankCandidates(candidates, u, numResults), selection),
      outcome: { matched: selection.count, relaxed, orders },
    };
  }
  const head = !sort && u.orders.length === 1 ? selection.bestFits?.(u.orders[0]!, need, kept) : undefined;
  const { urls, fits } = head
    ? joinFits(
        head,
        selection.fits(
          u.orders,
          [...kept].filter((url) => selection.has(url)),
        ),
      )
    : selection.fits(u.orders);
  if (!sort)
    for (const i of contenders(urls, fits, ranked, named, need))
      candidates.push({ item: stub(urls[i]!), fit: fits[i]!, sortKey: undefined, text: 0 });
  else
    for (const url of urls) {
      // a superlative too few items have a number for: every item, with its key
      const item = selection.get(url);
      if (!item) continue;
      const s = satisfaction({ constraints: [], orders: u.orders }, src.facts(item));
      candidates.push({ item, fit: s.fit, sortKey: s.sortKey, text: 0 });
    }
  if (ranks) applyTextRanks(candidates, ranks);
  return {
    items: materialise(rankCandidates(candidates, u, numResults), selection),
    outcome: { matched: selection.count, relaxed, orders },
  };
}

/** Two lists of URLs with their fits, one after the other. */
function joinFits(
  a: { urls: string[]; fits: Float64Array },
  b: { urls: string[]; fits: Float64Array },
): { urls: string[]; fits: Float64Array } {
  const fits = new Float64Array(a.fits.length + b.fits.length);
  fits.set(a.fits);
  fits.set(b.fits, a.fits.length);
  return { urls: [...a.urls, ...b.urls], fits };
}

/**
 * A candidate's item before it is decoded: ranking reads only its URL, and only the items
 * returned are decoded (`materialise`).
 */
function stub(url: string): StoredItem {
  return { url } as StoredItem;
}

/** The ranked results with their items decoded (the ranking kept only URLs and scores). */
function materialise(ranked: readonly RetrievedItem[], selection: Selection): RetrievedItem[] {
  return ranked.flatMap((r) => {
    if (r.schema_object !== undefined) return [r];
    const item = selection.get(r.url);
    return item ? [{ ...item, retrievalScore: r.retrievalScore }] : [];
  });
}

/**
 * Which of `urls` (by index) can reach the first `n` when the words rank only `ranked`: those,
 * the named ones, and of the others the `n` best by fit, then URL (scores there depend on the
 * fit alone).
 */
export function contenders(
  urls: readonly string[],
  fits: Float64Array,
  ranked: ReadonlySet<string>,
  named: ReadonlySet<string>,
  n: number,
): number[] {
  const out: number[] = [];
  const rest: number[] = [];
  urls.forEach((url, i) => (ranked.has(url) || named.has(url) ? out.push(i) : rest.push(i)));
  if (rest.length <= n) return [...out, ...rest];
  const floor = nthLargest(fits, n, rest);
  const tied: number[] = [];
  let above = 0;
  for (const i of rest) {
    if (fits[i]! > floor) {
      out.push(i);
      above++;
    } else if (fits[i] === floor) tied.push(i);
  }
  // the first of the tied by URL, kept in order as they come (no sort of them all)
  const want = n - above;
  const first: number[] = [];
  for (const i of tied) {
    const url = urls[i]!;
    if (first.length === want && url >= urls[first[want - 1]!]!) continue;
    let lo = 0;
    let hi = first.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (urls[first[mid]!]! < url) lo = mid + 1;
      else hi = mid;
    }
    first.splice(lo, 0, i);
    if (first.length > want) first.pop();
  }
  return [...out, ...first];
}

/**
 * The n-th largest of `values` (of those at `at` when given), ties counted: what a full sort
 * would have at index length − n, found with a min-heap of n entries (no sort of them all).
 * NaN counts as the smallest; the answer is NaN for n < 1 or fewer values than n.
 */
export function nthLargest(values: ArrayLike<number>, n: number, at?: ArrayLike<number>): number {
  const len = at ? at.length : values.length;
  if (n < 1 || len < n) return NaN;
  const heap = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const v = values[at ? at[i]! : i]!;
    heap[i] = Number.isNaN(v) ? -Infinity : v;
  }
  for (let i = (n >> 1) - 1; i >= 0; i--) siftDown(heap, n, i, heap[i]!);
  for (let i = n; i < len; i++) {
    const v = values[at ? at[i]! : i]!;
    if (v > heap[0]!) siftDown(heap, n, 0, v);
  }
  return heap[0]!;
}
