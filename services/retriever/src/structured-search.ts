import type { Constraint, RetrievedItem, SearchOutcome, StoredItem, Understanding } from '@askbus/contracts';
import { compileConstraints, quantilesOf, satisfaction, targetValue, type FactMap } from '@askbus/understand';

/**
 * Search with an understood question: the constraints filter the items of the sites, the
 * orders and the free words rank what is left, the items the question names exactly go first.
 * When the constraints together exclude every item, the least sure is dropped (and said so)
 * until some item is left, so a question most items nearly satisfy is never answered with
 * nothing. `structuredSearch` does it all in memory (the embedded index); the PostgreSQL store
 * filters in SQL and ranks its rows with `rankCandidates`.
 */
export interface InMemorySource {
  /** Every item of these sites (all sites when undefined), of these types when given. */
  items(sites: ReadonlySet<string> | undefined, types: ReadonlySet<string> | undefined): Iterable<StoredItem>;
  facts(item: StoredItem): FactMap;
  /**
   * A narrower pool for these constraints, from an index (items that may pass: each is still
   * tested); undefined when no constraint can narrow the pool.
   */
  narrow?(
    constraints: readonly Constraint[],
    sites: ReadonlySet<string> | undefined,
    types: ReadonlySet<string> | undefined,
  ): StoredItem[] | undefined;
  /** Item URLs ranked by text relevance to `text` among `allowed` (best first, at most `depth`). */
  textRanks(
    text: string,
    allowed: ReadonlySet<string>,
    depth: number,
    keywordOnly?: boolean,
  ): Promise<string[]>;
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
  // the whole pool only when an order needs quantiles from the items (derived quantities)
  let whole: { items: StoredItem[]; facts: FactMap[] } | undefined;
  const wholePool = (): { items: StoredItem[]; facts: FactMap[] } => {
    if (!whole) {
      const items = [...src.items(sites, types)];
      whole = { items, facts: items.map((item) => src.facts(item)) };
    }
    return whole;
  };
  // derived quantities (profit, total score) have no profile quantiles: take them from the items
  const orders = u.orders.map((o) =>
    o.quantiles
      ? o
      : { ...o, quantiles: quantilesOf(wholePool().facts.map((f) => targetValue(o.target, f))) },
  );
  u = { ...u, orders };
  let constraints = [...u.constraints];
  const relaxed: string[] = [];
  const named = new Set(u.named.filter((n) => n.exact).map((n) => n.url));
  const filter = (): Candidate[] => {
    const out: Candidate[] = [];
    const passes = compileConstraints(constraints);
    const narrowed = constraints.length ? src.narrow?.(constraints, sites, types) : undefined;
    const items = narrowed ?? wholePool().items;
    const facts = narrowed ? narrowed.map((item) => src.facts(item)) : wholePool().facts;
    const sort = u.orders.find((o) => o.strength === 'sort');
    if (!sort) {
      items.forEach((item, i) => {
        if (!passes(facts[i]!)) return;
        const s = satisfaction({ constraints: [], orders: u.orders }, facts[i]!);
        out.push({ item, fit: s.fit, sortKey: s.sortKey, text: 0 });
      });
      return out;
    }
    // A superlative orders by its number first: only items whose number can reach the first
    // `numResults` (and the named ones) need their fit, which only breaks ties among them.
    const passingFacts: FactMap[] = [];
    items.forEach((item, i) => {
      if (!passes(facts[i]!)) return;
      const raw = targetValue(sort.target, facts[i]!);
      out.push({
        item,
        fit: 0,
        sortKey: raw === undefined ? undefined : sort.direction === 'desc' ? raw : -raw,
        text: 0,
      });
      passingFacts.push(facts[i]!);
    });
    const keys = out.map((c) => c.sortKey).filter((k): k is number => k !== undefined);
    const need = numResults + named.size;
    const floor = keys.length >= need ? keys.sort((a, b) => b - a)[need - 1]! : undefined;
    const top: Candidate[] = [];
    const rest: Candidate[] = [];
    out.forEach((c, i) => {
      if (floor === undefined || named.has(c.item.url) || (c.sortKey !== undefined && c.sortKey >= floor)) {
        c.fit = satisfaction({ constraints: [], orders: u.orders }, passingFacts[i]!).fit;
        top.push(c);
      } else rest.push(c);
    });
    // the rest sorts after every item of `top`: ranked (by words too) only among themselves
    contenders = floor === undefined ? undefined : top;
    return floor === undefined ? out : [...top, ...rest];
  };
  /** The candidates that can reach the first results, when a superlative leaves the others behind. */
  let contenders: Candidate[] | undefined;
  let passing = filter();
  while (passing.length === 0 && constraints.length > 0) {
    const drop = weakest(constraints)!;
    constraints = constraints.filter((k) => k !== drop);
    relaxed.push(drop.text);
    passing = filter();
  }
  // without free words the question's own words still order what is left a little
  const rankText = u.freeText.trim() || u.text;
  const ranked = contenders ?? passing;
  if (rankText && ranked.length > 1) {
    const allowed = new Set(ranked.map((c) => c.item.url));
    // the question's own words only break ties: the keyword half is enough for that
    applyTextRanks(
      ranked,
      await src.textRanks(rankText, allowed, Math.max(numResults * 4, 200), !u.freeText.trim()),
    );
  }
  return {
    items: rankCandidates(ranked, u, numResults),
    outcome: { matched: passing.length, relaxed, orders },
  };
}
