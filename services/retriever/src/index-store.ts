import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import MiniSearch, { type Options } from 'minisearch';
import { z } from 'zod';
import {
  StoredItem,
  type NameMatch,
  type RetrievedItem,
  type SearchOutcome,
  type SiteInfo,
  type SiteProfile,
  type Understanding,
} from '@askbus/contracts';
import { hasStructure, SiteCatalog } from '@askbus/understand';
import { structuredSearch } from './structured-search';
import { LocalEmbeddings, Vocabulary, type EmbeddingProvider } from '@askbus/embeddings';
import { Journal, syncDir, type JournalRecord, type JournalReplay } from './journal';
import { heldElsewhere, type UpsertOptions, type UpsertResult } from './cross-site';
import { reciprocalRankFusion, VectorIndex } from './vectors';
import {
  ANALYZER_VERSION,
  FIELD_BOOSTS,
  FIELD_NAMES,
  flattenItem,
  parseQuery,
  processTerm,
  stem,
  tokenize,
  type ParsedQuery,
} from '@askbus/search-core';

/** What one search asks (SearchRequest after parsing; numResults defaults to 50). */
export interface SearchParams {
  query: string;
  /** Sites to search; `all` anywhere in the list means every site. */
  site: string[];
  numResults?: number;
  /** Keep only items whose `@type` is one of these. */
  types?: string[];
  /** The question understood: constraints filter, orders sort, free words search. */
  understanding?: Understanding;
}

/** A search's items, and what its constraints did (with an understanding). */
export interface SearchResult {
  items: RetrievedItem[];
  outcome?: SearchOutcome;
}

/** An upsert the store refuses (the caller's fault, not the store's). */
export class StoreInputError extends Error {
  override name = 'StoreInputError';
}

export interface IndexStoreOptions {
  /** Directory for items.json, index.json and the vectors; without it the store lives in memory only. */
  dataDir?: string;
  /**
   * How items and queries become vectors for the vector half of the hybrid search: default the
   * local WordNet model (offline) fed with this store's vocabulary; `null` for keyword only.
   */
  embedder?: EmbeddingProvider | ((vocabulary: Vocabulary) => EmbeddingProvider) | null;
  /** Journal size after which a snapshot is written in the background (default 64 MiB). */
  snapshotAfterBytes?: number;
  /** Told when a background snapshot fails (nothing is lost: the journal still has it all). */
  onBackgroundError?: (err: unknown) => void;
}

/** How `open` found its data. */
export type OpenedFrom = 'empty' | 'disk' | 'rebuilt';

/** One MiniSearch document: an item's weighted fields as text, plus what filters and boosts need. */
interface IndexDoc {
  id: string;
  name: string;
  people: string;
  categories: string;
  text: string;
  site: string;
  type: string;
}

/**
 * Analysis is search-core's, so the index and the ranker's local scorer agree on words:
 * tokenize + synonyms as MiniSearch's tokenize, stopwords + Porter stemming as its processTerm
 * (stopwords kept in titles, so "Up" can be found). Queries are analyzed by parseQuery and
 * handed over as finished terms (see `search`).
 */
const INDEX_OPTIONS: Options<IndexDoc> = {
  idField: 'id',
  fields: [...FIELD_NAMES],
  storeFields: ['site', 'type'],
  tokenize: (text) => tokenize(text),
  processTerm: (term, fieldName) => processTerm(term, fieldName === 'name'),
};

/** items.json: the items themselves, and which index.json they belong with. */
const PersistedItems = z.object({
  format: z.literal(1),
  analyzer: z.number().int(),
  /** sha256 of index.json as written with these items; a mismatch means "rebuild". */
  indexSha256: z.string(),
  items: z.array(StoredItem),
  /** sha256 of vectors.json + vectors.bin as written with these items (absent: no vectors). */
  vectorsSha256: z.string().optional(),
  /** The last journal generation these items include (absent: written before the journal). */
  journal: z.number().int().nonnegative().optional(),
});

const DEFAULT_SNAPSHOT_AFTER_BYTES = 64 * 1024 * 1024;

const ITEMS_FILE = 'items.json';
const INDEX_FILE = 'index.json';
const VECTORS_FILE = 'vectors.bin';
const VECTORS_META_FILE = 'vectors.json';

