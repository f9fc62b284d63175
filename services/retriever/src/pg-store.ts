import pg from 'pg';
import type {
  Constraint,
  NameMatch,
  RetrievedItem,
  SiteInfo,
  SiteProfile,
  StoredItem,
  Target,
  Understanding,
} from '@askbus/contracts';
import {
  compactFacts,
  extractFacts,
  FACTS_VERSION,
  factsFromCompact,
  hasStructure,
  SiteCatalog,
} from '@askbus/understand';
import { LocalEmbeddings, Vocabulary, type EmbeddingProvider } from '@askbus/embeddings';
import { flattenItem, parseQuery, STOPWORDS, tokenize } from '@askbus/search-core';
import { embeddingText, StoreInputError, type SearchParams, type SearchResult } from './index-store';
import { applyTextRanks, candidateOf, rankCandidates, weakest, type Candidate } from './structured-search';
import { reciprocalRankFusion } from './vectors';
import { heldElsewhere, type RefusedItem, type UpsertOptions, type UpsertResult } from './cross-site';

export interface PgStoreOptions {
  /** postgres://… (DATABASE_URL); or a pool of your own. */
  connectionString?: string;
  pool?: pg.Pool;
  /** Table name (default askbus_items). */
  table?: string;
  /** As IndexStore's: default the local WordNet model with this store's vocabulary. */
  embedder?: EmbeddingProvider | ((vocabulary: Vocabulary) => EmbeddingProvider);
  /** Connections in the pool it creates (default 4). */
  maxConnections?: number;
  /**
   * false: searches test every row's facts for ranges and sort over them, as before the numbers
   * table (which is still kept); for comparing the two side by side (default true).
   */
  searchByNumbers?: boolean;
}

const RRF_K = 60;
const KEYWORD_WEIGHT = 1;
const VECTOR_WEIGHT = 0.7;
const MIN_VECTOR_SCORE = 0.08;
/** Rows a multi-row INSERT carries (12 parameters a row; PostgreSQL takes at most 65,535). */
const ROWS_PER_INSERT = 500;
/**
 * A write's INSERTs: the first of FIRST_ROWS rows, each next one WRITE_GROWTH times the one
 * before (up to ROWS_PER_INSERT), and the last LAST_ROWS rows apart. A load is a pipeline of two
 * workers, this process and the database: this process analyses and embeds a batch (about 0.12
 * ms a row) while the database writes the one before (about 0.3 ms a row in PGlite), so a batch
 * at most ~2.5 times the one before is ready when the database is, and the database only waits
 * for the first one. With a small first batch and then full ones (the earlier scheme: 73, 431
 * and 73 rows for a loader's upsert of 577) the database idled while the 431 were prepared,
 * about a ninth of a load (a statement in flight 89% of its time). The last rows apart keep
 * short what follows their commit (their vocabulary and catalog, not overlapped with the
 * database).
 */
const FIRST_ROWS = 20;
const WRITE_GROWTH = 2;
const LAST_ROWS = 40;

/**
 * The [from, to) bounds of a write's INSERTs over `n` rows (each non-empty, in order, covering
 * 0..n, none over `full`): FIRST_ROWS, then each WRITE_GROWTH times the one before, the last
 * LAST_ROWS apart when there are more than twice as many.
 */
export function writeBounds(n: number, full = ROWS_PER_INSERT): [number, number][] {
  const out: [number, number][] = [];
  const body = n > 2 * LAST_ROWS ? n - LAST_ROWS : n;
  let from = 0;
  for (let size = FIRST_ROWS; from < body; size = Math.min(full, size * WRITE_GROWTH)) {
    const to = Math.min(body, from + size);
    out.push([from, to]);
    from = to;
  }
  if (from < n) out.push([from, n]);
  return out;
}

/**
 * A load of at least this many rows (one upsert, or the upserts since the indexes were last
 * whole: `loadRows`), and at least a sixth of the table's before it, drops the HNSW and
 * GIN indexes and has them built after the load (see `write`): pgvector (in PGlite) builds an
 * index about eight times faster a row than it inserts into one (0.55 against 4.3 ms a row), so
 * rebuilding the N + M rows costs less than inserting M once M > N / 7; GIN upkeep costs about
 * 0.37 ms a row against 0.02 ms a row to build (30k rows, PGlite), so it follows the same rule.
 */
const BULK_REBUILD_MIN = 1_000;
/**
 * Into an empty table a load of this many rows already defers the indexes: building them over
 * its rows costs less than keeping them up to date while they are inserted, from the first
 * upsert (a loader's first upsert of ~580 rows took 1.3 s with the indexes kept, 0.43 s without).
 */
const FIRST_LOAD_MIN = 100;
/**
 * Candidates an HNSW scan keeps before pgvector 0.8 (hnsw.ef_search; the default of 40 would cap
 * a LIMIT 100). From 0.8 iterative scans fill the LIMIT with the default, which also keeps the
 * planner's cost of the index low enough that it takes it from a few thousand rows on (with 100
 * it scans the demo sites' 3,606 rows instead).
 */
const EF_SEARCH = 100;
/**
 * The HNSW graph's links a node (m) and candidates kept while it is built (ef_construction),
 * below pgvector's defaults (16, 64): at 30k synthetic items the build took 0.62 of the CPU
 * time (PGlite, one build 18 against 29 s of CPU in a process of its own) with the same top-10
 * overlap with the embedded index (77%, bench:retrieve); side by side in bench:retrieve's server
 * (2 rounds each, 30k) `persist` took 17.0-17.9 s against 25.6-30.1 s. Lower still was little cheaper (m 12 /
 * ef_construction 32: 0.54; m 8 / 40: 0.47), and ef_construction 32 with m 16 had cost
 * "extraterrestrial invasion" 7 of the embedded index's top 10. A higher hnsw.ef_search at query
 * time is no help here: with 100 the planner prices the index above a scan of a few thousand
 * rows and leaves it (see EF_SEARCH).
 */
const HNSW_M = 12;
const HNSW_EF_CONSTRUCTION = 48;
/**
 * A query word whose stem is in at least this share of the searched sites' rows (estimated from
 * ANALYZE's most common elements of `doc`) is left out of the keyword side while rarer words
 * remain: as BM25's idf makes it in the embedded index (log 1.1 against ~6 for a rare word),
 * it adds next to nothing to a rank, and ranking every row it matches (every movie for
 * "movies") costs a scan of the site.
 */
const COMMON_WORD_SHARE = 0.25;

/**
 * A vector in pgvector's binary wire format (int16 dimensions, int16 unused, float4 each, big-endian):
 * a quarter of the bytes of its text form, and no float printing or parsing.
 */
