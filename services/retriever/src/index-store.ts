import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import {
  StoredItem,
  type Constraint,
  type NameMatch,
  type RetrievedItem,
  type SearchOutcome,
  type SiteInfo,
  type SiteProfile,
  type Order,
  type Target,
  type Understanding,
} from '@askbus/contracts';
import {
  compileConstraints,
  FACTS_VERSION,
  derivedQuantity,
  fitOfValue,
  hasStructure,
  nameKey,
  quantilesOfSorted,
  SiteCatalog,
  type CatalogSnapshot,
} from '@askbus/understand';
import { structuredSearch, type Selection } from './structured-search';
import {
  LocalEmbeddings,
  Vocabulary,
  type EmbeddingProvider,
  type VocabularySnapshot,
} from '@askbus/embeddings';
import { Journal, syncDir, type JournaledItems, type JournalRecord, type JournalReplay } from './journal';
import { heldElsewhere, type UpsertOptions, type UpsertResult } from './cross-site';
import { reciprocalRankFusion, VectorIndex } from './vectors';
import {
  ANALYZER_VERSION,
  DocSet,
  flattenItem,
  KeywordIndex,
  parseQuery,
  sortByKeys,
  stem,
  type ParsedQuery,
} from '@askbus/search-core';
import { docsOf, FactColumns, type FactColumn } from './columns';
import { ItemBytes, type ItemRef } from './items';
import { UrlOrder } from './url-order';
import {
  codesFile,
  docsFile,
  graphFile,
  INDEX_FILES_FORMAT,
  INDEX_FORMAT,
  keywordFile,
  LAYOUT_FILE,
  Manifest,
  lineChunks,
  MANIFEST_FILE,
  packSections,
  parseSegment,
  readSegmentBytes,
  readWhole,
  segmentFile,
  writeFileAtomic,
  type IndexFiles,
  type SegmentInfo,
  type SegmentRecord,
  unpackSections,
} from './segments';

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
  /** Directory for the segments, the indexes and the journal; without it the store lives in memory only. */
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
  /** Items of one upsert embedded, journaled and applied together; a larger load is split (default 10,000). */
  upsertBatch?: number;
}

/** How `open` found its data. */
export type OpenedFrom = 'empty' | 'disk' | 'rebuilt';

const DEFAULT_SNAPSHOT_AFTER_BYTES = 64 * 1024 * 1024;
/**
 * The indexes are written again once this many items (or this share of all) are not in them,
 * at an explicit `persist` (the end of a load) and on open: a restart then re-applies at most
 * this many items.
 */
const INDEX_LAG_ITEMS = 2_000;
/**
 * The same for the snapshots a load's journal triggers on its own as it grows: rewriting every
 * index file at each of them cost a 30k load a quarter of its speed (2,072 → 1,585 items/s).
 */
const BACKGROUND_INDEX_LAG_ITEMS = 20_000;
const INDEX_LAG_SHARE = 0.1;
/** Items the index files may lag behind the segments (and the journal) by. */
const indexLagLimit = (items: number, lagItems: number): number =>
  Math.min(lagItems, Math.max(1, items * INDEX_LAG_SHARE));
/** Segments are merged into one when they hold this many times more lines than there are items. */
const COMPACT_LINES_FACTOR = 2;
const MAX_SEGMENTS = 32;

/** The snapshot of the old layout (one items.json): read once, then replaced by segments. */
const LEGACY_ITEMS_FILE = 'items.json';
const LEGACY_FILES = ['items.json', 'index.json', 'vectors.bin', 'vectors.json'];
const LegacyItems = z.object({
  format: z.literal(1),
  items: z.array(StoredItem),
  journal: z.number().int().nonnegative().optional(),
});

/**
 * The catalog section of an index generation: the profiles, the vocabulary, and how many items
 * they count (JSON; the names are a section of their own, as SiteCatalog.snapshot's bytes).
 */
interface SavedCatalog {
  items: number;
  profiles: CatalogSnapshot['profiles'];
  vocabulary: VocabularySnapshot;
}
const SavedCatalog = z.object({
  items: z.number().int().nonnegative(),
  // written by this store with its index: shapes checked by the classes that read them
  profiles: z.array(
    z.custom<CatalogSnapshot['profiles'][number]>((v) => !!v && typeof v === 'object' && 'site' in v),
  ),
  vocabulary: z.custom<VocabularySnapshot>((v) => !!v && typeof v === 'object' && 'counts' in v),
});

/** The site and type sets of an index generation: each name with its documents. */
interface SavedFilters {
  sites: Array<[string, number[]]>;
  types: Array<[string, number[]]>;
}

/** The filters file checked with plain loops: its document lists hold every item (a schema library's parse of 300k numbers cost ~0.1 s). */
function checkedFilters(v: unknown): SavedFilters {
  const sets = (x: unknown, what: string): Array<[string, number[]]> => {
    if (!Array.isArray(x)) throw new Error(`the ${what} filters are damaged`);
    for (const e of x) {
      if (!Array.isArray(e) || e.length !== 2 || typeof e[0] !== 'string' || !Array.isArray(e[1]))
        throw new Error(`the ${what} filters are damaged`);
      for (const d of e[1] as unknown[])
        if (typeof d !== 'number' || !Number.isInteger(d) || d < 0)
          throw new Error(`the ${what} filters are damaged`);
    }
    return x as Array<[string, number[]]>;
  };
  if (!v || typeof v !== 'object') throw new Error('the filters are damaged');
  const o = v as Record<string, unknown>;
  return { sites: sets(o.sites, 'site'), types: sets(o.types, 'type') };
}

/** RRF constant and list weights: the keyword list leads, the vector list adds what words miss. */
const RRF_K = 60;
const KEYWORD_WEIGHT = 1;
const VECTOR_WEIGHT = 0.7;
/** Vector hits below this cosine are noise, not meaning. */
const MIN_VECTOR_SCORE = 0.08;
const DEFAULT_UPSERT_BATCH = 10_000;
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

/** A JSON array of strings (the document URLs; "" for a freed document), checked without a schema library: 300k entries. */
function stringArray(v: unknown): string[] {
  if (!Array.isArray(v)) throw new Error('the document list is not an array');
  for (const x of v) if (typeof x !== 'string') throw new Error('the document list holds a non-string');
  return v as string[];
}

/** Temp files of a write that was killed before its rename: never read, only in the way. */
async function removeTempFiles(dir: string): Promise<void> {
  for (const f of await readdir(dir)) if (f.endsWith('.tmp')) await rm(join(dir, f), { force: true });
}