const VectorsMeta = z.object({
  embedder: z.string(),
  dimensions: z.number().int(),
  ids: z.array(z.string()),
});

/** RRF constant and list weights: the keyword list leads, the vector list adds what words miss. */
const RRF_K = 60;
const KEYWORD_WEIGHT = 1;
const VECTOR_WEIGHT = 0.7;
/** Vector hits below this cosine are noise, not meaning. */
const MIN_VECTOR_SCORE = 0.08;
const EMBED_BATCH = 256;

/** The text an item is embedded from: name, categories (twice: they say most), people, some text. */
export function embeddingText(item: StoredItem): { text: string; categories: string } {
  const f = flattenItem(item);
  const categories = f.categories.join('. ');
  const text = [...f.name, categories, categories, ...f.people, ...f.text.map((t) => t.slice(0, 400))].join(
    '. ',
  );
  return { text, categories };
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const sha256Parts = (meta: string, bin: Buffer): string =>
  createHash('sha256').update(meta).update(bin).digest('hex');

function toDoc(item: StoredItem): IndexDoc {
  const fields = flattenItem(item);
  return {
    id: item.url,
    name: fields.name.join('\n'),
    people: fields.people.join('\n'),
    categories: fields.categories.join('\n'),
    text: fields.text.join('\n'),
    site: item.site,
    type: item['@type'],
  };
}

/**
 * Writes a file so readers see the old or the new content, never half of it; the content is on
 * disk before the rename, so a power loss cannot leave the new name on an empty file.
 */
async function writeFileAtomic(path: string, content: string | Buffer): Promise<void> {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    const handle = await open(tmp, 'w');
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** Temp files of a snapshot write that was killed before its rename: never read, only in the way. */
async function removeTempFiles(dir: string): Promise<void> {
  const names = [ITEMS_FILE, INDEX_FILE, VECTORS_FILE, VECTORS_META_FILE];
  for (const f of await readdir(dir)) {
    if (f.endsWith('.tmp') && names.some((n) => f.startsWith(`${n}.`)))
      await rm(join(dir, f), { force: true });
  }
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** A snapshot serialized at one instant, to be written to disk after. */
interface Snapshot {
  journalGeneration: number;
  indexText: string;
  itemsText: string;
  vectors: { meta: string; bin: Buffer } | undefined;
}

/**
 * The retriever's index: schema.org items by URL, searchable with MiniSearch (BM25+), filtered
 * by site and type, persisted to `dataDir`. Usable in-process without NATS.
 *
 * On disk: a snapshot (items.json, index.json, vectors) for a fast start, plus a journal of
 * every change since (see Journal). A change is journaled and fsync'd before it is applied and
 * before `upsert`/`deleteSite` return, so what they acknowledged survives a kill at any moment.
 */
export class IndexStore {
  private readonly items = new Map<string, StoredItem>();
  private index = new MiniSearch<IndexDoc>(INDEX_OPTIONS);
  private writes: Promise<void> = Promise.resolve();
  /** Changes and snapshot captures run one at a time, so journal order is the order applied. */
  private lock: Promise<unknown> = Promise.resolve();
  private journal: Journal | undefined;
  private _replayed: JournalReplay = { records: 0, tornBytes: 0 };
  private snapshotting = false;
  private readonly snapshotAfterBytes: number;
  private readonly onBackgroundError: ((err: unknown) => void) | undefined;
  private _openedFrom: OpenedFrom = 'empty';
  private _vectorsFrom: 'disk' | 'computed' | 'none' = 'none';
  readonly vocabulary = new Vocabulary();
  /** Each site's profile, the names index and every item's facts, kept with the items. */
  readonly catalog = new SiteCatalog(true);
  readonly embedder: EmbeddingProvider | undefined;
  private readonly vectors: VectorIndex | undefined;

  private constructor(
    private readonly dataDir: string | undefined,
    embedder: IndexStoreOptions['embedder'],
    opts: IndexStoreOptions,
  ) {
    this.snapshotAfterBytes = opts.snapshotAfterBytes ?? DEFAULT_SNAPSHOT_AFTER_BYTES;
    this.onBackgroundError = opts.onBackgroundError;
    const e =
      embedder === null
        ? undefined
        : embedder === undefined
          ? new LocalEmbeddings({ vocabulary: this.vocabulary })
          : typeof embedder === 'function'
            ? embedder(this.vocabulary)
            : embedder;
    this.embedder = e;
    this.vectors = e ? new VectorIndex(e.dimensions) : undefined;
  }

  /**
   * Opens the store: the last snapshot in dataDir (MiniSearch's own JSON, no re-indexing;
   * re-indexing the saved items when index.json is missing, stale or from another analyzer
   * version), then the journal of changes since, replayed on top. A damaged items.json is an
   * error: better to stop than to start empty and lose a site without a word.
   */
  static async open(opts: IndexStoreOptions = {}): Promise<IndexStore> {
    const store = new IndexStore(opts.dataDir, opts.embedder, opts);
    const dir = opts.dataDir;
    if (!dir) return store;
    await mkdir(dir, { recursive: true });
    await removeTempFiles(dir);
    const { journalGeneration, needsSnapshot } = await store.loadSnapshot(dir);
    const { journal, replayed } = await Journal.open(dir, journalGeneration, (r) => store.replay(r));
    store.journal = journal;
    store._replayed = replayed;
    if (needsSnapshot || journal.pendingBytes >= store.snapshotAfterBytes) await store.persist();
    return store;
  }

  /** Reads items.json and what goes with it; whether it must be written again, and the journal generation it includes. */
  private async loadSnapshot(dir: string): Promise<{ journalGeneration: number; needsSnapshot: boolean }> {
    const itemsPath = join(dir, ITEMS_FILE);
    const itemsText = await readIfExists(itemsPath);
    if (itemsText === undefined) return { journalGeneration: 0, needsSnapshot: false };

    let saved: z.infer<typeof PersistedItems>;
    try {
      saved = PersistedItems.parse(JSON.parse(itemsText));
    } catch (err) {
      throw new Error(
        `${itemsPath} is not a readable askbus index: ${err instanceof Error ? err.message : err}`,
      );
    }
    const journalGeneration = saved.journal ?? 0;
    for (const item of saved.items) {
      this.items.set(item.url, item);
      this.catalog.add(item);
      const { text, categories } = embeddingText(item);
      this.vocabulary.observe(text, categories);
    }
    const vectorsOk = await this.loadVectors(dir, saved.vectorsSha256);

    const indexText = await readIfExists(join(dir, INDEX_FILE));
    if (
      indexText !== undefined &&
      saved.analyzer === ANALYZER_VERSION &&
      sha256(indexText) === saved.indexSha256
    ) {
      try {
        this.index = MiniSearch.loadJSON<IndexDoc>(indexText, INDEX_OPTIONS);
        if (this.index.documentCount === this.items.size) {
          this._openedFrom = 'disk';
          return { journalGeneration, needsSnapshot: !vectorsOk };
        }
      } catch {
        // fall through to a rebuild from the items
      }
    }
    this.index = new MiniSearch<IndexDoc>(INDEX_OPTIONS);
    this.index.addAll([...this.items.values()].map(toDoc));
    await this.embedItems([...this.items.values()].filter((i) => !this.vectors?.has(i.url)));
    this._openedFrom = 'rebuilt';
    return { journalGeneration, needsSnapshot: true };
  }

  /** Applies one journaled change again on open (it is on disk already). */
  private async replay(record: JournalRecord): Promise<void> {
    if (record.op === 'deleteSite') {
      this.applyDeleteSite(record.site);
      return;
    }
    const items = latestByUrl(record.items);
    this.applyUpsert(items, await this.embedDocuments(items));
  }

  /** What the journal gave back on open: records replayed, and bytes of a torn last line cut off. */
  get replayed(): JournalReplay {
    return this._replayed;
  }

  get openedFrom(): OpenedFrom {
    return this._openedFrom;
  }

  /** Whether the vectors were read from disk or computed on open (`none`: keyword only). */
  get vectorsFrom(): 'disk' | 'computed' | 'none' {
    return this._vectorsFrom;
  }

  /** Reads the stored vectors when they are this embedder's; embeds items that have none. True when nothing was missing. */
  private async loadVectors(dir: string, sha: string | undefined): Promise<boolean> {
    const vectors = this.vectors;
    if (!vectors || !this.embedder) return true;
    try {
      const metaText = await readIfExists(join(dir, VECTORS_META_FILE));
      const bin = await readFile(join(dir, VECTORS_FILE)).catch(() => undefined);
      if (metaText !== undefined && bin && sha === sha256Parts(metaText, bin)) {
        const meta = VectorsMeta.parse(JSON.parse(metaText));
        if (meta.embedder === this.embedder.id && meta.dimensions === vectors.dimensions) {
          vectors.load(meta.ids, bin);
          for (const id of meta.ids) if (!this.items.has(id)) vectors.delete(id);
        }
      }
    } catch {
      // recompute below
    }
    const missing = [...this.items.values()].filter((i) => !vectors.has(i.url));
    this._vectorsFrom = missing.length === 0 ? 'disk' : 'computed';
    await this.embedItems(missing);
    return missing.length === 0;
  }

  private async embedItems(items: readonly StoredItem[]): Promise<void> {
    const vectors = this.vectors;
    if (!vectors || !this.embedder) return;
    for (let i = 0; i < items.length; i += EMBED_BATCH) {
      const batch = items.slice(i, i + EMBED_BATCH);
      const out = await this.embedder.embed(
        batch.map((it) => embeddingText(it).text),
        'document',
      );
      batch.forEach((it, n) => vectors.set(it.url, out[n]!));
    }
  }

  /** Number of items over all sites. */
  get size(): number {
    return this.items.size;
  }

  get(url: string): StoredItem | undefined {
    return this.items.get(url);
  }

  /**
   * Best matches first: BM25+ over the weighted fields (name > people, categories > text),
   * any query term may match (OR), a little fuzziness for typos, prefix on the last term;
   * a query's numeric intents ("fuel efficient", "best") raise items whose numbers fit, and
   * items of a type it names ("cars") come before others.
   */
  async search(params: SearchParams): Promise<RetrievedItem[]> {
    return (await this.searchWithOutcome(params)).items;
  }

  /**
   * Search, and with an understanding what its constraints did: structured questions filter and
   * sort every item of the sites (structured-search.ts); plain ones take the hybrid path below,
   * the items the question names exactly first.
   */
  async searchWithOutcome(params: SearchParams): Promise<SearchResult> {
    const u = params.understanding;
    const sites = params.site.includes('all') ? undefined : new Set(params.site);
    const typeList = [...(params.types ?? []), ...(u?.types ?? [])];
    const types = typeList.length ? new Set(typeList) : undefined;
    const numResults = params.numResults ?? 50;
    if (u && hasStructure(u)) {
      return structuredSearch(
        {
          items: (s, t) => this.itemsOf(s, t),
          facts: (item) => this.catalog.facts(item),
          textRanks: (text, allowed, depth, keywordOnly) =>
            this.textRanks(text, allowed, depth, keywordOnly, sites),
        },
        u,
        sites,
        types,
        numResults,
      );
    }
    const plain = await this.hybridSearch({ ...params, ...(types ? { types: [...types] } : {}) });
    const named = (u?.named ?? [])
      .filter((n) => n.exact)
      .map((n) => this.items.get(n.url))
      .filter((x): x is StoredItem => !!x && (!sites || sites.has(x.site)));
    if (named.length === 0) return { items: plain };
    const first = new Set(named.map((n) => n.url));
    const items = [
      ...named.map((n) => ({ ...n, retrievalScore: 100 })),
      ...plain.filter((r) => !first.has(r.url)),
    ].slice(0, numResults);
    return { items };
  }

  private *itemsOf(
    sites: ReadonlySet<string> | undefined,
    types: ReadonlySet<string> | undefined,
  ): Iterable<StoredItem> {
    for (const item of this.items.values()) {
      if (sites && !sites.has(item.site)) continue;
      if (types && !types.has(item['@type'])) continue;
      yield item;
    }
  }

  /** URLs ranked by the hybrid text search among `allowed`. */
  private async textRanks(
    text: string,
    allowed: ReadonlySet<string>,
    depth: number,
    keywordOnly = false,
    sites?: ReadonlySet<string>,
  ): Promise<string[]> {
    const parsed = this.withoutSiteWords(parseQuery(text), sites);
    if (parsed.searchTerms.length === 0) return [];
    const keyword = this.index
      .search(parsed.searchTerms.join(' '), {
        tokenize: (q) => q.split(' '),
        processTerm: (t) => t,
        boost: { ...FIELD_BOOSTS },
        combineWith: 'OR',
        prefix: (term, i, terms) => i === terms.length - 1 && term.length >= 4,
        fuzzy: (term) => (term.length >= 6 ? 1 : false),
        weights: { fuzzy: 0.3, prefix: 0.4 },
        filter: (r) => allowed.has(r.id as string),
      })
      .slice(0, depth)
      .map((r) => r.id as string);
    let vector: string[] = [];
    if (!keywordOnly && this.vectors && this.embedder && this.vectors.size > 0) {
      const [qv] = await this.embedder.embed([text], 'query');
      if (qv)
        vector = this.vectors
          .search(Float32Array.from(qv), depth, (id) => allowed.has(id), MIN_VECTOR_SCORE)
          .map((h) => h.id);
    }
    const fused = reciprocalRankFusion([keyword, vector], RRF_K, [KEYWORD_WEIGHT, VECTOR_WEIGHT]);
    return [...fused.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([id]) => id);
  }

  /** Each asked site's profile; those whose version the caller has come back marked unchanged. */
  profiles(
    site: readonly string[],
    known: Readonly<Record<string, string>> = {},
  ): Array<SiteProfile | { site: string; version: string; unchanged: true }> {
    return this.catalog.profiles(site, known);
  }

  /** The stretches of a text that are item names of these sites. */
  findNames(text: string, site: readonly string[], isCommonWord?: (w: string) => boolean): NameMatch[] {
    const sites = site.includes('all') ? undefined : new Set(site);
    return this.catalog.names.find(text, sites, isCommonWord);
  }

  /** Items by URL (unknown URLs left out). */
  getItems(urls: readonly string[]): StoredItem[] {
    return urls.map((u) => this.items.get(u)).filter((x): x is StoredItem => x !== undefined);
  }

  /**
   * A query's terms without the words the site's items nearly all carry ("movie" on a movie
   * site): they tell no item from another and make the keyword search score every item.
   * A query of nothing else keeps them.
   */
  private withoutSiteWords(parsed: ParsedQuery, sites: ReadonlySet<string> | undefined): ParsedQuery {
    const common = new Set<string>();
    for (const site of sites ?? this.catalog.siteNames)
      for (const w of this.catalog.profile(site)?.siteWords ?? []) common.add(stem(w));
    const kept = parsed.searchTerms.filter((t) => !common.has(t));
    return kept.length === 0 || kept.length === parsed.searchTerms.length
      ? parsed
      : { ...parsed, searchTerms: kept };
  }

  private async hybridSearch(params: SearchParams): Promise<RetrievedItem[]> {
    const sites = params.site.includes('all') ? undefined : new Set(params.site);
    const parsed = this.withoutSiteWords(parseQuery(params.query), sites);
    if (parsed.searchTerms.length === 0) return [];
    const numResults = params.numResults ?? 50;
    const depth = Math.max(100, numResults * 2);
    const types = params.types?.length ? new Set(params.types) : undefined;
    const keyword = this.keywordSearch(parsed, sites, types).slice(0, depth);
    const vector = await this.vectorSearch(params.query, sites, types, depth);
    const fused = reciprocalRankFusion([keyword.map((r) => r.id), vector.map((r) => r.id)], RRF_K, [
      KEYWORD_WEIGHT,
      VECTOR_WEIGHT,
    ]);
    const ranked = [...fused.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const out: RetrievedItem[] = [];
    for (const [id, score] of ranked) {
      const item = this.items.get(id);
      if (!item) continue;
      out.push({ ...item, retrievalScore: Math.round(score * 1e6) / 1e4 });
      if (out.length >= numResults) break;
    }
    return out;
  }

  /**
   * The keyword half: BM25+ over the weighted fields (name > people, categories > text), any
   * query term may match (OR), a little fuzziness for typos, prefix on the last term; a
   * query's numeric intents ("fuel efficient", "best") raise items whose numbers fit, and
   * items of a type it names ("cars") come before others.
   */
  private keywordSearch(
    parsed: ParsedQuery,
    sites: Set<string> | undefined,
    types: Set<string> | undefined,
  ): { id: string; score: number }[] {
    return this.index
      .search(parsed.searchTerms.join(' '), {
        // the terms are already analyzed: split them apart again, change nothing
        tokenize: (q) => q.split(' '),
        processTerm: (t) => t,
        boost: { ...FIELD_BOOSTS },
        combineWith: 'OR',
        prefix: (term, i, terms) => i === terms.length - 1 && term.length >= 4,
        fuzzy: (term) => (term.length >= 6 ? 1 : false),
        weights: { fuzzy: 0.3, prefix: 0.4 },
        filter: (r) => (!sites || sites.has(r.site as string)) && (!types || types.has(r.type as string)),
      })
      .map((r) => ({ id: r.id as string, score: r.score }));
  }

  /**
   * The vector half: cosine between the query's vector and every stored item's (brute force),
   * the same filters, the same preference for items of a named type and for numbers that fit.
   */
  private async vectorSearch(
    query: string,
    sites: Set<string> | undefined,
    types: Set<string> | undefined,
    depth: number,
  ): Promise<{ id: string; score: number }[]> {
    if (!this.vectors || !this.embedder || this.vectors.size === 0) return [];
    const [qv] = await this.embedder.embed([query], 'query');
    if (!qv) return [];
    return this.vectors.search(
      Float32Array.from(qv),
      depth,
      (id) => {
        const item = this.items.get(id);
        if (!item) return false;
        if (sites && !sites.has(item.site)) return false;
        return !types || types.has(item['@type']);
      },
      MIN_VECTOR_SCORE,
    );
  }

  /**
   * Adds or replaces items by URL, so loading the same site twice leaves the same count.
   * Every item must belong to `site`. With a dataDir the change is in the journal, on disk,
   * when this returns; `persist` writes a snapshot (for a fast start, not for safety).
   */
  async upsert(site: string, items: readonly StoredItem[], opts: UpsertOptions = {}): Promise<UpsertResult> {
    const wrong = items.find((i) => i.site !== site);
    if (wrong) throw new StoreInputError(`item ${wrong.url} belongs to site "${wrong.site}", not "${site}"`);
    const latest = latestByUrl(items);
    // vectors first: if the embedder fails, nothing has changed
    const vectors = await this.embedDocuments(latest);
    return this.exclusive(async () => {
      // H2 (issue 19): another site's URL stays there unless the caller moves it (cross-site.ts).
      const refused = opts.move ? [] : heldElsewhere(latest, site, (url) => this.items.get(url)?.site);
      const gone = new Set(refused.map((r) => r.url));
      const kept = gone.size ? latest.filter((i) => !gone.has(i.url)) : latest;
      const keptVectors = gone.size ? vectors.filter((_, n) => !gone.has(latest[n]!.url)) : vectors;
      // journaled before applied: if the write fails, nothing has changed either
      await this.journal?.append({ op: 'upsert', site, items: kept });
      this.applyUpsert(kept, keptVectors);
      this.snapshotIfJournalLarge();
      return { upserted: kept.length, total: this.items.size, ...(refused.length ? { refused } : {}) };
    });
  }

  private async embedDocuments(items: readonly StoredItem[]): Promise<number[][]> {
    if (!this.embedder || items.length === 0) return [];
    return this.embedder.embed(
      items.map((i) => embeddingText(i).text),
      'document',
    );
  }

  private applyUpsert(items: readonly StoredItem[], vectors: readonly number[][]): void {
    items.forEach((item, n) => {
      const doc = toDoc(item);
      const old = this.items.get(item.url);
      if (old) {
        const o = embeddingText(old);
        this.vocabulary.forget(o.text, o.categories);
        this.catalog.remove(old);
      }
      this.catalog.add(item);
      if (this.index.has(item.url)) this.index.replace(doc);
      else this.index.add(doc);
      this.items.set(item.url, item);
      const e = embeddingText(item);
      this.vocabulary.observe(e.text, e.categories);
      const v = vectors[n];
      if (v && this.vectors) this.vectors.set(item.url, v);
    });
  }

  /** Removes every item of a site (journaled first, like upsert); the number removed. */
  async deleteSite(site: string): Promise<number> {
    return this.exclusive(async () => {
      if (![...this.items.values()].some((i) => i.site === site)) return 0;
      await this.journal?.append({ op: 'deleteSite', site });
      return this.applyDeleteSite(site);
    });
  }

  private applyDeleteSite(site: string): number {
    let deleted = 0;
    for (const [url, item] of this.items) {
      if (item.site !== site) continue;
      this.catalog.remove(item);
      this.index.discard(url);
      this.items.delete(url);
      this.vectors?.delete(url);
      const e = embeddingText(item);
      this.vocabulary.forget(e.text, e.categories);
      deleted++;
    }
    return deleted;
  }

  /** Runs changes and snapshot captures one after another, in call order. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.lock.then(work, work);
    this.lock = run.catch(() => undefined);
    return run;
  }

  /** Each site with its item count and @types (the main ones first, by count), by name. */
  sites(): SiteInfo[] {
    return this.catalog.siteNames.map((name) => {
      const p = this.catalog.profile(name)!;
      const main = new Set(p.mainTypes);
      const types = [...p.mainTypes, ...p.types.map((t) => t.type).filter((t) => !main.has(t))];
      return { name, itemCount: p.itemCount, types };
    });
  }

  /**
   * Writes a snapshot: the vectors, index.json and items.json (each atomically: temp file,
   * fsync, rename; items.json last, as the commit), serialized at one instant under the change
   * lock and tied together by hashes, so a crash between the renames is noticed on open and
   * repaired by re-indexing. The journal moves to a new generation at that instant; the old
   * generations are removed only once items.json (which names the last one it includes) is on
   * disk. Changes go on while the files are written; snapshots are written one after another.
   */
  async persist(): Promise<void> {
    const dir = this.dataDir;
    if (!dir) return;
    const { written } = await this.exclusive(async () => {
      const snapshot = this.serialize(this.journal?.generation ?? 0);
      await this.journal?.rotate();
      const write = (): Promise<void> => this.writeSnapshot(dir, snapshot);
      const next = this.writes.then(write, write);
      this.writes = next.catch(() => undefined);
      return { written: next };
    });
    await written;
  }

  /** Stops journaling (waits for changes in flight); the store must not be changed after. */
  async close(): Promise<void> {
    await this.exclusive(async () => {
      await this.writes;
      await this.journal?.close();
    });
  }

  private serialize(journalGeneration: number): Snapshot {
    const indexText = JSON.stringify(this.index);
    const ids = [...this.items.keys()];
    const vectors =
      this.vectors && this.embedder
        ? {
            meta: JSON.stringify({ embedder: this.embedder.id, dimensions: this.vectors.dimensions, ids }),
            bin: this.vectors.serialize(ids),
          }
        : undefined;
    const itemsText = JSON.stringify({
      format: 1,
      analyzer: ANALYZER_VERSION,
      indexSha256: sha256(indexText),
      ...(vectors ? { vectorsSha256: sha256Parts(vectors.meta, vectors.bin) } : {}),
      journal: journalGeneration,
      items: [...this.items.values()],
    });
    return { journalGeneration, indexText, itemsText, vectors };
  }

  private async writeSnapshot(dir: string, snapshot: Snapshot): Promise<void> {
    await mkdir(dir, { recursive: true });
    if (snapshot.vectors) {
      await writeFileAtomic(join(dir, VECTORS_FILE), snapshot.vectors.bin);
      await writeFileAtomic(join(dir, VECTORS_META_FILE), snapshot.vectors.meta);
    }
    await writeFileAtomic(join(dir, INDEX_FILE), snapshot.indexText);
    await writeFileAtomic(join(dir, ITEMS_FILE), snapshot.itemsText);
    // the new names must be on disk before the journal they replace goes
    await syncDir(dir);
    await this.journal?.removeThrough(snapshot.journalGeneration);
  }

  /** A snapshot in the background once the journal is large, so opening stays fast. */
  private snapshotIfJournalLarge(): void {
    if (!this.journal || this.snapshotting || this.journal.pendingBytes < this.snapshotAfterBytes) return;
    this.snapshotting = true;
    this.persist()
      .catch((err: unknown) => this.onBackgroundError?.(err))
      .finally(() => (this.snapshotting = false));
  }
}

/** The items with repeated URLs removed, the last of each winning. */
function latestByUrl(items: readonly StoredItem[]): StoredItem[] {
  return [...new Map(items.map((i) => [i.url, i])).values()];
}