export function vectorBinary(v: readonly number[]): Buffer {
  const buf = Buffer.allocUnsafe(4 + 4 * v.length);
  buf.writeInt16BE(v.length, 0);
  buf.writeInt16BE(0, 2);
  for (let i = 0; i < v.length; i++) {
    const x = v[i]!;
    buf.writeFloatBE(Number.isFinite(x) ? x : 0, 4 + 4 * i);
  }
  return buf;
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

/**
 * The `terms` of a row, from its facts: for every string fact `path=value` (lowercased) and
 * `path word` for each word of the value as a value constraint normalizes it — so a GIN index
 * on them finds the few rows a value constraint can match (see SqlBuilder.constraint), which it
 * then tests exactly. Made here, not in SQL (where it cost about a millisecond a row in PGlite):
 * only for ASCII values, whose lowercase and words (runs of [:alnum:]) are the same in
 * JavaScript and PostgreSQL; a path with any other value gets `path*`, which every constraint on
 * the path accepts, so such rows are always tested exactly.
 */
export function termsOf(facts: Readonly<Record<string, readonly (number | string)[]>>): string[] {
  const out = new Set<string>();
  for (const [path, values] of Object.entries(facts)) {
    for (const v of values) {
      if (typeof v !== 'string') continue;
      if (!isAscii(v)) {
        out.add(`${path}*`);
        continue;
      }
      const lower = v.toLowerCase();
      out.add(`${path}=${lower}`);
      for (const w of lower.split(/[^a-z0-9]+/)) if (w) out.add(`${path} ${w}`);
    }
  }
  return [...out];
}

/** A statement and its parameters. */
export interface Statement {
  text: string;
  values: unknown[];
}

interface ItemRow {
  url: string;
  name: string;
  site: string;
  type: string;
  item: Record<string, unknown>;
}

const toItem = (r: ItemRow): StoredItem => ({
  url: r.url,
  name: r.name,
  site: r.site,
  '@type': r.type,
  schema_object: r.item,
});

/**
 * The numbers of rows' facts, a row each (url, site, path, pos, value): what the numbers table
 * holds (`source` names rows with url, site and facts). `pos` is the number's place in its path's
 * array, so pos 0 is the path's first value (SqlBuilder's `first`).
 */
const numbersOf = (source: string): string =>
  `SELECT r.url, r.site, f.key, e.ord - 1, (e.v #>> '{}')::float8
     FROM ${source} r, jsonb_each(r.facts) f,
          jsonb_array_elements(CASE WHEN jsonb_typeof(f.value) = 'array' THEN f.value ELSE jsonb_build_array(f.value) END) WITH ORDINALITY e(v, ord)
    WHERE jsonb_typeof(e.v) = 'number'`;

/** A derived quantity of two numbers (NULL where a division by zero would be). */
function derivedOf(op: 'sum' | 'difference' | 'gap' | 'ratio', a: string, b: string): string {
  if (op === 'sum') return `(${a} + ${b})`;
  if (op === 'difference') return `(${a} - ${b})`;
  if (op === 'gap') return `abs(${a} - ${b})`;
  return `(${a} / NULLIF(${b}, 0))`;
}

type RangeConstraint = Extract<Constraint, { kind: 'range' }>;
/** A range on a path (not a derived quantity). */
type RangeOnPath = RangeConstraint & { target: { path: string } };
/** Neither bound infinite (a bound left out is open). */
const hasFiniteBounds = (k: RangeConstraint): boolean =>
  [k.min, k.max].every((b) => b === undefined || Number.isFinite(b));

/**
 * Constraints and orders of an understanding as SQL over the `facts` jsonb column (path → an
 * array of numbers or strings), with their values as parameters.
 */
export class SqlBuilder {
  /**
   * `numbers`: the table of each row's numbers (PgStore's numbers table), when there is one: see
   * `conditions`.
   */
  constructor(
    readonly params: unknown[],
    readonly numbers?: string,
  ) {}

  param(v: unknown): string {
    this.params.push(v);
    return `$${this.params.length}`;
  }

  /**
   * While numbersTop builds its order: each path's first number as the `value` of a numbers row
   * joined for it (path → alias), instead of read from the facts.
   */
  private firstNumbers: Map<string, string> | undefined;

  /** The first number of a path (as IndexStore's targetValue), or NULL. */
  private first(path: string): string {
    if (this.firstNumbers) {
      const alias = this.firstNumbers.get(path) ?? `x${this.firstNumbers.size}`;
      this.firstNumbers.set(path, alias);
      return `${alias}.value`;
    }
    const p = this.param(path);
    return `(CASE WHEN jsonb_typeof(facts->${p}->0) = 'number' THEN (facts->${p}->>0)::float8 END)`;
  }

  target(t: Target): string {
    if ('path' in t) return this.first(t.path);
    return derivedOf(t.derived.op, this.first(t.derived.a), this.first(t.derived.b));
  }

  /**
   * The constraints as conditions. With a numbers table, and no constraint that the terms' GIN
   * index finds (`findsByTerms`, which then narrows the rows first and the ranges test only
   * those), the ranges on paths with finite bounds become one `url IN (…)` of the URLs each
   * range finds in the numbers' (path, value) index, intersected: a few index scans, where
   * testing the facts of every row of the site took 0.5-0.7 s at 300k. As separate `IN`s the
   * planner joined two ranges' URL lists by a nested loop (819 × 720 comparisons at 30k).
   */
  conditions(ks: readonly Constraint[]): string[] {
    const byNumbers = (k: Constraint): k is RangeOnPath =>
      k.kind === 'range' &&
      'path' in k.target &&
      hasFiniteBounds(k) &&
      (k.min !== undefined || k.max !== undefined);
    const numbered = this.numbers && !ks.some((k) => this.findsByTerms(k)) ? ks.filter(byNumbers) : [];
    const taken = new Set<Constraint>(numbered);
    const out = ks.filter((k) => !taken.has(k)).map((k) => this.constraint(k));
    if (numbered.length) {
      const sets = numbered.map(
        (k) =>
          `SELECT n.url FROM ${this.numbers} n WHERE n.path = ${this.param(k.target.path)} AND ${this.bounds(k, 'n.value')}`,
      );
      out.push(`url IN (${sets.join(' INTERSECT ')})`);
    }
    return out;
  }

  /**
   * The top of the matching rows (URL, order, count of all of them; `depth` rows) from the
   * numbers table alone, when every constraint is a range on numbers and the question orders by
   * numbers (a superlative or preferences); undefined otherwise. Each range finds its URLs in the
   * (path, value) index (a derived quantity: the first numbers of its two paths, joined by URL),
   * their intersection is the match, and the order's paths are joined to it by URL: the rows
   * themselves are never read, where testing and ordering the facts of every row of the sites
   * took about a second at 300k ("movies that lost money"). Parameters: $1 the sites and $2 the
   * types, which the caller leaves NULL when every row of the sites has one of them.
   */
  numbersTop(ks: readonly Constraint[], u: Understanding, depth: string, table: string): string | undefined {
    const numbers = this.numbers;
    if (!numbers || u.orders.length === 0) return undefined;
    const ranges: RangeConstraint[] = [];
    for (const k of ks) {
      if (k.kind !== 'range' || !hasFiniteBounds(k)) return undefined;
      // a derived quantity without bounds tests nothing (TRUE in `constraint`)
      if ('derived' in k.target && k.min === undefined && k.max === undefined) continue;
      ranges.push(k);
    }
    if (ranges.length === 0) return undefined;
    const inSites = (n: string): string => `($1::text[] IS NULL OR ${n}.site = ANY($1))`;
    // path → the alias of its first number's row; the derived ranges' first (both numbers must
    // be there: inner joins) and the order's after them (left joins), each path joined once
    const paths = new Map<string, string>();
    const derivedTests: string[] = [];
    let order: string;
    let required = 0;
    this.firstNumbers = paths;
    try {
      for (const k of ranges)
        if ('derived' in k.target) derivedTests.push(this.bounds(k, this.target(k.target)));
      required = paths.size;
      order = this.orderExpression(u)!;
    } finally {
      this.firstNumbers = undefined;
    }
    // any number of a path within bounds (a row may have several: INTERSECT, or DISTINCT alone, makes them one)
    const onPaths = ranges
      .filter((k): k is RangeOnPath => 'path' in k.target)
      .map(
        (k) =>
          `SELECT n.url FROM ${numbers} n WHERE n.path = ${this.param(k.target.path)} AND ${inSites('n')} AND ${this.bounds(k, 'n.value')}`,
      );
    const joined = [...paths].map(([path, x], i) => ({ path, x, inner: i < required }));
    const key = required > 0 ? 'x0.url' : 'c.url';
    const from =
      required > 0
        ? `${numbers} x0`
        : `(${onPaths.length > 1 ? onPaths.join(' INTERSECT ') : `SELECT DISTINCT url FROM (${onPaths[0]!}) s`}) c`;
    const joins = joined
      .filter((j) => j.x !== 'x0' || required === 0)
      .map(
        ({ path, x, inner }) =>
          `${inner ? 'JOIN' : 'LEFT JOIN'} ${numbers} ${x} ON ${x}.url = ${key} AND ${x}.path = ${this.param(path)} AND ${x}.pos = 0`,
      );
    const where = [
      ...(required > 0
        ? [`x0.path = ${this.param(joined[0]!.path)}`, 'x0.pos = 0', inSites('x0'), ...derivedTests]
        : []),
      ...(required > 0 && onPaths.length > 0 ? [`x0.url IN (${onPaths.join(' INTERSECT ')})`] : []),
      `($2::text[] IS NULL OR EXISTS (SELECT 1 FROM ${table} m WHERE m.url = ${key} AND m.type = ANY($2)))`,
    ];
    return `SELECT ${key}, ${order} AS o, count(*) OVER () AS matched
              FROM ${from} ${joins.join(' ')}
             WHERE ${where.join(' AND ')}
             ORDER BY o DESC NULLS LAST, ${key} LIMIT ${depth}`;
  }

  /** `v` within a range's bounds, its bounds as parameters (TRUE when it has none). */
  private bounds(k: RangeConstraint, v: string): string {
    const out: string[] = [];
    if (k.min !== undefined) out.push(`${v} ${k.minInclusive ? '>=' : '>'} ${this.param(k.min)}`);
    if (k.max !== undefined) out.push(`${v} ${k.maxInclusive ? '<=' : '<'} ${this.param(k.max)}`);
    return out.length ? out.join(' AND ') : 'TRUE';
  }

  /** A value constraint whose rows the GIN index of `terms` finds (see `constraint`). */
  findsByTerms(k: Constraint): boolean {
    if (k.kind === 'range' || k.negated) return false;
    const words = /^[\p{L}\p{N}]+$/u;
    return k.contains.every((seq) => seq.every((w) => words.test(w)));
  }

  /** A constraint as a condition; `indexed` false leaves out the terms test (for tests). */
  constraint(k: Constraint, indexed = true): string {
    if (k.kind === 'range') {
      const bounds = (v: string): string => this.bounds(k, v);
      const finite = hasFiniteBounds(k);
      // As one jsonpath over the facts (keys quoted as JSON strings, the bounds its variables):
      // less than half the cost of unnesting the array (jsonb_array_elements) at every row of a
      // site, and about half that of the SQL over a derived quantity's first numbers ("movies
      // that lost money" at 30k). What is not a number (a string, a missing path, a division by
      // zero) fails its test, silently, as NULL did.
      const tests = (x: string): string[] => [
        ...(k.min === undefined ? [] : [`${x} ${k.minInclusive ? '>=' : '>'} $min`]),
        ...(k.max === undefined ? [] : [`${x} ${k.maxInclusive ? '<=' : '<'} $max`]),
      ];
      const jsonpath = (path: string): string =>
        `jsonb_path_exists(facts, ${this.param(path)}::jsonpath, ${this.param(JSON.stringify({ min: k.min ?? null, max: k.max ?? null }))}::jsonb, true)`;
      if ('path' in k.target) {
        // any number of the path within the bounds
        if (finite)
          return jsonpath(
            `$.${JSON.stringify(k.target.path)}[*] ? (${['@.type() == "number"', ...tests('@')].join(' && ')})`,
          );
        const p = this.param(k.target.path);
        return `EXISTS (SELECT 1 FROM jsonb_array_elements(COALESCE(facts->${p}, '[]'::jsonb)) e WHERE jsonb_typeof(e) = 'number' AND ${bounds(`(e #>> '{}')::float8`)})`;
      }
      if (k.min === undefined && k.max === undefined) return 'TRUE';
      if (finite) {
        // the derived quantity of the two paths' first numbers within the bounds
        const { a, b, op } = k.target.derived;
        const [x, y] = [a, b].map((path) => `@.${JSON.stringify(path)}[0]`);
        const value =
          op === 'sum'
            ? `(${x} + ${y})`
            : op === 'difference'
              ? `(${x} - ${y})`
              : op === 'gap'
                ? `(${x} - ${y}).abs()`
                : `(${x} / ${y})`;
        return jsonpath(`$ ? (${tests(value).join(' && ')})`);
      }
      return `COALESCE(${bounds(this.target(k.target))}, FALSE)`;
    }
    const p = this.param(k.path);
    const values = this.param(k.values.map((v) => v.toLowerCase()));
    const likes = this.param(k.contains.map((seq) => `% ${seq.join(' ')} %`));
    const hit = `EXISTS (SELECT 1 FROM jsonb_array_elements(COALESCE(facts->${p}, '[]'::jsonb)) e WHERE jsonb_typeof(e) = 'string' AND (lower(e #>> '{}') = ANY(${values}::text[]) OR ' ' || trim(regexp_replace(lower(e #>> '{}'), '[^[:alnum:]]+', ' ', 'g')) || ' ' LIKE ANY(${likes}::text[])))`;
    if (k.negated) return `NOT ${hit}`;
    if (!indexed) return hit;
    // A row it matches has `path=value` among its terms, or every word of a sequence as
    // `path word` (LIKE '% w1 w2 %' over the normalized value: its words, in order); the
    // indexed test goes first and the exact one checks what it finds. A sequence with other
    // characters than letters and digits (LIKE's _ and %, say) is only tested exactly.
    if (!this.findsByTerms(k)) return hit;
    const found = [
      `terms && ${this.param([`${k.path}*`, ...k.values.map((v) => `${k.path}=${v.toLowerCase()}`)])}::text[]`,
      ...k.contains.map((seq) => `terms @> ${this.param(seq.map((w) => `${k.path} ${w}`))}::text[]`),
    ];
    return `((${found.join(' OR ')}) AND ${hit})`;
  }

  /** What the rows come back in: the superlative, else the preferences (scaled to their ranges). */
  orderExpression(u: Understanding): string | undefined {
    const sort = u.orders.find((o) => o.strength === 'sort');
    if (sort) return sort.direction === 'desc' ? this.target(sort.target) : `-${this.target(sort.target)}`;
    if (u.orders.length === 0) return undefined;
    const parts = u.orders.map((o) => {
      const q = o.quantiles;
      const lo = q?.[0] ?? 0;
      const hi = q?.[q.length - 1] ?? 1;
      const scaled = `((${this.target(o.target)} - ${this.param(lo)}) / ${this.param(hi - lo || 1)})`;
      return `COALESCE(${o.direction === 'desc' ? scaled : `(1 - ${scaled})`}, 0)`;
    });
    return `(${parts.join(' + ')})`;
  }
}

/**
 * The retriever's items in PostgreSQL with pgvector: one row per item (url primary key, site,
 * type, the whole item as jsonb), a weighted tsvector for the keyword side (name A, people and
 * categories B, other text C; `english` configuration) with a GIN index, and an embedding
 * column with an HNSW index (cosine) for the vector side; both merged by reciprocal-rank
 * fusion as in IndexStore (types a query names come first; IndexStore's numeric intent
 * boosts are not ported). Every write is committed at once; a bulk load builds its indexes
 * after its rows, at `persist` or the next search.
 */
export class PgStore {
  readonly vocabulary = new Vocabulary();
  readonly embedder: EmbeddingProvider;
  readonly openedFrom = 'database' as const;
  private readonly pool: pg.Pool;
  private readonly ownPool: boolean;
  private readonly table: string;
  /**
   * Every number of every row's facts, a row each, indexed by (path, value): a range on a path
   * finds its rows there, and a sort walks the index, instead of reading the facts of every row
   * of a site (0.5-0.9 s at 300k). Writes keep it with the rows; a bulk load fills it again with
   * the indexes it deferred, and its (path, value) index exists only once it is complete.
   */
  private readonly numbers: string;
  private readonly searchByNumbers: boolean;
  /** Each site's profile and the names index, learned from the rows on open and kept by this store's writes. */
  readonly catalog = new SiteCatalog(false);
  /** pgvector 0.8 or later: filtered HNSW scans go on until their LIMIT is filled. */
  private iterativeScans = false;
  /** A bulk load dropped the GIN and HNSW indexes: buildDeferredIndexes builds them. */
  private indexesDeferred = false;
  /** The build of buildDeferredIndexes under way. */
  private building: Promise<void> | undefined;
  /**
   * Rows written since the indexes were last whole (the last `persist` or index build): a load
   * that comes as many upserts (`askbus load` sends batches of at most 700 KB, a few hundred
   * items, and `persist` with the last) counts as one bulk load, not as many small writes.
   */
  private loadRows = 0;
  /**
   * While a bulk load's indexes are deferred: the table's rows, counted when they were dropped,
   * plus the rows this store has added since (the `total` of an upsert; a count(*) of a large
   * table for each of a load's hundreds of batches cost more than its inserts).
   */
  private deferredRows: number | undefined;
  /** Each stem's share of the rows (ANALYZE's most common elements of `doc`), until the next ANALYZE. */
  private stemShares: Promise<{ shares: Map<string, number>; rows: number }> | undefined;
  /** Each query word's stems (`english`), as PostgreSQL makes them. */
  private readonly stems = new Map<string, string[]>();
  /** Writes begun and ended by this store (upsert, deleteSite): what `memo` entries were made at. */
  private writes = 0;
  /**
   * What a read of whole sites made (a derived quantity's quantiles, a count of rows), by what it
   * read, while `writes` is what it was made at. Writes by other processes are not seen (as the
   * catalog's profiles do not see them).
   */
  private readonly memo = new Map<string, { writes: number; result: Promise<unknown> }>();
  /** Connections whose HNSW settings are made (see onSearchConnection). */
  private readonly searchReady = new WeakSet<pg.PoolClient>();

  private constructor(opts: PgStoreOptions) {
    this.table = opts.table ?? 'askbus_items';
    if (!/^[a-z_][a-z0-9_]*$/.test(this.table)) throw new Error(`bad table name "${this.table}"`);
    this.numbers = `${this.table}_numbers`;
    this.searchByNumbers = opts.searchByNumbers ?? true;
    this.ownPool = !opts.pool;
    this.pool =
      opts.pool ?? new pg.Pool({ connectionString: opts.connectionString, max: opts.maxConnections ?? 4 });
    const e = opts.embedder;
    this.embedder =
      e === undefined
        ? new LocalEmbeddings({ vocabulary: this.vocabulary })
        : typeof e === 'function'
          ? e(this.vocabulary)
          : e;
  }

  /** Connects, creates the extension, table and indexes when missing, and learns the vocabulary. */
  static async open(opts: PgStoreOptions): Promise<PgStore> {
    const store = new PgStore(opts);
    try {
      await store.init();
    } catch (err) {
      await store.close();
      throw err;
    }
    return store;
  }

  private async init(): Promise<void> {
    const t = this.table;
    const d = this.embedder.dimensions;
    await this.pool.query('CREATE EXTENSION IF NOT EXISTS vector');
    const ext = await this.pool.query<{ v: string }>(
      `SELECT extversion AS v FROM pg_extension WHERE extname = 'vector'`,
    );
    const [major = 0, minor = 0] = (ext.rows[0]?.v ?? '0').split('.').map(Number);
    this.iterativeScans = major > 0 || minor >= 8;
    await this.pool.query(`CREATE TABLE IF NOT EXISTS ${t} (
      url text PRIMARY KEY,
      site text NOT NULL,
      type text NOT NULL,
      name text NOT NULL,
      item jsonb NOT NULL,
      doc tsvector NOT NULL,
      embedding vector(${d}),
      embedder text
    )`);
    // each item's facts (path → numbers or strings) for constraints; added to older tables
    await this.pool.query(`ALTER TABLE ${t} ADD COLUMN IF NOT EXISTS facts jsonb`);
    // facts uncompressed (out of line when a row is long): a constraint reads them in every row
    // of a site, several times a row, and each read would decompress them again (twice as slow)
    await this.pool.query(`ALTER TABLE ${t} ALTER COLUMN facts SET STORAGE EXTERNAL`);
    // the words and values of the string facts, for value constraints (termsOf); added to older tables
    await this.pool.query(`ALTER TABLE ${t} ADD COLUMN IF NOT EXISTS terms text[]`);
    // facts made by another version of the extractor are made again, below, with the rows that
    // have none; the version is noted once they are
    await this.pool.query(`CREATE TABLE IF NOT EXISTS ${t}_meta (key text PRIMARY KEY, value text NOT NULL)`);
    const noted = await this.pool.query<{ value: string }>(`SELECT value FROM ${t}_meta WHERE key = 'facts'`);
    const factsStale = noted.rows[0]?.value !== String(FACTS_VERSION);
    if (factsStale)
      await this.pool.query(`UPDATE ${t} SET facts = NULL, terms = NULL WHERE facts IS NOT NULL`);
    await this.pool.query(`CREATE INDEX IF NOT EXISTS ${t}_site ON ${t} (site, type)`);
    await this.pool.query(`CREATE TABLE IF NOT EXISTS ${this.numbers} (
      url text NOT NULL,
      site text NOT NULL,
      path text NOT NULL,
      pos int NOT NULL,
      value float8 NOT NULL
    )`);
    await this.createIndexes();
    const cols = await this.pool.query<{ dims: number }>(
      `SELECT atttypmod AS dims FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'embedding'`,
      [t],
    );
    const dims = cols.rows[0]?.dims;
    if (dims !== undefined && dims > 0 && dims !== d) {
      throw new Error(`${t}.embedding has ${dims} dimensions, the embedder ${this.embedder.id} gives ${d}`);
    }
    // the local model expands queries to the data's words: learn them from what is stored
    const res = await this.pool.query<{ item: StoredItem }>(
      `SELECT jsonb_build_object('url', url, 'name', name, 'site', site, '@type', type, 'schema_object', item) AS item FROM ${t}`,
    );
    for (const { item } of res.rows) {
      const e = embeddingText(item);
      this.vocabulary.observe(e.text, e.categories);
      this.catalog.add(item);
    }
    // rows written before the facts column get theirs
    const missing = await this.pool.query<{ url: string; item: Record<string, unknown> }>(
      `SELECT url, item FROM ${t} WHERE facts IS NULL`,
    );
    for (const row of missing.rows) {
      await this.pool.query(`UPDATE ${t} SET facts = $2::jsonb, terms = NULL WHERE url = $1`, [
        row.url,
        JSON.stringify(compactFacts(extractFacts(row.item))),
      ]);
    }
    // rows written before the terms column (or whose facts were just made) get theirs
    const termless = await this.pool.query<{ url: string; facts: Record<string, (number | string)[]> }>(
      `SELECT url, facts FROM ${t} WHERE terms IS NULL`,
    );
    for (const row of termless.rows) {
      await this.pool.query(`UPDATE ${t} SET terms = $2 WHERE url = $1`, [row.url, termsOf(row.facts ?? {})]);
    }
    // numbers made before those facts: made again from every row
    if (missing.rows.length) {
      await this.pool.query(`DROP INDEX IF EXISTS ${this.numbers}_path`);
      await this.createIndexes();
    }
    if (factsStale)
      await this.pool.query(
        `INSERT INTO ${t}_meta (key, value) VALUES ('facts', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
        [String(FACTS_VERSION)],
      );
    // items embedded by another model (or not at all) are embedded again
    const stale = await this.pool.query<{ item: StoredItem }>(
      `SELECT jsonb_build_object('url', url, 'name', name, 'site', site, '@type', type, 'schema_object', item) AS item FROM ${t} WHERE embedder IS DISTINCT FROM $1`,
      [this.embedder.id],
    );
    if (stale.rows.length) await this.write(stale.rows.map((r) => r.item));
    await this.buildDeferredIndexes();
  }

  async close(): Promise<void> {
    if (this.ownPool) await this.pool.end();
  }

  async count(): Promise<number> {
    const r = await this.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${this.table}`);
    return Number(r.rows[0]?.n ?? 0);
  }

  async get(url: string): Promise<StoredItem | undefined> {
    const r = await this.pool.query<{
      url: string;
      name: string;
      site: string;
      type: string;
      item: Record<string, unknown>;
    }>(`SELECT url, name, site, type, item FROM ${this.table} WHERE url = $1`, [url]);
    const row = r.rows[0];
    return (
      row && { url: row.url, name: row.name, site: row.site, '@type': row.type, schema_object: row.item }
    );
  }

  async upsert(site: string, items: readonly StoredItem[], opts: UpsertOptions = {}): Promise<UpsertResult> {
    const wrong = items.find((i) => i.site !== site);
    if (wrong) throw new StoreInputError(`item ${wrong.url} belongs to site "${wrong.site}", not "${site}"`);
    let latest = [...new Map(items.map((i) => [i.url, i])).values()];
    let refused: RefusedItem[] = [];
    // the rows the items replace, in one read (one round trip a batch of a load): those of
    // another site stay there unless the caller moves them (H2, issue 19: cross-site.ts); the
    // replaced ones leave the vocabulary first
    let replaced = 0;
    if (latest.length) {
      const old = await this.pool.query<{
        url: string;
        name: string;
        site: string;
        type: string;
        item: Record<string, unknown>;
      }>(`SELECT url, name, site, type, item FROM ${this.table} WHERE url = ANY($1)`, [
        latest.map((i) => i.url),
      ]);
      let rows = old.rows;
      if (!opts.move) {
        const holder = new Map(rows.filter((r) => r.site !== site).map((r) => [r.url, r.site]));
        refused = heldElsewhere(latest, site, (url) => holder.get(url));
        if (refused.length) {
          latest = latest.filter((i) => !holder.has(i.url));
          rows = rows.filter((r) => !holder.has(r.url));
        }
      }
      replaced = rows.length;
      for (const r of rows) {
        const before = { url: r.url, name: r.name, site: r.site, '@type': r.type, schema_object: r.item };
        const e = embeddingText(before);
        this.vocabulary.forget(e.text, e.categories);
        this.catalog.remove(before);
      }
    }
    // each item's text made when its batch is embedded (not all before the first batch is sent)
    const texts: ReturnType<typeof embeddingText>[] = [];
    const textOf = (n: number) => (texts[n] ??= embeddingText(latest[n]!));
    // each batch joins the vocabulary and the catalog once its rows are committed, while the
    // database writes the next one
    this.writes++;
    try {
      await this.write(latest, textOf, (from, to) => {
        for (let n = from; n < to; n++) {
          const text = textOf(n);
          this.vocabulary.observe(text.text, text.categories);
          this.catalog.add(latest[n]!);
        }
      });
    } catch (e) {
      // some of its statements may have committed: the next total is counted
      this.deferredRows = undefined;
      throw e;
    } finally {
      this.writes++;
    }
    // in a bulk load, the count kept (rows by other writers meanwhile are seen at its end)
    const total =
      this.deferredRows !== undefined ? (this.deferredRows += latest.length - replaced) : await this.count();
    return { upserted: latest.length, total, ...(refused.length ? { refused } : {}) };
  }

  /**
   * Embeds and writes rows (insert or replace by URL): multi-row INSERTs of growing size up to
   * ROWS_PER_INSERT rows (`writeBounds`), each batch embedded in one call, vectors in binary, and the next batch prepared while the
   * previous one is being written. A bulk load (≥ BULK_REBUILD_MIN rows, and ≥ a sixth of the
   * table's, counted over the upserts since the last `persist`; into an empty table ≥
   * FIRST_LOAD_MIN rows) drops the GIN and HNSW indexes and leaves them to `buildDeferredIndexes` — at
   * `persist` (the last batch of a load), before the next search, or at the next `open` — so a
   * load in several batches inserts every row without index upkeep and builds each index once.
   * `written(from, to)` is told of each batch (items[from..to)) once it is committed, while the
   * next one is being written.
   */
  private async write(
    items: readonly StoredItem[],
    textOf: (n: number) => { text: string } = (n) => embeddingText(items[n]!),
    written: (from: number, to: number) => void = () => undefined,
  ): Promise<void> {
    if (items.length === 0) return;
    // (counted only while the indexes are whole: a deferred load's batches need no count of a large table)
    const before = this.indexesDeferred ? 0 : await this.count();
    // the load so far with this write, against the rows there were before the load
    const loading = this.loadRows + items.length;
    const bulkLoad =
      before - this.loadRows === 0
        ? loading >= FIRST_LOAD_MIN
        : loading >= BULK_REBUILD_MIN && loading * 6 >= before - this.loadRows;
    if (!this.indexesDeferred && bulkLoad) {
      await this.building;
      this.indexesDeferred = true;
      this.deferredRows = before;
      // the numbers are made again from every row with them (createIndexes)
      await this.pool.query(
        `DROP INDEX IF EXISTS ${this.table}_embedding, ${this.table}_doc, ${this.table}_terms, ${this.numbers}_path, ${this.numbers}_url`,
      );
    }
    // one connection for the load; a bulk one commits without waiting for its WAL to be flushed
    // (a crash may lose its last statements, never leave a half one): fewer waits on a server
    const client = await this.pool.connect();
    const bulk = this.indexesDeferred;
    try {
      if (bulk) await client.query('SET synchronous_commit = off');
      let pending: Promise<unknown> | undefined;
      let previous: [number, number] | undefined;
      for (const [from, to] of writeBounds(items.length)) {
        const batch = items.slice(from, to);
        const texts: string[] = [];
        for (let n = from; n < to; n++) texts.push(textOf(n).text);
        const vectors = await this.embedder.embed(texts, 'document');
        const statement = this.insertStatement(batch, vectors, !this.indexesDeferred);
        await pending;
        pending = client.query(statement);
        // awaited on the next turn or after the loop; this only keeps a failure from going unhandled meanwhile
        pending.catch(() => undefined);
        if (previous) written(...previous);
        previous = [from, to];
      }
      await pending;
      if (previous) written(...previous);
      this.loadRows += items.length;
    } finally {
      if (bulk) await client.query('RESET synchronous_commit').catch(() => undefined);
      client.release();
    }
    // As autovacuum would, sooner (PGlite has none): fresh statistics after a write of a tenth of
    // the table or more, so the planner sees how few rows a site or a word has (after a bulk
    // load buildDeferredIndexes does it).
    if (!this.indexesDeferred && items.length * 10 >= before) {
      await this.pool.query(`ANALYZE ${this.table}, ${this.numbers}`);
      this.stemShares = undefined;
    }
  }

  /**
   * The indexes a bulk load dropped, built over all its rows (GIN, then HNSW), then a VACUUM
   * ANALYZE: statistics for the planner, and the visibility map that lets it count a site's
   * rows from the index. Concurrent callers share one build.
   */
  private async buildDeferredIndexes(): Promise<void> {
    if (!this.indexesDeferred) return;
    this.building ??= (async () => {
      try {
        await this.createIndexes();
        this.indexesDeferred = false;
        this.deferredRows = undefined;
        this.loadRows = 0;
        await this.pool.query(`VACUUM ANALYZE ${this.table}`);
        this.stemShares = undefined;
      } finally {
        this.building = undefined;
      }
    })();
    await this.building;
  }

  /** The rows of `batch` as one INSERT; `withNumbers`: their numbers replaced in the same statement. */
  private insertStatement(
    batch: readonly StoredItem[],
    vectors: readonly number[][],
    withNumbers: boolean,
  ): Statement {
    const values: unknown[] = [];
    const rows = batch.map((item, n) => {
      const f = flattenItem(item);
      const facts = compactFacts(extractFacts(item.schema_object));
      values.push(
        item.url,
        item.site,
        item['@type'],
        item.name,
        JSON.stringify(item.schema_object),
        f.name.join(' '),
        [...f.people, ...f.categories].join(' '),
        f.text.join(' ').slice(0, 100_000),
        vectorBinary(vectors[n]!),
        this.embedder.id,
        JSON.stringify(facts),
        termsOf(facts),
      );
      const p = (k: number) => `$${n * 12 + k}`;
      return `(${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}::jsonb, ${p(6)}, ${p(7)}, ${p(8)}, ${p(9)}::vector, ${p(10)}, ${p(11)}::jsonb, ${p(12)}::text[])`;
    });
    // the rows as VALUES, their tsvector made once in the SELECT (not parsed and planned for each
    // of 500 rows). Not named (prepared once per connection): PGlite over pglite-socket serves
    // every connection from one session, where a name one connection (or an earlier process)
    // prepared exists for all and preparing it again fails; unnamed, a 30k load ran as fast.
    // Where a row's time goes (PGlite, CPU a row, 5k synthetic items, no GIN or HNSW): a bare row
    // with its url and site keys 0.15 ms; the three tsvectors 0.07 (the "other text" is ~310
    // characters, capping it saved nothing); the item jsonb 0.05; facts and terms 0.02; the
    // vector stored (TOAST) 0.06, and parsed 0.2 more when sent as text (so binary here). Sent
    // as 10 unnest arrays and the vectors as binary parameters instead of VALUES, the batch took
    // the same time (0.51-0.66 against 0.48-0.73 ms a row over pglite-socket); the embedding
    // stored PLAIN or MAIN instead of EXTERNAL neither.
    const insert = `INSERT INTO ${this.table} (url, site, type, name, item, doc, embedding, embedder, facts, terms)
         SELECT v.url, v.site, v.type, v.name, v.item,
                setweight(to_tsvector('english', v.a), 'A') || setweight(to_tsvector('english', v.b), 'B') || setweight(to_tsvector('english', v.c), 'C'),
                v.embedding, v.embedder, v.facts, v.terms
           FROM (VALUES ${rows.join(',')}) v(url, site, type, name, item, a, b, c, embedding, embedder, facts, terms)
         ON CONFLICT (url) DO UPDATE SET site = EXCLUDED.site, type = EXCLUDED.type, name = EXCLUDED.name,
           item = EXCLUDED.item, doc = EXCLUDED.doc, embedding = EXCLUDED.embedding, embedder = EXCLUDED.embedder,
           facts = EXCLUDED.facts, terms = EXCLUDED.terms`;
    if (!withNumbers) return { text: insert, values };
    // the rows' old numbers out and their new ones in, at once with them (the DELETE sees the
    // table as it was before the statement, so only the old ones)
    return {
      text: `WITH ins AS (${insert} RETURNING url, site, facts),
           gone AS (DELETE FROM ${this.numbers} n WHERE n.url IN (SELECT url FROM ins))
         INSERT INTO ${this.numbers} (url, site, path, pos, value) ${numbersOf('ins')}`,
      values,
    };
  }

  /**
   * The GIN index of the keyword side and the HNSW index (cosine) of the vector side, when
   * missing, built with room to keep the HNSW graph in memory.
   */
  private async createIndexes(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query(`SET maintenance_work_mem = '256MB'`);
      await client.query(`CREATE INDEX IF NOT EXISTS ${this.table}_doc ON ${this.table} USING gin (doc)`);
      await client.query(`CREATE INDEX IF NOT EXISTS ${this.table}_terms ON ${this.table} USING gin (terms)`);
      await client.query(
        `CREATE INDEX IF NOT EXISTS ${this.table}_embedding ON ${this.table} USING hnsw (embedding vector_cosine_ops) WITH (m = ${HNSW_M}, ef_construction = ${HNSW_EF_CONSTRUCTION})`,
      );
      // the numbers, unless complete (their (path, value) index, made last, says so): made again
      // from every row, then indexed
      const complete = await client.query<{ ok: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS ok`, [
        `${this.numbers}_path`,
      ]);
      if (!complete.rows[0]?.ok) {
        await client.query(`DROP INDEX IF EXISTS ${this.numbers}_url`);
        await client.query(`TRUNCATE ${this.numbers}`);
        await client.query(
          `INSERT INTO ${this.numbers} (url, site, path, pos, value) ${numbersOf(this.table)}`,
        );
        await client.query(`CREATE INDEX ${this.numbers}_url ON ${this.numbers} (url)`);
        await client.query(
          `CREATE INDEX ${this.numbers}_path ON ${this.numbers} (path, value) INCLUDE (url, pos, site)`,
        );
        await client.query(`VACUUM ANALYZE ${this.numbers}`);
      }
      await client.query('RESET maintenance_work_mem');
    } finally {
      client.release();
    }
  }

  async deleteSite(site: string): Promise<number> {
    this.writes++;
    this.deferredRows = undefined;
    const r = await this.pool
      .query<{
        url: string;
        name: string;
        site: string;
        type: string;
        item: Record<string, unknown>;
      }>(
        `WITH gone AS (DELETE FROM ${this.numbers} WHERE site = $1)
         DELETE FROM ${this.table} WHERE site = $1 RETURNING url, name, site, type, item`,
        [site],
      )
      .finally(() => this.writes++);
    for (const row of r.rows) {
      const before = {
        url: row.url,
        name: row.name,
        site: row.site,
        '@type': row.type,
        schema_object: row.item,
      };
      const e = embeddingText(before);
      this.vocabulary.forget(e.text, e.categories);
      this.catalog.remove(before);
    }
    return r.rowCount ?? r.rows.length;
  }

  /** Each site with its item count and @types (main ones first, by count). */
  async sites(): Promise<SiteInfo[]> {
    const r = await this.pool.query<{ site: string; n: string; types: string[] }>(
      `SELECT site, sum(c) AS n, array_agg(type ORDER BY c DESC, type) AS types
         FROM (SELECT site, type, count(*) AS c FROM ${this.table} GROUP BY site, type) t GROUP BY site ORDER BY site`,
    );
    return r.rows.map((row) => {
      const main = this.catalog.profile(row.site)?.mainTypes ?? [];
      return {
        name: row.site,
        itemCount: Number(row.n),
        types: [...main, ...row.types.filter((t) => !main.includes(t))],
      };
    });
  }

  /** Each asked site's profile; those whose version the caller has come back marked unchanged. */
  profiles(
    site: readonly string[],
    known: Readonly<Record<string, string>> = {},
  ): Array<SiteProfile | { site: string; version: string; unchanged: true }> {
    return this.catalog.profiles(site, known);
  }

  findNames(text: string, site: readonly string[]): NameMatch[] {
    return this.catalog.names.find(text, site.includes('all') ? undefined : new Set(site));
  }

  async getItems(urls: readonly string[]): Promise<StoredItem[]> {
    const r = await this.pool.query<ItemRow>(
      `SELECT url, name, site, type, item FROM ${this.table} WHERE url = ANY($1)`,
      [[...urls]],
    );
    const byUrl = new Map(r.rows.map((row) => [row.url, toItem(row)]));
    return urls.map((u) => byUrl.get(u)).filter((x): x is StoredItem => x !== undefined);
  }

  /**
   * Search, and with an understanding what its constraints did: the constraints become SQL
   * over the `facts` column (relaxed one at a time while nothing matches), the rows come back in
   * the order of the first superlative or preference (or text rank), and are ranked exactly as the
   * embedded index ranks them (rankCandidates). Plain questions take the hybrid path of `search`.
   */
  async searchWithOutcome(params: SearchParams): Promise<SearchResult> {
    await this.buildDeferredIndexes();
    const u = params.understanding;
    const numResults = params.numResults ?? 50;
    const types = [...(params.types ?? []), ...(u?.types ?? [])];
    const sites = params.site.includes('all') ? null : params.site;
    if (!u || !hasStructure(u)) {
      const plain = await this.search({ ...params, ...(types.length ? { types } : {}) });
      const named = u ? await this.getItems(u.named.filter((n) => n.exact).map((n) => n.url)) : [];
      const inSite = named.filter((n) => !sites || sites.includes(n.site));
      if (inSite.length === 0) return { items: plain };
      const first = new Set(inSite.map((n) => n.url));
      return {
        items: [
          ...inSite.map((n) => ({ ...n, retrievalScore: 100 })),
          ...plain.filter((r) => !first.has(r.url)),
        ].slice(0, numResults),
      };
    }
    // derived quantities (profit, total score) have no profile quantiles: take them from the rows
    const orders = await Promise.all(
      u.orders.map(async (o) =>
        o.quantiles ? o : { ...o, ...(await this.quantiles(o.target, sites, types)) },
      ),
    );
    const question = { ...u, orders };
    let constraints = [...u.constraints];
    const relaxed: string[] = [];
    for (;;) {
      const where = new SqlBuilder(
        [sites, types.length ? types : null],
        this.searchByNumbers ? this.numbers : undefined,
      );
      const conds = [
        `($1::text[] IS NULL OR site = ANY($1))`,
        `($2::text[] IS NULL OR type = ANY($2))`,
        ...where.conditions(constraints),
      ];
      const text = (u.freeText.trim() || u.text).slice(0, 2_000);
      const words = [
        ...new Set(tokenize(text).filter((w) => !STOPWORDS.has(w) && /^[\p{L}\p{N}]+$/u.test(w))),
      ];
      const tsquery = words.join(' | ') || 'zzzzzz';
      const rankOf = (b: SqlBuilder): string =>
        `ts_rank_cd(doc, to_tsquery('english', ${b.param(tsquery)}), 1)`;
      const rankExpr = rankOf(where);
      const orderExpr = where.orderExpression(question) ?? rankExpr;
      const depthRows = Math.max(numResults * 4, 200);
      const depth = where.param(depthRows);
      // With constraints (a scan of the site's facts) the count of matching rows comes with the
      // rows (count(*) OVER ()), so they are tested once. Without, a count by the site index is
      // cheaper than a window that holds every row of the site before the sort, and is kept
      // until the next write (PGlite runs one statement at a time, so the count of 26.6k rows
      // for "the highest rated movies" at 30k ran after or before its sort, not beside it).
      const windowed = constraints.length > 0;
      type Row = ItemRow & {
        facts: Record<string, (number | string)[]> | null;
        text_rank: number;
        matched: string | null;
      };
      // the matching rows narrow (URL, order, count) and LIMITed first (`top`); their items, facts
      // and text rank for the few that are kept
      const rowsOf = (top: string, params: unknown[], rank = rankExpr) =>
        this.pool.query<Row>(
          `SELECT t.url, t.name, t.site, t.type, t.item, t.facts, ${rank.replace('(doc,', '(t.doc,')} AS text_rank, top.matched
             FROM (${top}) top JOIN ${this.table} t ON t.url = top.url ORDER BY top.o DESC NULLS LAST, t.url`,
          params,
        );
      // The order is made in the scan (OFFSET 0 keeps the subquery as it is), so the window holds
      // URL and order only, not facts: with facts it spilled to disk at 9k rows ("movies that lost
      // money" at 30k)
      const scan = `SELECT url, o, ${windowed ? 'count(*) OVER ()' : 'NULL::bigint'} AS matched
                     FROM (SELECT url, ${orderExpr} AS o FROM ${this.table} WHERE ${conds.join(' AND ')} OFFSET 0) m
                    ORDER BY o DESC NULLS LAST, url LIMIT ${depth}`;
      // every constraint a range and the order of numbers: by the numbers table alone
      const byNumbers =
        windowed && this.searchByNumbers
          ? await this.numbersTop(constraints, question, sites, types, depthRows, rankOf)
          : undefined;
      const [rows, counted] = await Promise.all([
        (async () => {
          if (byNumbers) return rowsOf(byNumbers.top, byNumbers.params, byNumbers.rank);
          // a sort over the whole of the sites: down the numbers' index while it fills the depth
          const walk = windowed ? undefined : this.sortWalk(question, where, orderExpr, depth);
          const walked = walk && (await rowsOf(walk.top, walk.params));
          return walked && walked.rows.length >= depthRows ? walked : rowsOf(scan, where.params);
        })(),
        windowed
          ? undefined
          : this.remembered(JSON.stringify(['count', sites, types]), async () => {
              const r = await this.pool.query<{ n: string }>(
                `SELECT count(*) AS n FROM ${this.table} WHERE ${conds.join(' AND ')}`,
                where.params.slice(0, 2),
              );
              return Number(r.rows[0]?.n ?? 0);
            }),
      ]);
      const matched = counted ?? Number(rows.rows[0]?.matched ?? 0);
      if (matched === 0 && constraints.length > 0) {
        const drop = weakest(constraints)!;
        constraints = constraints.filter((k) => k !== drop);
        relaxed.push(drop.text);
        continue;
      }
      const relaxedU = { ...question, constraints };
      const candidates: Candidate[] = [];
      for (const row of rows.rows) {
        const c = candidateOf(toItem(row), factsFromCompact(row.facts ?? {}), relaxedU);
        if (c) candidates.push(c);
      }
      const byRank = [...rows.rows]
        .filter((r) => r.text_rank > 0)
        .sort((a, b) => b.text_rank - a.text_rank)
        .map((r) => r.url);
      applyTextRanks(candidates, byRank);
      return {
        items: rankCandidates(candidates, relaxedU, numResults),
        outcome: { matched, relaxed, orders },
      };
    }
  }

  /**
   * SqlBuilder.numbersTop's statement with its parameters and the text rank's expression in
   * them; undefined when it does not apply. The types are a parameter only when some row of the
   * sites has another type.
   */
  private async numbersTop(
    constraints: readonly Constraint[],
    u: Understanding,
    sites: string[] | null,
    types: string[],
    depthRows: number,
    rankOf: (b: SqlBuilder) => string,
  ): Promise<{ top: string; params: unknown[]; rank: string } | undefined> {
    const typed = types.length > 0 && !(await this.typesCover(sites, types));
    const b = new SqlBuilder([sites, typed ? types : null], this.numbers);
    const top = b.numbersTop(constraints, u, b.param(depthRows), this.table);
    return top === undefined ? undefined : { top, params: b.params, rank: rankOf(b) };
  }

  /** Whether every row of the sites has one of the types; kept until this store's next write. */
  private typesCover(sites: string[] | null, types: string[]): Promise<boolean> {
    return this.remembered(JSON.stringify(['types cover', sites, types]), async () => {
      const r = await this.pool.query<{ other: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM ${this.table} WHERE ($1::text[] IS NULL OR site = ANY($1)) AND NOT (type = ANY($2))) AS other`,
        [sites, types],
      );
      return r.rows[0]?.other === false;
    });
  }

  /**
   * The top of a superlative over a path's first numbers as a walk down the numbers' (path,
   * value) index, the sites and types tested on the way, stopping at the LIMIT: instead of the
   * order of every row of the sites made and sorted ("the highest rated movies" at 300k: 0.8 s).
   * Rows without the path come after all those with it, so a walk that does not fill `depth` is
   * not the answer (the caller scans then). Undefined when the order is not such a sort.
   */
  private sortWalk(
    u: Understanding,
    where: SqlBuilder,
    orderExpr: string,
    depth: string,
  ): { top: string; params: unknown[] } | undefined {
    const sort = u.orders.find((o) => o.strength === 'sort');
    if (!this.searchByNumbers || !sort || !('path' in sort.target)) return undefined;
    // the scan's parameters and one more (the scan does not name the path as text alone)
    const params = [...where.params, sort.target.path];
    return {
      top: `SELECT n.url, ${orderExpr} AS o, NULL::bigint AS matched
              FROM ${this.numbers} n JOIN ${this.table} m ON m.url = n.url
             WHERE n.path = $${params.length} AND n.pos = 0
               AND ($1::text[] IS NULL OR n.site = ANY($1)) AND ($2::text[] IS NULL OR m.type = ANY($2))
             ORDER BY n.value ${sort.direction === 'desc' ? 'DESC' : 'ASC'}, n.url LIMIT ${depth}`,
      params,
    };
  }

  /**
   * 11 quantiles of a target over the sites' rows (`{}` when no row has it); kept until this
   * store's next write (each is a scan of the sites' rows: half of "movies that lost money" at 30k).
   */
  private async quantiles(
    target: Target,
    sites: string[] | null,
    types: string[],
  ): Promise<{ quantiles?: number[] }> {
    return this.remembered(JSON.stringify(['quantiles', target, sites, types]), () =>
      this.computeQuantiles(target, sites, types),
    );
  }

  /** `make()`, or what it gave for `key` since this store's last write (see `memo`). */
  private remembered<T>(key: string, make: () => Promise<T>): Promise<T> {
    const hit = this.memo.get(key);
    if (hit && hit.writes === this.writes) return hit.result as Promise<T>;
    if (this.memo.size >= 1_000) this.memo.clear();
    const result = make();
    this.memo.set(key, { writes: this.writes, result });
    // a failure is not kept (unless a later call has replaced it already)
    result.catch(() => {
      if (this.memo.get(key)?.result === result) this.memo.delete(key);
    });
    return result;
  }

  private async computeQuantiles(
    target: Target,
    sites: string[] | null,
    types: string[],
  ): Promise<{ quantiles?: number[] }> {
    const b = new SqlBuilder([sites, types.length ? types : null]);
    const expr = b.target(target);
    const r = await this.pool.query<{ q: number[] | null }>(
      `SELECT percentile_cont(ARRAY[0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1]) WITHIN GROUP (ORDER BY x) AS q
         FROM (SELECT ${expr} AS x FROM ${this.table} WHERE ($1::text[] IS NULL OR site = ANY($1)) AND ($2::text[] IS NULL OR type = ANY($2))) s
        WHERE x IS NOT NULL`,
      b.params,
    );
    const q = r.rows[0]?.q;
    return q && q.length === 11 ? { quantiles: q.map(Number) } : {};
  }

  /** Every write is already committed: builds the indexes a bulk load left for the end. */
  async persist(): Promise<void> {
    await this.buildDeferredIndexes();
    // the load ends here (a later write starts a new one)
    this.loadRows = 0;
  }

  /**
   * The two halves of a plain search as statements: keyword (any of the query's words, ranked by
   * ts_rank_cd over the weighted tsvector; the GIN index on `doc`) and vector (nearest by cosine
   * distance; the HNSW index on `embedding`). `search` runs them; `explainSearch` explains them.
   */
  private async searchStatements(
    params: SearchParams,
  ): Promise<{ keyword?: Statement; vector?: Statement; numResults: number }> {
    const numResults = params.numResults ?? 50;
    const parsed = parseQuery(params.query);
    if (parsed.searchTerms.length === 0) return { numResults };
    const depth = Math.max(100, numResults * 2);
    const sites = params.site.includes('all') ? null : params.site;
    const types = params.types?.length ? params.types : null;
    const filter = `($2::text[] IS NULL OR site = ANY($2)) AND ($3::text[] IS NULL OR type = ANY($3))`;
    const all = [
      ...new Set(tokenize(params.query).filter((w) => !STOPWORDS.has(w) && /^[\p{L}\p{N}]+$/u.test(w))),
    ];
    const words = await this.withoutCommonWords(all, sites);
    const common = all.filter((w) => !words.includes(w));
    // the rows of the common words alone come after the ranked ones, unranked (by URL): their
    // rank would cost a scan of the site, and BM25 gives them next to nothing
    const keyword = words.length
      ? {
          text: `SELECT url FROM (
               (SELECT url, 0 AS part, ts_rank_cd(doc, to_tsquery('english', $1), 1) AS r FROM ${this.table}
                 WHERE doc @@ to_tsquery('english', $1) AND ${filter} ORDER BY r DESC, url LIMIT $4)
               UNION ALL
               (SELECT url, 1, 0 FROM ${this.table} WHERE $5::text IS NOT NULL AND doc @@ to_tsquery('english', $5) AND ${filter}
                 ORDER BY url LIMIT $4)
             ) k ORDER BY part, r DESC, url`,
          values: [words.join(' | '), sites, types, depth, common.length ? common.join(' | ') : null],
        }
      : undefined;
    const [qv] = await this.embedder.embed([params.query], 'query');
    // relaxed-order iterative scans (pgvector 0.8) may return rows a little out of order: sort them again
    const vector = qv
      ? {
          text: `SELECT url, 1 - d AS score FROM (SELECT url, embedding <=> $1::vector AS d FROM ${this.table}
             WHERE ${filter} AND embedding IS NOT NULL ORDER BY embedding <=> $1::vector LIMIT $4) nn ORDER BY d, url`,
          values: [vectorBinary(qv), sites, types, depth],
        }
      : undefined;
    return { ...(keyword ? { keyword } : {}), ...(vector ? { vector } : {}), numResults };
  }

  /**
   * The words less the common ones (COMMON_WORD_SHARE of the sites' rows or more), unless
   * every word is common. A site's share of a stem is estimated as its share of the table's
   * rows divided by the sites' share of the table.
   */
  private async withoutCommonWords(words: string[], sites: readonly string[] | null): Promise<string[]> {
    if (words.length < 2) return words;
    this.stemShares ??= this.pool
      .query<{ elems: string[] | null; freqs: number[] | null; rows: number | null }>(
        `SELECT s.most_common_elems::text::text[] AS elems, s.most_common_elem_freqs AS freqs, c.reltuples AS rows
           FROM pg_class c LEFT JOIN pg_stats s ON s.tablename = c.relname AND s.attname = 'doc' AND s.schemaname = current_schema()
          WHERE c.oid = $1::regclass`,
        [this.table],
      )
      .then(({ rows: [r] }) => ({
        shares: new Map((r?.elems ?? []).map((e, i) => [e, Number(r?.freqs?.[i] ?? 0)])),
        rows: Math.max(0, Number(r?.rows ?? 0)),
      }));
    const missing = words.filter((w) => !this.stems.has(w));
    const [{ shares, rows }, stemmed] = await Promise.all([
      this.stemShares,
      missing.length
        ? this.pool.query<{ w: string; stems: string[] }>(
            `SELECT w, array(SELECT lexeme FROM unnest(to_tsvector('english', w))) AS stems FROM unnest($1::text[]) w`,
            [missing],
          )
        : undefined,
    ]);
    if (this.stems.size > 10_000) this.stems.clear();
    for (const r of stemmed?.rows ?? []) this.stems.set(r.w, r.stems);
    if (shares.size === 0 || rows === 0) return words;
    const siteRows = sites
      ? sites.reduce((n, site) => n + (this.catalog.profile(site)?.itemCount ?? 0), 0)
      : rows;
    const scale = Math.min(1, Math.max(siteRows, 1) / rows);
    const common = (w: string) => {
      const st = this.stems.get(w) ?? [];
      return st.length > 0 && st.every((x) => (shares.get(x) ?? 0) / scale >= COMMON_WORD_SHARE);
    };
    const rare = words.filter((w) => !common(w));
    return rare.length ? rare : words;
  }

  /**
   * Runs a search statement on a connection set up for HNSW: on pgvector 0.8 or later iterative
   * scans (relaxed order), so a site or type filter still fills its LIMIT; before, EF_SEARCH.
   */
  private async onSearchConnection<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      if (!this.searchReady.has(client)) {
        if (this.iterativeScans) await client.query(`SET hnsw.iterative_scan = relaxed_order`);
        else await client.query(`SET hnsw.ef_search = ${EF_SEARCH}`);
        this.searchReady.add(client);
      }
      return await fn(client);
    } finally {
      client.release();
    }
  }

  /** The query plans of a plain search's statements (EXPLAIN), to see which indexes they use. */
  async explainSearch(params: SearchParams): Promise<{ keyword?: string; vector?: string }> {
    await this.buildDeferredIndexes();
    const { keyword, vector } = await this.searchStatements(params);
    const explain = async (st: Statement | undefined): Promise<string | undefined> =>
      st &&
      this.onSearchConnection(async (c) =>
        (await c.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${st.text}`, st.values)).rows
          .map((r) => r['QUERY PLAN'])
          .join('\n'),
      );
    const [k, v] = [await explain(keyword), await explain(vector)];
    return { ...(k ? { keyword: k } : {}), ...(v ? { vector: v } : {}) };
  }

  async search(params: SearchParams): Promise<RetrievedItem[]> {
    await this.buildDeferredIndexes();
    const statements = await this.searchStatements(params);
    const { numResults } = statements;
    const run = async <R extends pg.QueryResultRow>(st: Statement | undefined): Promise<R[]> =>
      st ? this.onSearchConnection(async (c) => (await c.query<R>(st.text, st.values)).rows) : [];
    const [keywordRows, vectorRows] = await Promise.all([
      run<{ url: string }>(statements.keyword),
      run<{ url: string; score: number }>(statements.vector),
    ]);
    const keyword = [...new Set(keywordRows.map((r) => r.url))].slice(0, Math.max(100, numResults * 2));
    const vector = vectorRows.filter((r) => r.score >= MIN_VECTOR_SCORE).map((r) => r.url);

    const fused = [
      ...reciprocalRankFusion([keyword, vector], RRF_K, [KEYWORD_WEIGHT, VECTOR_WEIGHT]).entries(),
    ]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, numResults);
    if (fused.length === 0) return [];
    const rows = await this.pool.query<{
      url: string;
      name: string;
      site: string;
      type: string;
      item: Record<string, unknown>;
    }>(`SELECT url, name, site, type, item FROM ${this.table} WHERE url = ANY($1)`, [
      fused.map(([url]) => url),
    ]);
    const byUrl = new Map(rows.rows.map((r) => [r.url, r]));
    return fused.flatMap(([url, score]) => {
      const r = byUrl.get(url);
      return r
        ? [
            {
              url,
              name: r.name,
              site: r.site,
              '@type': r.type,
              schema_object: r.item,
              retrievalScore: Math.round(score * 1e6) / 1e4,
            },
          ]
        : [];
    });
  }
}
