import pg from 'pg';
import type { RetrievedItem, SiteInfo, StoredItem } from '@askbus/contracts';
import { LocalEmbeddings, Vocabulary, type EmbeddingProvider } from '@askbus/embeddings';
import { flattenItem, normalizeTokens, parseQuery, STOPWORDS, tokenize } from '@askbus/search-core';
import { embeddingText, StoreInputError, type SearchParams } from './index-store';
import { reciprocalRankFusion } from './vectors';

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
}

const RRF_K = 60;
const KEYWORD_WEIGHT = 1;
const VECTOR_WEIGHT = 0.7;
const MIN_VECTOR_SCORE = 0.08;
const ROWS_PER_INSERT = 200;

const vectorLiteral = (v: readonly number[]): string =>
  `[${v.map((x) => (Number.isFinite(x) ? x : 0)).join(',')}]`;

/**
 * The retriever's items in PostgreSQL with pgvector: one row per item (url primary key, site,
 * type, the whole item as jsonb), a weighted tsvector for the keyword side (name A, people and
 * categories B, other text C; `english` configuration) with a GIN index, and an embedding
 * column with an HNSW index (cosine) for the vector side; both merged by reciprocal-rank
 * fusion as in IndexStore (types a query names come first; IndexStore's numeric intent
 * boosts are not ported). Every write is committed at once, so `persist` has nothing to do.
 */
export class PgStore {
  readonly vocabulary = new Vocabulary();
  readonly embedder: EmbeddingProvider;
  readonly openedFrom = 'database' as const;
  private readonly pool: pg.Pool;
  private readonly ownPool: boolean;
  private readonly table: string;

  private constructor(opts: PgStoreOptions) {
    this.table = opts.table ?? 'askbus_items';
    if (!/^[a-z_][a-z0-9_]*$/.test(this.table)) throw new Error(`bad table name "${this.table}"`);
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
    await this.pool.query(`CREATE INDEX IF NOT EXISTS ${t}_site ON ${t} (site, type)`);
    await this.pool.query(`CREATE INDEX IF NOT EXISTS ${t}_doc ON ${t} USING gin (doc)`);
    await this.pool.query(
      `CREATE INDEX IF NOT EXISTS ${t}_embedding ON ${t} USING hnsw (embedding vector_cosine_ops)`,
    );
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
    }
    // items embedded by another model (or not at all) are embedded again
    const stale = await this.pool.query<{ item: StoredItem }>(
      `SELECT jsonb_build_object('url', url, 'name', name, 'site', site, '@type', type, 'schema_object', item) AS item FROM ${t} WHERE embedder IS DISTINCT FROM $1`,
      [this.embedder.id],
    );
    if (stale.rows.length) await this.write(stale.rows.map((r) => r.item));
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