async function readIfExists(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * What a snapshot writes, captured at one instant under the change lock. Its parts are let go
 * as each file is written (`take`), not all at once when the last one is.
 */
interface Snapshot {
  journalGeneration: number;
  /** The new segment (absent when nothing changed). */
  segment: { id: number; lines: ItemRef[] | undefined; held: number[] } | undefined;
  /** Segments the manifest lists after this snapshot (the new one included). */
  segments: SegmentInfo[];
  /** New index files (the graph is written already, under a temp name). */
  index:
    | {
        files: IndexFiles;
        /** The document list's JSON, in chunks. */
        docs: Iterable<string> | undefined;
        /** The postings, the fact columns and the catalog, as sections of one file. */
        keyword: Buffer[] | undefined;
        /** The keyword index whose postings `keyword` holds as they lie, and that save's number. */
        postings: { index: KeywordIndex; save: number };
        codes: Buffer[] | undefined;
        /**
         * A load's end (`persist`): the graph's version as saved, so that once its file is
         * committed the graph is searched there instead of in memory (VectorIndex.viewSaved).
         */
        viewGraph?: number;
      }
    | undefined;
  /** The index files the manifest names after this snapshot. */
  indexFiles: IndexFiles | undefined;
}

/**
 * The retriever's index: schema.org items by URL, searchable by keywords (BM25 over impact
 * postings, search-core's KeywordIndex) and by meaning (an HNSW graph, vectors.ts), fused by
 * rank; filtered by site and type through per-site and per-type document sets, persisted to
 * `dataDir`. Usable in-process without NATS.
 *
 * Items are numbered (documents) for the indexes; a replaced item gets a new number and its
 * old one is dropped from the indexes. Items are kept as bytes (items.ts: read from their
 * segment, decoded only for the items returned); their facts as per-property columns
 * (columns.ts), which answer constraints, superlatives and derived quantities without looking
 * at any item. On disk: item segments and the indexes (segments.ts; the keyword file also holds
 * the columns, the profiles, names and vocabulary, each document's line and the site and type
 * sets, so a reopen reads them instead of analysing the items), plus a journal of every change
 * since (see Journal). A change is journaled and fsync'd before it is applied and before
 * `upsert`/`deleteSite` return, so what they acknowledged survives a kill at any moment.
 */
export class IndexStore {
  /** The items as their JSON bytes, decoded only when asked for (items.ts). */
  private readonly items = new ItemBytes();
  private readonly docOf = new Map<string, number>();
  /** Document number → URL ('' once dropped). */
  private urls: string[] = [];
  private keyword = new KeywordIndex();
  private readonly siteDocs = new Map<string, DocSet>();
  private readonly typeDocs = new Map<string, DocSet>();
  /** Changes since the last snapshot: true when upserted (the item is in `items`), false when deleted. */
  private dirty = new Map<string, boolean>();
  private segments: SegmentInfo[] = [];
  /** Each property's values and numbers → documents, built when a constraint first needs it; dropped on any change. */
  /** Every indexed item's facts as columns (columns.ts), kept as items are indexed and saved with the indexes. */
  private factColumns = new FactColumns();
  /** Every live document (dropped with the columns on any change). */
  private allDocs: DocSet | undefined;
  /** Quantiles of orders without the profile's (derived quantities), by target and pool; dropped on any change. */
  private readonly quantileCache = new Map<string, number[] | undefined>();
  /** Every document with a target's number, ascending by it (built on first use, dropped on any change). */
  private readonly sortedCache = new Map<string, SortedTarget>();
  private indexFiles: IndexFiles | undefined;
  private nextSegment = 1;
  private nextGeneration = 1;
  private writes: Promise<void> = Promise.resolve();
  /** Changes and snapshot captures run one at a time, so journal order is the order applied. */
  private lock: Promise<unknown> = Promise.resolve();
  private journal: Journal | undefined;
  private _replayed: JournalReplay = { records: 0, tornBytes: 0 };
  private snapshotting = false;
  private readonly snapshotAfterBytes: number;
  private readonly upsertBatchSize: number;
  private readonly onBackgroundError: ((err: unknown) => void) | undefined;
  private _openedFrom: OpenedFrom = 'empty';
  private _vectorsFrom: 'disk' | 'computed' | 'none' = 'none';
  readonly vocabulary = new Vocabulary();
  /** Each site's profile, the names index and every item's facts, kept with the items. */
  readonly catalog = new SiteCatalog(false);
  readonly embedder: EmbeddingProvider | undefined;
  private vectors: VectorIndex | undefined;

  private constructor(
    private readonly dataDir: string | undefined,
    embedder: IndexStoreOptions['embedder'],
    opts: IndexStoreOptions,
  ) {
    this.snapshotAfterBytes = opts.snapshotAfterBytes ?? DEFAULT_SNAPSHOT_AFTER_BYTES;
    this.upsertBatchSize = Math.max(1, opts.upsertBatch ?? DEFAULT_UPSERT_BATCH);
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
   * Opens the store: the segments in dataDir, with the indexes read from disk (no re-indexing)
   * and only the items of later segments indexed again; everything re-indexed when the index
   * files are missing, damaged or from another analyzer or index version. Then the journal of
   * changes since, replayed on top. A damaged manifest or segment is an error: better to stop
   * than to start empty and lose a site without a word.
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
    // an index far behind its items (a large journal, later segments) is brought up to date now,
    // so the next open reads it instead of applying those items again
    if (needsSnapshot || journal.pendingBytes >= store.snapshotAfterBytes || store.indexLagging())
      await store.persist();
    return store;
  }

  /** Whether the index files are behind the items (segments and journal) by more than INDEX_LAG_ITEMS. */
  private indexLagging(): boolean {
    const lagging = this.recordsPastIndex(this.segments) + this.dirty.size;
    // a small store's few items are quickly applied again: only a lag of many is written on open
    return lagging > INDEX_LAG_ITEMS;
  }

  /** Records of `segments` written after the index files' last segment: what the index lags by on disk. */
  private recordsPastIndex(segments: readonly SegmentInfo[]): number {
    const through = this.indexFiles?.throughSegment ?? -1;
    return segments.filter((s) => s.id > through).reduce((n, s) => n + s.records, 0);
  }

  /** One open with a data directory (what a benchmark needs): `IndexStore.open({ dataDir })`. */
  static async openDir(dataDir: string, embedder?: IndexStoreOptions['embedder']): Promise<IndexStore> {
    return IndexStore.open({ dataDir, ...(embedder === undefined ? {} : { embedder }) });
  }

  /** Reads the manifest, the segments and the indexes; whether a snapshot must be written, and the journal generation included. */
  private async loadSnapshot(dir: string): Promise<{ journalGeneration: number; needsSnapshot: boolean }> {
    const manifestPath = join(dir, MANIFEST_FILE);
    const manifestBytes = await readIfExists(manifestPath);
    if (manifestBytes === undefined) return this.loadLegacy(dir);
    let manifest: Manifest;
    try {
      manifest = Manifest.parse(JSON.parse(manifestBytes.toString('utf8')));
    } catch (err) {
      throw new Error(
        `${manifestPath} is not a readable askbus index: ${err instanceof Error ? err.message : err}`,
      );
    }
    this.segments = manifest.segments;
    this.nextSegment = Math.max(0, ...manifest.segments.map((s) => s.id)) + 1;
    this.nextGeneration = (manifest.index?.generation ?? 0) + 1;

    // the segments the indexes were written with, opened: the index says where each item's line is
    const through = manifest.index?.throughSegment ?? -1;
    for (const seg of manifest.segments) {
      if (seg.id > through) continue;
      const path = join(dir, segmentFile(seg.id));
      const size = this.items.attach(seg.id, path);
      if (size !== seg.bytes) throw new Error(`${path} has ${size} bytes, the manifest says ${seg.bytes}`);
    }

    const loaded = await this.loadIndexes(dir, manifest.index);
    if (loaded) {
      // the items, indexes, columns, profiles and vocabulary are read as written: nothing is
      // parsed or analysed again but what changed after them (later segments), applied as those
      // changes were
      for (const seg of manifest.segments) {
        if (seg.id <= through) continue;
        const path = join(dir, segmentFile(seg.id));
        const bytes = await readSegmentBytes(path, seg.bytes);
        const lines: Array<{ record: SegmentRecord; start: number; end: number }> = [];
        parseSegment(path, bytes, (record, start, end) => lines.push({ record, start, end }));
        await this.applyRecords(lines.map((l) => l.record));
        // the items are read from their lines in this segment: nothing of it to write again
        this.items.attach(seg.id, path);
        for (const { record, start, end } of lines)
          if (!('deleted' in record) && this.items.has(record.url))
            this.items.setLine(record.url, seg.id, start, end - start);
      }
      // those changes are in the segments already
      this.dirty.clear();
      this.indexFiles = manifest.index;
      this._openedFrom = 'disk';
      return { journalGeneration: manifest.journal, needsSnapshot: this._vectorsFrom === 'computed' };
    }
    // every segment in order, later ones winning, then everything indexed anew
    this.items.clear();
    for (const seg of manifest.segments) {
      const path = join(dir, segmentFile(seg.id));
      const bytes = await readSegmentBytes(path, seg.bytes);
      this.items.attach(seg.id, path);
      parseSegment(path, bytes, (r, start, end) => {
        if ('deleted' in r) this.items.delete(r.deleted);
        else this.items.setLine(r.url, seg.id, start, end - start);
      });
    }
    await this.rebuildIndexes();
    this._openedFrom = 'rebuilt';
    return { journalGeneration: manifest.journal, needsSnapshot: true };
  }

  /** A data directory of the old layout (items.json): its items, indexed anew and written as segments. */
  private async loadLegacy(dir: string): Promise<{ journalGeneration: number; needsSnapshot: boolean }> {
    const path = join(dir, LEGACY_ITEMS_FILE);
    const text = await readIfExists(path);
    if (text === undefined) return { journalGeneration: 0, needsSnapshot: false };
    let saved: z.infer<typeof LegacyItems>;
    try {
      saved = LegacyItems.parse(JSON.parse(text.toString('utf8')));
    } catch (err) {
      throw new Error(`${path} is not a readable askbus index: ${err instanceof Error ? err.message : err}`);
    }
    for (const item of saved.items) {
      this.items.set(item);
      this.dirty.set(item.url, true);
    }
    await this.rebuildIndexes();
    this._openedFrom = 'rebuilt';
    return { journalGeneration: saved.journal ?? 0, needsSnapshot: true };
  }

  /** Reads the index files the manifest names; false when they are missing, stale or damaged. */
  private async loadIndexes(dir: string, files: IndexFiles | undefined): Promise<boolean> {
    // facts read by another version of the extractor (new units, say) are made again from the items
    if (
      !files ||
      files.analyzer !== ANALYZER_VERSION ||
      files.format !== INDEX_FILES_FORMAT ||
      (files.facts ?? 2) !== FACTS_VERSION
    )
      return false;
    // the files read at once, each in one call (the vector codes too, when they fit this embedder)
    const docsRead = readWhole(join(dir, docsFile(files.generation)));
    const keywordRead = readWhole(join(dir, keywordFile(files.generation)));
    const codesFit =
      !!this.vectors &&
      !!this.embedder &&
      files.embedder === this.embedder.id &&
      files.dimensions === this.vectors.dimensions;
    // a failed read is answered where it is awaited; until then it must not be unhandled
    for (const r of [docsRead, keywordRead]) r.catch(() => undefined);
    try {
      const docsBytes = await docsRead;
      const urls = stringArray(JSON.parse(docsBytes.toString('utf8')));
      // the keyword file: the postings, the fact columns, the profiles and vocabulary, the names
      const [postings, columnBytes, catalogBytes, nameBytes, locationBytes, filterBytes] = unpackSections(
        await keywordRead,
        6,
      ) as [Buffer, Buffer, Buffer, Buffer, Buffer, Buffer];
      const keyword = KeywordIndex.load(postings);
      for (let doc = 0; doc < urls.length; doc++)
        if (urls[doc] && !keyword.has(doc)) throw new Error('keyword index misses documents');
      const columns = FactColumns.load(columnBytes);
      const saved = SavedCatalog.parse(JSON.parse(catalogBytes.toString('utf8')));
      // each document's line: segment, offset, length
      if (locationBytes.length !== urls.length * 24) throw new Error('the item locations are damaged');
      const locations = new Float64Array(urls.length * 3);
      new Uint8Array(locations.buffer).set(locationBytes);
      this.items.reserve(urls.length);
      urls.forEach((url, doc) => {
        if (!url) return;
        this.items.setLine(url, locations[doc * 3]!, locations[doc * 3 + 1]!, locations[doc * 3 + 2]!);
      });
      if (saved.items !== this.items.size) throw new Error('the catalog is of other items');
      const filters = checkedFilters(JSON.parse(filterBytes.toString('utf8')));
      urls.forEach((url, doc) => {
        if (url) this.docOf.set(url, doc);
      });
      // the names' URLs are the documents' own strings: one copy of 300k URLs, not two
      this.catalog.restore({ profiles: saved.profiles, names: nameBytes }, (doc) => urls[doc] || undefined);
      this.vocabulary.restore(saved.vocabulary);
      this.factColumns = columns;
      this.keyword = keyword;
      this.urls = urls;
      for (const [name, docs] of filters.sites) this.siteDocs.set(name, DocSet.of(docs, urls.length));
      for (const [name, docs] of filters.types) this.typeDocs.set(name, DocSet.of(docs, urls.length));
    } catch {
      this.keyword = new KeywordIndex();
      this.urls = [];
      this.docOf.clear();
      this.items.clear();
      return false;
    }
    this.invalidate();
    const vectors = this.vectors;
    if (!vectors || !this.embedder) return true;
    let fromDisk = false;
    // the codes read once the keyword file's buffer is let go (both at once raise the peak for good)
    if (codesFit) {
      try {
        const codes = await readWhole(join(dir, codesFile(files.generation)));
        vectors.load(join(dir, graphFile(files.generation)), codes);
        fromDisk = true;
      } catch {
        this.vectors = new VectorIndex(vectors.dimensions);
      }
    }
    this._vectorsFrom = fromDisk ? 'disk' : 'computed';
    if (!fromDisk) {
      const docs: number[] = [];
      const items: StoredItem[] = [];
      this.urls.forEach((url, doc) => {
        const item = url ? this.items.get(url) : undefined;
        if (item) {
          docs.push(doc);
          items.push(item);
        }
      });
      await this.embedInto(docs, items);
    }
    return true;
  }

  /** Indexes every item from scratch. */
  private async rebuildIndexes(): Promise<void> {
    this.catalog.clear();
    this.vocabulary.restore({ docs: 0, changes: this.vocabulary.version, counts: [], categories: [] });
    this.factColumns = new FactColumns();
    this.invalidate();
    this.keyword = new KeywordIndex();
    this.urls = [];
    this.docOf.clear();
    this.siteDocs.clear();
    this.typeDocs.clear();
    if (this.vectors) this.vectors = new VectorIndex(this.vectors.dimensions);
    // decoded a batch at a time: never every item as objects at once
    let batch: StoredItem[] = [];
    for (const item of this.items.values()) {
      batch.push(item);
      if (batch.length >= EMBED_BATCH) {
        await this.indexItems(batch);
        batch = [];
      }
    }
    await this.indexItems(batch);
    this.indexFiles = undefined;
    if (this.vectors) this._vectorsFrom = 'computed';
  }

  /** Numbers items that have no document and puts them in every index, the catalog and the vocabulary (items already in `items`). */
  private async indexItems(items: readonly StoredItem[]): Promise<void> {
    const docs: number[] = [];
    for (const item of items) {
      const doc = this.urls.length;
      this.urls.push(item.url);
      this.docOf.set(item.url, doc);
      this.factColumns.add(doc, this.catalog.add(item));
      const { text, categories } = embeddingText(item);
      this.vocabulary.observe(text, categories);
      this.keyword.add(doc, flattenItem(item));
      this.addFilters(doc, item);
      docs.push(doc);
    }
    await this.embedInto(docs, items);
  }

  private async embedInto(docs: readonly number[], items: readonly StoredItem[]): Promise<void> {
    const vectors = this.vectors;
    if (!vectors || !this.embedder) return;
    for (let i = 0; i < items.length; i += EMBED_BATCH) {
      const batch = items.slice(i, i + EMBED_BATCH);
      const out = await this.embedder.embed(
        batch.map((it) => embeddingText(it).text),
        'document',
      );
      vectors.setMany(docs.slice(i, i + EMBED_BATCH), out);
    }
  }

  private addFilters(doc: number, item: StoredItem): void {
    setOf(this.siteDocs, item.site).add(doc);
    setOf(this.typeDocs, item['@type']).add(doc);
  }

  /** Takes a document out of every index (its item is gone or replaced). */
  private dropDoc(doc: number, item: StoredItem | undefined): void {
    const url = this.urls[doc];
    if (!url) return;
    this.keyword.remove(doc, item ? flattenItem(item) : undefined);
    this.vectors?.delete(doc);
    if (item) {
      this.siteDocs.get(item.site)?.delete(doc);
      this.typeDocs.get(item['@type'])?.delete(doc);
    }
    this.urls[doc] = '';
    if (this.docOf.get(url) === doc) this.docOf.delete(url);
  }

  /** Applies a later segment's lines on open, as the changes they record were applied (upserts in batches, deletions). */
  private async applyRecords(records: readonly SegmentRecord[]): Promise<void> {
    let batch: StoredItem[] = [];
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      const items = latestByUrl(batch);
      batch = [];
      this.applyUpsert(items, await this.embedDocuments(items));
    };
    for (const r of records) {
      if ('deleted' in r) {
        await flush();
        this.applyDelete(r.deleted);
      } else {
        batch.push(r);
        if (batch.length >= EMBED_BATCH) await flush();
      }
    }
    await flush();
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

  /** Number of items over all sites. */
  get size(): number {
    return this.items.size;
  }

  /** Bytes of items held in memory, in no file yet (a journal replayed on open; a store without a dataDir). */
  get heldItemBytes(): number {
    return this.items.ownBytes;
  }

  get(url: string): StoredItem | undefined {
    return this.items.get(url);
  }

  /**
   * Best matches first: BM25 over the weighted fields (name > people, categories > text),
   * any query term may match (OR), a little fuzziness for typos, prefix on the last term,
   * fused with the nearest vectors.
   */
  async search(params: SearchParams): Promise<RetrievedItem[]> {
    return (await this.searchWithOutcome(params)).items;
  }

  /**
   * Search, and with an understanding what its constraints did: structured questions filter and
   * sort the items of the sites (structured-search.ts); plain ones take the hybrid path below,
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
          facts: (item) => this.catalog.facts(item),
          select: (constraints, s, t) => this.select(constraints, s, t),
          quantiles: (target, s, t) => this.quantiles(target, s, t),
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

  /**
   * The documents of these sites and types, as one set (undefined: no filter). From the
   * per-site and per-type sets, so no item is looked at.
   */
  private filterOf(
    sites: ReadonlySet<string> | undefined,
    types: ReadonlySet<string> | undefined,
  ): DocSet | undefined {
    const pick = (index: Map<string, DocSet>, names: ReadonlySet<string>): DocSet => {
      const sets = [...names].map((n) => index.get(n)).filter((s): s is DocSet => s !== undefined);
      return sets.length === 1 ? sets[0]! : DocSet.union(sets);
    };
    const s = sites ? pick(this.siteDocs, sites) : undefined;
    const t = types ? pick(this.typeDocs, types) : undefined;
    return s && t ? DocSet.intersection(s, t) : (s ?? t);
  }

  /** The live documents of these sites and types (every live document when neither is given). */
  private poolOf(sites: ReadonlySet<string> | undefined, types: ReadonlySet<string> | undefined): DocSet {
    const filter = this.filterOf(sites, types);
    if (filter) return filter;
    if (!this.allDocs) {
      this.allDocs = new DocSet(this.urls.length);
      this.urls.forEach((url, doc) => {
        if (url && this.items.has(url)) this.allDocs!.add(doc);
      });
    }
    return this.allDocs;
  }

  /**
   * The items that pass these constraints, exactly, from the property columns: a range on a
   * property takes the documents with a number in it (by binary search in the sorted numbers),
   * a derived quantity is computed from the columns' first numbers, a value constraint takes the
   * documents of its values (the others, when negated); intersected with each other and with
   * the site and type sets. Constraints no column answers (words a value must contain) are
   * tested on the items left.
   */
  private select(
    constraints: readonly Constraint[],
    sites: ReadonlySet<string> | undefined,
    types: ReadonlySet<string> | undefined,
  ): Selection {
    let set = this.poolOf(sites, types);
    const rest: Constraint[] = [];
    for (const k of constraints) {
      const docs = this.constraintDocs(k, set);
      if (docs) set = DocSet.intersection(set, docs);
      else rest.push(k);
    }
    if (rest.length) {
      const passes = compileConstraints(rest);
      const kept = new DocSet(this.urls.length);
      for (const doc of set.toArray()) {
        const item = this.itemOf(doc);
        if (item && passes(this.catalog.facts(item))) kept.add(doc);
      }
      set = kept;
    }
    return new ColumnSelection(this.selectionSource, set);
  }

  /** What a selection reads of the store. */
  private readonly selectionSource: SelectionSource = {
    item: (doc) => this.itemOf(doc),
    url: (doc) => this.urls[doc] ?? '',
    doc: (url) => this.docOf.get(url),
    column: (path) => this.column(path),
    sorted: (target) => this.sorted(target),
    byUrl: new UrlOrder(() => this.urls),
  };

  private itemOf(doc: number): StoredItem | undefined {
    const url = this.urls[doc];
    return url ? this.items.get(url) : undefined;
  }

  /** The documents of `pool` that pass one constraint, from the columns; undefined when no column answers it. */
  private constraintDocs(k: Constraint, pool: DocSet): DocSet | undefined {
    if (k.kind === 'range') {
      const docs = new DocSet(this.urls.length);
      if ('path' in k.target) {
        const col = this.column(k.target.path);
        addInRange(docs, col.nums, col.numDocs, k);
      } else {
        // a derived quantity's documents in order of it: the range is one stretch of them
        const { docs: sorted, keys } = this.sorted(k.target);
        addInRange(docs, keys, sorted, k);
      }
      return docs;
    }
    const col = this.column(k.path);
    const hits = new DocSet(this.urls.length);
    for (const v of k.values) hits.addAll(docsOf(col.values.get(nameKey(v))));
    if (k.contains.length > 0) {
      // values holding the words in sequence (as compileConstraints tests them)
      const seqs = k.contains.map((seq) => ` ${seq.join(' ')} `);
      for (const [key, docs] of col.values)
        if (seqs.some((q) => ` ${key} `.includes(q))) hits.addAll(docsOf(docs));
    }
    return k.negated ? DocSet.difference(pool, hits) : hits;
  }

  /** 11 quantiles of a target's numbers over the items of these sites and types (kept until a change). */
  private quantiles(
    target: Target,
    sites: ReadonlySet<string> | undefined,
    types: ReadonlySet<string> | undefined,
  ): number[] | undefined {
    const key = JSON.stringify([target, sites && [...sites].sort(), types && [...types].sort()]);
    if (this.quantileCache.has(key)) return this.quantileCache.get(key);
    // the target's numbers in order already: those of the pool taken as they come
    const pool = this.poolOf(sites, types);
    const { docs, keys } = this.sorted(target);
    const values: number[] = [];
    for (let i = 0; i < docs.length; i++)
      if (pool.has(docs[i]!) && Number.isFinite(keys[i])) values.push(keys[i]!);
    const out = quantilesOfSorted(values);
    this.quantileCache.set(key, out);
    return out;
  }

  private column(path: string): FactColumn {
    return this.factColumns.column(path);
  }

  /**
   * A target's documents ascending by its number (ties: lower document first), over every
   * document of the columns (live or not: callers intersect): a property's column order as it
   * is, a derived quantity's computed and sorted once after a change.
   */
  private sorted(target: Target): SortedTarget {
    const key = JSON.stringify(target);
    let out = this.sortedCache.get(key);
    if (out) return out;
    out = sortTarget(target, this.selectionSource);
    this.sortedCache.set(key, out);
    return out;
  }

  /** URLs ranked by the hybrid text search among `allowed`. */
  private async textRanks(
    text: string,
    allowed: ReadonlySet<string> | Selection,
    depth: number,
    keywordOnly = false,
    sites?: ReadonlySet<string>,
  ): Promise<string[]> {
    const parsed = this.withoutSiteWords(parseQuery(text), sites);
    if (parsed.searchTerms.length === 0) return [];
    let filter: DocSet;
    if (allowed instanceof ColumnSelection) filter = allowed.docs;
    else {
      filter = new DocSet(this.urls.length);
      for (const url of allowed as ReadonlySet<string>) {
        const doc = this.docOf.get(url);
        if (doc !== undefined) filter.add(doc);
      }
    }
    const keyword = this.keyword.search(parsed.searchTerms, depth, filter).map((h) => this.urls[h.doc]!);
    const vector = keywordOnly ? [] : await this.vectorSearch(text, filter, depth);
    const fused = reciprocalRankFusion([keyword, vector.map((h) => h.id)], RRF_K, [
      KEYWORD_WEIGHT,
      VECTOR_WEIGHT,
    ]);
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
    const filter = this.filterOf(sites, types);
    const keyword = this.keyword.search(parsed.searchTerms, depth, filter).map((h) => this.urls[h.doc]!);
    const vector = await this.vectorSearch(params.query, filter, depth);
    const fused = reciprocalRankFusion([keyword, vector.map((r) => r.id)], RRF_K, [
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

  /** The keyword half alone: URLs best first (for evaluation). */
  keywordRanks(query: string, site: readonly string[], k: number): string[] {
    const sites = site.includes('all') ? undefined : new Set(site);
    const parsed = this.withoutSiteWords(parseQuery(query), sites);
    return this.keyword
      .search(parsed.searchTerms, k, this.filterOf(sites, undefined))
      .map((h) => this.urls[h.doc]!);
  }

  /**
   * The vector half alone: URLs best first (for evaluation). `auto` as searches do (the graph,
   * or an exact scan of small sets), `graph` always the graph, `exact` every vector compared.
   */
  async vectorRanks(
    query: string,
    site: readonly string[],
    k: number,
    mode: 'auto' | 'graph' | 'exact' = 'auto',
  ): Promise<string[]> {
    const sites = site.includes('all') ? undefined : new Set(site);
    return (await this.vectorSearch(query, this.filterOf(sites, undefined), k, mode)).map((h) => h.id);
  }

  /** The vector half: the nearest items to the query among `filter`. */
  private async vectorSearch(
    query: string,
    filter: DocSet | undefined,
    depth: number,
    mode: 'auto' | 'graph' | 'exact' = 'auto',
  ): Promise<{ id: string; score: number }[]> {
    if (!this.vectors || !this.embedder || this.vectors.size === 0) return [];
    const [qv] = await this.embedder.embed([query], 'query');
    if (!qv) return [];
    const q = Float32Array.from(qv);
    const hits =
      mode === 'exact'
        ? this.vectors.exactSearch(q, depth, filter, MIN_VECTOR_SCORE)
        : this.vectors.search(q, depth, filter, MIN_VECTOR_SCORE, mode === 'graph');
    return hits.map((h) => ({ id: this.urls[h.doc]!, score: h.score }));
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
    // a large load a bounded batch at a time (its vectors, its journal record): memory stays
    // bounded by the batch, not the load; a failure leaves the batches before it applied
    let upserted = 0;
    const refused: NonNullable<UpsertResult['refused']> = [];
    for (let i = 0; i < latest.length || i === 0; i += this.upsertBatchSize) {
      const r = await this.upsertBatch(site, latest.slice(i, i + this.upsertBatchSize), opts);
      upserted += r.upserted;
      if (r.refused) refused.push(...r.refused);
    }
    return { upserted, total: this.items.size, ...(refused.length ? { refused } : {}) };
  }

  private async upsertBatch(site: string, latest: StoredItem[], opts: UpsertOptions): Promise<UpsertResult> {
    // vectors first: if the embedder fails, nothing of the batch has changed
    const vectors = await this.embedDocuments(latest);
    return this.exclusive(async () => {
      // H2 (issue 19): another site's URL stays there unless the caller moves it (cross-site.ts).
      const refused = opts.move ? [] : heldElsewhere(latest, site, (url) => this.siteOf(url));
      const gone = new Set(refused.map((r) => r.url));
      const kept = gone.size ? latest.filter((i) => !gone.has(i.url)) : latest;
      const keptVectors = gone.size ? vectors.filter((_, n) => !gone.has(latest[n]!.url)) : vectors;
      // journaled before applied: if the write fails, nothing of the batch has changed either;
      // once journaled, the items are read from the journal (no copy of them held in memory)
      const jsons = kept.map((item) => JSON.stringify(item));
      const journaled = await this.journal?.appendUpsert(site, jsons);
      this.applyUpsert(kept, keptVectors, jsons, journaled);
      this.snapshotIfJournalLarge();
      return { upserted: kept.length, total: this.items.size, ...(refused.length ? { refused } : {}) };
    });
  }

  /** The site of the item at `url`, from the site sets (no item decoded). */
  private siteOf(url: string): string | undefined {
    const doc = this.docOf.get(url);
    if (doc === undefined) return undefined;
    for (const [site, docs] of this.siteDocs) if (docs.has(doc)) return site;
    return undefined;
  }

  /** The items' vectors, embedded a batch at a time and kept as 32-bit floats (a large load holds them all at once). */
  private async embedDocuments(items: readonly StoredItem[]): Promise<Float32Array[]> {
    if (!this.embedder || items.length === 0) return [];
    const out: Float32Array[] = [];
    for (let i = 0; i < items.length; i += EMBED_BATCH) {
      const batch = items.slice(i, i + EMBED_BATCH).map((item) => embeddingText(item).text);
      for (const v of await this.embedder.embed(batch, 'document')) out.push(Float32Array.from(v));
    }
    return out;
  }

  /** Forgets what was derived from the items (kept until the next change). */
  private invalidate(): void {
    this.allDocs = undefined;
    this.quantileCache.clear();
    this.sortedCache.clear();
  }

  /** `jsons`: each item's JSON, when made already; `journaled`: where the journal holds them. */
  private applyUpsert(
    items: readonly StoredItem[],
    vectors: readonly ArrayLike<number>[],
    jsons?: readonly string[],
    journaled?: JournaledItems,
  ): void {
    this.invalidate();
    const docs: number[] = [];
    const docVectors: ArrayLike<number>[] = [];
    items.forEach((item, n) => {
      const json = jsons?.[n] ?? JSON.stringify(item);
      // the same item again (a site loaded twice): nothing to index
      if (this.items.same(item, json)) return;
      const old = this.items.get(item.url);
      if (old) {
        const o = embeddingText(old);
        this.vocabulary.forget(o.text, o.categories);
        this.catalog.remove(old);
        const oldDoc = this.docOf.get(item.url);
        if (oldDoc !== undefined) this.dropDoc(oldDoc, old);
      }
      const facts = this.catalog.add(item);
      if (journaled)
        this.items.setJournaled(
          item.url,
          journaled.generation,
          journaled.path,
          journaled.at[n]!,
          journaled.lengths[n]!,
        );
      else this.items.set(item, json);
      this.dirty.set(item.url, true);
      const doc = this.urls.length;
      this.urls.push(item.url);
      this.docOf.set(item.url, doc);
      this.factColumns.add(doc, facts);
      this.keyword.add(doc, flattenItem(item));
      this.addFilters(doc, item);
      const e = embeddingText(item);
      this.vocabulary.observe(e.text, e.categories);
      const v = vectors[n];
      if (v) {
        docs.push(doc);
        docVectors.push(v);
      }
    });
    this.vectors?.setMany(docs, docVectors);
  }

  /** Removes every item of a site (journaled first, like upsert); the number removed. */
  async deleteSite(site: string): Promise<number> {
    return this.exclusive(async () => {
      if (!(this.siteDocs.get(site)?.size ?? 0)) return 0;
      await this.journal?.append({ op: 'deleteSite', site });
      return this.applyDeleteSite(site);
    });
  }

  private applyDeleteSite(site: string): number {
    this.invalidate();
    const docs = this.siteDocs.get(site);
    if (!docs) return 0;
    let deleted = 0;
    for (const doc of [...docs]) if (this.applyDelete(this.urls[doc]!)) deleted++;
    this.siteDocs.delete(site);
    return deleted;
  }

  /** Removes one item from everything; whether it was there. */
  private applyDelete(url: string): boolean {
    const item = this.items.get(url);
    if (!item) return false;
    this.invalidate();
    this.catalog.remove(item);
    const doc = this.docOf.get(url);
    if (doc !== undefined) this.dropDoc(doc, item);
    this.items.delete(url);
    this.dirty.set(url, false);
    const e = embeddingText(item);
    this.vocabulary.forget(e.text, e.categories);
    return true;
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
   * Writes a snapshot: a segment of what changed since the last one (or, when the segments
   * hold mostly replaced lines, one segment of every item), the indexes when they lag behind
   * the segments by more than INDEX_LAG_ITEMS (or INDEX_LAG_SHARE of the items), then the
   * manifest (atomically: temp file, fsync, rename) as the commit. Captured at one instant
   * under the change lock; the journal moves to a new generation at that instant, and the old
   * generations and files are removed only once the manifest naming the new ones is on disk.
   * Changes go on while the files are written; snapshots are written one after another.
   */
  async persist(): Promise<void> {
    await this.snapshot(INDEX_LAG_ITEMS, true);
  }

  /**
   * `persist` with the indexes written when they lag by more than `lagItems`. `settled`: the
   * index written as the next queries need it (keyword impacts recomputed, site profiles
   * computed), as `persist` does at the end of a load; the snapshots a load's journal triggers
   * along the way leave that to the end (at each of them it cost a 300k load ~10% of its speed).
   */
  private async snapshot(lagItems: number, settled = false): Promise<void> {
    const dir = this.dataDir;
    if (!dir) return;
    await mkdir(dir, { recursive: true });
    // the snapshot before this one written first: two snapshots' buffers held at once (a load's
    // last background snapshot and its `persist`) were the top of a 300k load's memory
    await this.writes;
    const { written } = await this.exclusive(async () => {
      const snapshot = this.capture(dir, this.journal?.generation ?? 0, lagItems, settled);
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
      this.items.close();
    });
  }

  private capture(dir: string, journalGeneration: number, lagItems: number, settled: boolean): Snapshot {
    const lines = this.segments.reduce((n, s) => n + s.records, 0);
    const compact =
      this.segments.length >= MAX_SEGMENTS ||
      lines + this.dirty.size > COMPACT_LINES_FACTOR * this.items.size + 1_000;
    let segment: Snapshot['segment'];
    let segments: SegmentInfo[];
    // the new segment's lines are the items' bytes, read where they are as the segment is
    // written (the journal and segments they are in stay until then); each item learns where
    // its line will be
    const lay = (urls: Iterable<[string, boolean]>): ItemRef[] => {
      const id = this.nextSegment;
      const out: ItemRef[] = [];
      let off = 0;
      for (const [url, upserted] of urls) {
        const line = upserted ? this.items.ref(url) : Buffer.from(JSON.stringify({ deleted: url }));
        if (!line) continue;
        if (upserted) this.items.place(url, id, off);
        out.push(line);
        off += (Buffer.isBuffer(line) ? line.length : line.len) + 1;
      }
      return out;
    };
    if (compact) {
      const all = function* (urls: Iterable<string>): Iterable<[string, boolean]> {
        for (const url of urls) yield [url, true];
      };
      const lines = lay(all(this.items.urls()));
      segment = { id: this.nextSegment, lines, held: this.items.hold(lines) };
      this.nextSegment++;
      segments = [{ id: segment.id, records: lines.length, bytes: -1 }];
    } else if (this.dirty.size > 0) {
      const lines = lay(this.dirty);
      segment = { id: this.nextSegment, lines, held: this.items.hold(lines) };
      this.nextSegment++;
      segments = [...this.segments, { id: segment.id, records: lines.length, bytes: -1 }];
    } else {
      segment = undefined;
      segments = this.segments;
    }
    this.dirty = new Map();
    this.segments = segments;

    const lagging = this.recordsPastIndex(segments);
    const writeIndex = compact || !this.indexFiles || lagging > indexLagLimit(this.items.size, lagItems);
    let index: Snapshot['index'];
    if (writeIndex) {
      if (this.keyword.deadShare > 0.25) this.keyword.compact();
      // saved as the next queries would have them: impacts recomputed, profiles computed
      if (settled) this.keyword.settle();
      const generation = this.nextGeneration++;
      const files: IndexFiles = {
        generation,
        format: INDEX_FILES_FORMAT,
        throughSegment: segments.length ? segments[segments.length - 1]!.id : -1,
        analyzer: ANALYZER_VERSION,
        facts: FACTS_VERSION,
        ...(this.vectors && this.embedder
          ? { embedder: this.embedder.id, dimensions: this.vectors.dimensions }
          : {}),
      };
      const codes = this.vectors?.save(join(dir, `${graphFile(generation)}.pending.tmp`));
      const viewGraph = settled && this.vectors ? this.vectors.graphVersion : undefined;
      // the names' URLs saved as their document numbers (the document list has the URLs)
      const catalog = this.catalog.snapshot((url) => this.docOf.get(url), settled);
      // a load's end: its counting maps give way to the counts as saved (made maps again on change)
      if (settled) this.catalog.settle(catalog.profiles);
      const saved: SavedCatalog = {
        items: this.items.size,
        profiles: catalog.profiles,
        vocabulary: this.vocabulary.snapshot(),
      };
      const postings = this.keyword.serializeParts();
      index = {
        files,
        docs: jsonChunks(this.urls.slice()),
        postings: { index: this.keyword, save: this.keyword.saveNumber },
        keyword: packSections([
          postings,
          this.factColumns.serializeParts(),
          Buffer.from(JSON.stringify(saved)),
          Buffer.from(catalog.names.buffer, catalog.names.byteOffset, catalog.names.byteLength),
          this.locations(),
          Buffer.from(JSON.stringify(this.savedFilters())),
        ]),
        codes,
        ...(viewGraph === undefined ? {} : { viewGraph }),
      };
      this.indexFiles = files;
    }
    return { journalGeneration, segment, segments, index, indexFiles: this.indexFiles };
  }

  /** Each document's line (segment, offset, length; NaN when dropped), as bytes for the index file. */
  private locations(): Buffer {
    const out = new Float64Array(this.urls.length * 3).fill(NaN);
    this.urls.forEach((url, doc) => {
      const at = url ? this.items.location(url) : undefined;
      if (!at) return;
      out[doc * 3] = at.seg;
      out[doc * 3 + 1] = at.off;
      out[doc * 3 + 2] = at.len;
    });
    return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
  }

  /** The site and type sets' documents, for the index file. */
  private savedFilters(): SavedFilters {
    const entries = (m: Map<string, DocSet>): Array<[string, number[]]> =>
      [...m].map(([name, docs]) => [name, [...docs]]);
    return { sites: entries(this.siteDocs), types: entries(this.typeDocs) };
  }

  private async writeSnapshot(dir: string, snapshot: Snapshot): Promise<void> {
    /** The graph file this snapshot wrote, when it did. */
    let graphPath: string | undefined;
    if (snapshot.segment) {
      const { id, held } = snapshot.segment;
      let bytes: number;
      try {
        bytes = await writeFileAtomic(
          join(dir, segmentFile(id)),
          lineChunks(this.items.readAll(take(snapshot.segment, 'lines'))),
        );
      } finally {
        this.items.release(held);
      }
      // its items are read from it now (their own bytes freed, merged-away segments closed)
      this.items.settle(id, join(dir, segmentFile(id)));
      const info = snapshot.segments.find((s) => s.id === id);
      if (info) info.bytes = bytes;
    }
    if (snapshot.index) {
      const g = snapshot.index.files.generation;
      const { postings } = snapshot.index;
      try {
        await writeFileAtomic(join(dir, docsFile(g)), take(snapshot.index, 'docs'));
        await writeFileAtomic(join(dir, keywordFile(g)), take(snapshot.index, 'keyword'));
      } finally {
        // written or failed, the postings are no longer read from: changes need not copy them
        snapshot.index.keyword = undefined;
        postings.index.written(postings.save);
      }
      const codes = take(snapshot.index, 'codes');
      if (codes.length) {
        await writeFileAtomic(join(dir, codesFile(g)), codes);
        graphPath = join(dir, graphFile(g));
        await syncAndRename(`${graphPath}.pending.tmp`, graphPath);
      }
    }
    const unwritten = snapshot.segments.find((s) => s.bytes < 0);
    // a segment an earlier snapshot failed to write: the journal still has its changes, keep it
    if (unwritten)
      throw new Error(`segment ${unwritten.id} was never written; the journal keeps its changes`);
    const manifest: Manifest = {
      format: INDEX_FORMAT,
      journal: snapshot.journalGeneration,
      segments: snapshot.segments,
      ...(snapshot.indexFiles ? { index: snapshot.indexFiles } : {}),
    };
    await writeFileAtomic(join(dir, MANIFEST_FILE), JSON.stringify(manifest));
    // the new names must be on disk before the journal and the files they replace go
    await syncDir(dir);
    await this.journal?.removeThrough(snapshot.journalGeneration);
    await this.removeUnused(dir, manifest);
    const viewGraph = snapshot.index?.viewGraph;
    if (viewGraph !== undefined && graphPath !== undefined) {
      try {
        this.vectors?.viewSaved(graphPath, viewGraph);
      } catch (err) {
        // committed all the same; the graph is built again from the codes when next searched
        this.onBackgroundError?.(err);
      }
    }
  }

  /** Files no manifest names any more: segments merged away, index files of older generations, the old layout. */
  private async removeUnused(dir: string, manifest: Manifest): Promise<void> {
    const segments = new Set(manifest.segments.map((s) => s.id));
    // segments and indexes newer than the manifest's belong to snapshots still being written
    const newestSegment = Math.max(-1, ...segments);
    for (const f of await readdir(dir)) {
      const m = LAYOUT_FILE.exec(f);
      const remove = m
        ? m[1] !== undefined
          ? !segments.has(Number(m[1])) && Number(m[1]) < newestSegment
          : Number(m[2]) < (manifest.index?.generation ?? 0)
        : LEGACY_FILES.includes(f);
      if (remove) await rm(join(dir, f), { force: true });
    }
  }

  /** A snapshot in the background once the journal is large, so opening stays fast. */
  private snapshotIfJournalLarge(): void {
    if (!this.journal || this.snapshotting || this.journal.pendingBytes < this.snapshotAfterBytes) return;
    this.snapshotting = true;
    this.snapshot(BACKGROUND_INDEX_LAG_ITEMS)
      .catch((err: unknown) => this.onBackgroundError?.(err))
      .finally(() => (this.snapshotting = false));
  }
}

/** What a selection reads of the store. */
export interface SelectionSource {
  item(doc: number): StoredItem | undefined;
  url(doc: number): string;
  doc(url: string): number | undefined;
  column(path: string): FactColumn;
  /** A target's documents ascending by its number (every document of the columns: callers intersect). */
  sorted(target: Target): SortedTarget;
  /** Every document in URL order. */
  byUrl: UrlOrder;
}

/** Steps of a walk in URL order that cost about what comparing one URL of a set's scan costs. */
const WALK_STEPS_PER_URL = 8;
/**
 * A set this large has its first URLs found by a walk in URL order even when the order must be
 * sorted first: once, then kept up to date as documents come (url-order.ts). At 300k items the
 * sort takes about 0.3–0.4 s, paid by the first such question after a restart or a large load;
 * the scan of a real set of 6,500 (comedies of the 1990s, URLs that share long prefixes) took
 * 2.2 ms a question.
 */
const SORT_FOR_SETS_FROM = 2_000;

/** Documents ascending by a target's number, and each one's number. */
export interface SortedTarget {
  docs: Uint32Array;
  keys: Float64Array;
}

/**
 * Every document of the columns with a target's number, ascending by it (ties: lower document
 * first): a property's column order as it is, a derived quantity's computed and sorted.
 */
export function sortTarget(target: Target, src: Pick<SelectionSource, 'column'>): SortedTarget {
  // plain loops: TypedArray.from with a mapping function goes through the iterator (slow at 300k)
  const keysOf = (order: Uint32Array, values: Float64Array): Float64Array => {
    const keys = new Float64Array(order.length);
    for (let i = 0; i < order.length; i++) keys[i] = values[order[i]!]!;
    return keys;
  };
  if ('path' in target) {
    const col = src.column(target.path);
    return { docs: col.order, keys: keysOf(col.order, col.first) };
  }
  const read = targetReader(target, src);
  const n = Math.max(src.column(target.derived.a).first.length, src.column(target.derived.b).first.length);
  const all = new Float64Array(n);
  const docs = new Uint32Array(n);
  let count = 0;
  for (let doc = 0; doc < n; doc++) {
    const v = read(doc);
    if (v === undefined || Number.isNaN(v)) continue;
    all[doc] = v;
    docs[count++] = doc;
  }
  const order = sortByKeys(docs.subarray(0, count), all);
  return { docs: order, keys: keysOf(order, all) };
}

/** A target's number of a document (targetValue over the columns' first numbers); undefined without it. */
export function targetReader(
  target: Target,
  src: Pick<SelectionSource, 'column'>,
): (doc: number) => number | undefined {
  if ('path' in target) {
    const first = src.column(target.path).first;
    return (doc) => {
      const v = first[doc];
      return v === undefined || Number.isNaN(v) ? undefined : v;
    };
  }
  const a = src.column(target.derived.a).first;
  const b = src.column(target.derived.b).first;
  const op = target.derived.op;
  return (doc) => {
    const x = a[doc];
    const y = b[doc];
    if (x === undefined || y === undefined || Number.isNaN(x) || Number.isNaN(y)) return undefined;
    return derivedQuantity(op, x, y);
  };
}

/** A target's number (a property's first number, or a derived quantity) of the documents of `pool` that have it, from the columns. */
export function derivedValues(
  target: Target,
  src: SelectionSource,
  pool: DocSet,
): { docs: Uint32Array; keys: Float64Array } {
  const read = targetReader(target, src);
  const all = pool.toArray();
  const docs = new Uint32Array(all.length);
  const keys = new Float64Array(all.length);
  let n = 0;
  for (let i = 0; i < all.length; i++) {
    const v = read(all[i]!);
    if (v === undefined) continue;
    docs[n] = all[i]!;
    keys[n++] = v;
  }
  return { docs: docs.subarray(0, n), keys: keys.subarray(0, n) };
}

/** Items passing a question's constraints, as a set of documents over the store's columns. */
export class ColumnSelection implements Selection {
  /** `docs.size`, counted once (a search asks several times; at 300k items a count reads 37 KB). */
  private counted: number | undefined;

  constructor(
    private readonly src: SelectionSource,
    /** Not changed once selected. */
    readonly docs: DocSet,
  ) {}

  get count(): number {
    return (this.counted ??= this.docs.size);
  }

  get(url: string): StoredItem | undefined {
    const doc = this.src.doc(url);
    return doc !== undefined && this.docs.has(doc) ? this.src.item(doc) : undefined;
  }

  firstByUrl(n: number, skip: ReadonlySet<string>): string[] {
    if (n < 1) return [];
    // a walk of every document in URL order passes about (n + skipped) ÷ the set's share of all
    // documents before it has n, at 1–5 ns a step here; a scan lists the set and compares each
    // of its URLs (30–300 ns): the walk unless it is much longer, and the order sorted for it
    // only for a set whose scan is long
    const order = this.src.byUrl;
    const steps = ((n + skip.size) * order.size) / Math.max(this.count, 1);
    // a set's documents may lie late in URL order (a few titles' many versions), so the walk
    // gives up after as many steps as the scan would cost
    const budget = this.count * WALK_STEPS_PER_URL + order.size / 4;
    if (steps <= budget && (order.ready || this.count >= SORT_FOR_SETS_FROM)) {
      const walked = order.first(n, this.docs, (url) => !skip.has(url), budget);
      if (walked) return walked;
    }
    // kept sorted and bounded: once it holds n, most URLs sort after its last and cost one comparison
    const first: string[] = [];
    const docs = this.docs.toArray();
    for (let i = 0; i < docs.length; i++) {
      const url = this.src.url(docs[i]!);
      if (first.length === n && url >= first[n - 1]!) continue;
      if (skip.has(url)) continue;
      let lo = 0;
      let hi = first.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (first[mid]! < url) lo = mid + 1;
        else hi = mid;
      }
      first.splice(lo, 0, url);
      if (first.length > n) first.pop();
    }
    return first;
  }

  fits(orders: readonly Order[], only?: readonly string[]): { urls: string[]; fits: Float64Array } {
    const readers = orders.map((o) => targetReader(o.target, this.src));
    const docs = only
      ? only.map((url) => this.src.doc(url)).filter((d): d is number => d !== undefined)
      : this.docs.toArray();
    const urls = new Array<string>(docs.length);
    const fits = new Float64Array(docs.length);
    for (let i = 0; i < docs.length; i++) {
      const doc = docs[i]!;
      urls[i] = this.src.url(doc);
      if (orders.length === 0) {
        fits[i] = 1;
        continue;
      }
      let sum = 0;
      for (let o = 0; o < orders.length; o++) {
        const v = readers[o]!(doc);
        if (v !== undefined) sum += fitOfValue(orders[o]!, v);
      }
      fits[i] = sum / orders.length;
    }
    return { urls, fits };
  }

  best(target: Target, direction: 'asc' | 'desc', n: number): Array<{ url: string; sortKey: number }> {
    const sign = direction === 'desc' ? 1 : -1;
    const picked: Array<{ doc: number; sortKey: number }> = [];
    // the target's documents by their number: walked from the best end, only the selected kept
    const { docs: order, keys } = this.src.sorted(target);
    const len = order.length;
    for (let i = 0; i < len; i++) {
      const at = direction === 'desc' ? len - 1 - i : i;
      const doc = order[at]!;
      if (!this.docs.has(doc)) continue;
      const sortKey = sign * keys[at]!;
      if (picked.length >= n && sortKey !== picked[picked.length - 1]!.sortKey) break;
      picked.push({ doc, sortKey });
    }
    return picked.map((p) => ({ url: this.src.url(p.doc), sortKey: p.sortKey }));
  }

  has(url: string): boolean {
    const doc = this.src.doc(url);
    return doc !== undefined && this.docs.has(doc);
  }

  /**
   * The passing items of best fit to one order, `skip`ped ones left out: walked along the
   * order's number from its best end (the fit only falls along it), until `n` are taken and the
   * fit drops below the n-th's, so every item tied with it is in. Undefined when that n-th fit is
   * 0 or fewer than `n` have the number: items without it (fit 0) would tie, only the full
   * `fits` answers then.
   */
  bestFits(
    order: Order,
    n: number,
    skip: ReadonlySet<string>,
  ): { urls: string[]; fits: Float64Array } | undefined {
    const { docs: sorted, keys } = this.src.sorted(order.target);
    const len = sorted.length;
    // from the end whose fit is 1 (fitOfValue: the percentile, or 1 minus it when ascending)
    const fromTop = order.direction === 'desc';
    const urls: string[] = [];
    const fits: number[] = [];
    let floor = Infinity;
    for (let i = 0; i < len; i++) {
      const at = fromTop ? len - 1 - i : i;
      const doc = sorted[at]!;
      if (!this.docs.has(doc)) continue;
      const url = this.src.url(doc);
      if (skip.has(url)) continue;
      const fit = fitOfValue(order, keys[at]!);
      if (urls.length >= n && fit < floor)
        return floor > 0 ? { urls, fits: Float64Array.from(fits) } : undefined;
      urls.push(url);
      fits.push(fit);
      if (urls.length === n) floor = fit;
    }
    return urls.length >= n && floor > 0 ? { urls, fits: Float64Array.from(fits) } : undefined;
  }
}

/**
 * Adds to `docs` the documents (`numDocs[i]` that of `nums[i]`) whose number is in range `k`;
 * `nums` ascending. The range's bounds are read once: constraints of many shapes pass here, and
 * reading them for each of 70k numbers (a decade at 300k items) cost 4 ms.
 */
function addInRange(
  docs: DocSet,
  nums: Float64Array,
  numDocs: Uint32Array,
  k: Extract<Constraint, { kind: 'range' }>,
): void {
  const min = k.min ?? -Infinity;
  const max = k.max ?? Infinity;
  const minInclusive = k.min === undefined || k.minInclusive;
  const maxInclusive = k.max === undefined || k.maxInclusive;
  const n = nums.length;
  const passes = (v: number): boolean =>
    !(minInclusive ? v < min : v <= min) && !(maxInclusive ? v > max : v >= max);
  // ascending, so those that pass are one stretch: past the numbers equal to an open minimum,
  // up to the first over the maximum (or equal to an open one)
  let i = k.min === undefined ? 0 : lowerBound(nums, min);
  while (i < n && !passes(nums[i]!)) {
    if (k.max !== undefined && !(nums[i]! <= max)) return;
    i++;
  }
  let j = i;
  while (j < n && passes(nums[j]!)) j++;
  docs.addAll(numDocs.subarray(i, j));
}

/** The first index whose number is at least `min`. */
function lowerBound(nums: Float64Array, min: number): number {
  let lo = 0;
  let hi = nums.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (nums[mid]! < min) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** fsyncs a file written by another writer (usearch), then renames it into place. */
async function syncAndRename(tmp: string, path: string): Promise<void> {
  const handle = await open(tmp, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, path);
}

function setOf(index: Map<string, DocSet>, key: string): DocSet {
  let s = index.get(key);
  if (!s) index.set(key, (s = new DocSet()));
  return s;
}

/** A snapshot's part, taken out of it to be written: its memory goes once written, not with the snapshot. */
function take<T, K extends keyof T>(from: T, key: K): NonNullable<T[K]> | never[] {
  const part = from[key];
  from[key] = undefined as T[K];
  return part ?? [];
}

/** `JSON.stringify(strings)` in chunks of about a megabyte (a 300k-item store's URLs are 19 MB). */
function* jsonChunks(strings: readonly string[]): Iterable<string> {
  let chunk = '[';
  for (let i = 0; i < strings.length; i++) {
    chunk += (i ? ',' : '') + JSON.stringify(strings[i]);
    if (chunk.length > 1 << 20) {
      yield chunk;
      chunk = '';
    }
  }
  yield `${chunk}]`;
}

/** The items with repeated URLs removed, the last of each winning. */
function latestByUrl(items: readonly StoredItem[]): StoredItem[] {
  return [...new Map(items.map((i) => [i.url, i])).values()];
}