  async upsert(site: string, items: readonly StoredItem[]): Promise<{ upserted: number; total: number }> {
    const wrong = items.find((i) => i.site !== site);
    if (wrong) throw new StoreInputError(`item ${wrong.url} belongs to site "${wrong.site}", not "${site}"`);
    const latest = [...new Map(items.map((i) => [i.url, i])).values()];
    // replaced items leave the vocabulary first
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
      for (const r of old.rows) {
        const e = embeddingText({
          url: r.url,
          name: r.name,
          site: r.site,
          '@type': r.type,
          schema_object: r.item,
        });
        this.vocabulary.forget(e.text, e.categories);
      }
    }
    await this.write(latest);
    for (const item of latest) {
      const e = embeddingText(item);
      this.vocabulary.observe(e.text, e.categories);
    }
    return { upserted: latest.length, total: await this.count() };
  }

  /** Embeds and writes rows (insert or replace by URL). */
  private async write(items: readonly StoredItem[]): Promise<void> {
    for (let i = 0; i < items.length; i += ROWS_PER_INSERT) {
      const batch = items.slice(i, i + ROWS_PER_INSERT);
      const vectors = await this.embedder.embed(
        batch.map((it) => embeddingText(it).text),
        'document',
      );
      const params: unknown[] = [];
      const rows = batch.map((item, n) => {
        const f = flattenItem(item);
        params.push(
          item.url,
          item.site,
          item['@type'],
          item.name,
          JSON.stringify(item.schema_object),
          f.name.join(' '),
          [...f.people, ...f.categories].join(' '),
          f.text.join(' ').slice(0, 100_000),
          vectorLiteral(vectors[n]!),
          this.embedder.id,
        );
        const p = (k: number) => `$${n * 10 + k}`;
        return `(${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}::jsonb,
          setweight(to_tsvector('english', ${p(6)}), 'A') || setweight(to_tsvector('english', ${p(7)}), 'B') || setweight(to_tsvector('english', ${p(8)}), 'C'),
          ${p(9)}::vector, ${p(10)})`;
      });
      await this.pool.query(
        `INSERT INTO ${this.table} (url, site, type, name, item, doc, embedding, embedder) VALUES ${rows.join(',')}
         ON CONFLICT (url) DO UPDATE SET site = EXCLUDED.site, type = EXCLUDED.type, name = EXCLUDED.name,
           item = EXCLUDED.item, doc = EXCLUDED.doc, embedding = EXCLUDED.embedding, embedder = EXCLUDED.embedder`,
        params,
      );
    }
  }

  async deleteSite(site: string): Promise<number> {
    const r = await this.pool.query<{
      url: string;
      name: string;
      site: string;
      type: string;
      item: Record<string, unknown>;
    }>(`DELETE FROM ${this.table} WHERE site = $1 RETURNING url, name, site, type, item`, [site]);
    for (const row of r.rows) {
      const e = embeddingText({
        url: row.url,
        name: row.name,
        site: row.site,
        '@type': row.type,
        schema_object: row.item,
      });
      this.vocabulary.forget(e.text, e.categories);
    }
    return r.rowCount ?? r.rows.length;
  }

  async sites(): Promise<SiteInfo[]> {
    const r = await this.pool.query<{ site: string; n: string; types: string[] }>(
      `SELECT site, count(*) AS n, array_agg(DISTINCT type ORDER BY type) AS types FROM ${this.table} GROUP BY site ORDER BY site`,
    );
    return r.rows.map((row) => ({ name: row.site, itemCount: Number(row.n), types: row.types }));
  }

  /** Nothing to do: every write is already committed. */
  async persist(): Promise<void> {}

  async search(params: SearchParams): Promise<RetrievedItem[]> {
    const parsed = parseQuery(params.query);
    if (parsed.searchTerms.length === 0) return [];
    // a query naming a type ("ford cars") prefers that type, as IndexStore's boost does
    const named = parsed.types.length
      ? (
          await this.pool.query<{ type: string }>(
            `SELECT DISTINCT type FROM ${this.table} WHERE type = ANY($1)`,
            [parsed.types],
          )
        ).rows.map((r) => r.type)
      : [];
    const numResults = params.numResults ?? 50;
    const depth = Math.max(100, numResults * 2);
    const sites = params.site.includes('all') ? null : params.site;
    const types = params.types?.length ? params.types : null;
    const filter = `($2::text[] IS NULL OR site = ANY($2)) AND ($3::text[] IS NULL OR type = ANY($3))`;

    // keyword: any of the query's words (OR), ranked by ts_rank_cd over the weighted tsvector
    const words = [
      ...new Set(
        normalizeTokens(tokenize(params.query)).filter(
          (w) => !STOPWORDS.has(w) && /^[\p{L}\p{N}]+$/u.test(w),
        ),
      ),
    ];
    const keyword = words.length
      ? (
          await this.pool.query<{ url: string }>(
            `WITH q AS (SELECT to_tsquery('english', $1) AS q)
             SELECT url FROM ${this.table}, q WHERE doc @@ q.q AND ${filter}
             ORDER BY (type = ANY($5)) DESC, ts_rank_cd(doc, q.q, 1) DESC, url LIMIT $4`,
            [words.join(' | '), sites, types, depth, named],
          )
        ).rows.map((r) => r.url)
      : [];

    // vector: nearest by cosine distance through the HNSW index
    const [qv] = await this.embedder.embed([params.query], 'query');
    const vector = qv
      ? (
          await this.pool.query<{ url: string; score: number }>(
            `SELECT url, 1 - (embedding <=> $1::vector) AS score FROM ${this.table}
             WHERE ${filter} AND embedding IS NOT NULL AND (cardinality($5::text[]) = 0 OR type = ANY($5))
             ORDER BY embedding <=> $1::vector LIMIT $4`,
            [vectorLiteral(qv), sites, types, depth, named],
          )
        ).rows
          .filter((r) => r.score >= MIN_VECTOR_SCORE)
          .map((r) => r.url)
      : [];

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
