import {
  contracts,
  type NameMatch,
  type RetrievedItem,
  type SiteInfo,
  type SiteProfile,
  type StoredItem,
} from '@askbus/contracts';
import { BusError, type Bus } from '@askbus/bus';
import type { EmbeddingProvider } from '@askbus/embeddings';
import { IndexStore, StoreInputError, type SearchParams, type SearchResult } from './index-store';
import type { UpsertOptions, UpsertResult } from './cross-site';

export * from './index-store';
export * from './pg-store';
export * from './vectors';
export * from './structured-search';
export * from './cross-site';
export * from './multi-store';
export * from './open-store';
export * from './synthetic';

/** The queue group of every retriever replica. */
export const RETRIEVER_SERVICE = 'retriever';

/** What the retriever needs of a store: the embedded IndexStore or PostgreSQL's PgStore. */
export interface RetrieverStore {
  search(params: SearchParams): Promise<RetrievedItem[]>;
  /** Search, and what its constraints did (searches with an understanding). */
  searchWithOutcome(params: SearchParams): Promise<SearchResult>;
  /** Each site's profile, or `unchanged` for a version the caller has. */
  profiles(
    site: readonly string[],
    known?: Readonly<Record<string, string>>,
  ):
    | Array<SiteProfile | { site: string; version: string; unchanged: true }>
    | Promise<Array<SiteProfile | { site: string; version: string; unchanged: true }>>;
  /** The stretches of a text that are item names of these sites. */
  findNames(text: string, site: readonly string[]): NameMatch[] | Promise<NameMatch[]>;
  /** Items by URL. */
  getItems(urls: readonly string[]): StoredItem[] | Promise<StoredItem[]>;
  upsert(site: string, items: readonly StoredItem[], opts?: UpsertOptions): Promise<UpsertResult>;
  deleteSite(site: string): number | Promise<number>;
  sites(): SiteInfo[] | Promise<SiteInfo[]>;
  persist(): Promise<void>;
}

export interface RetrieverOptions {
  /** Where the index is kept (item segments, keyword and vector index files, manifest.json; journal-N.jsonl); in memory only when undefined. */
  dataDir?: string;
  /** Embeddings for the vector half (default: the local WordNet model; null: keyword only). */
  embedder?: EmbeddingProvider | null;
}

export interface Retriever<S extends RetrieverStore = IndexStore> {
  store: S;
}

/**
 * Opens the embedded hybrid index in `dataDir` and serves it on the bus (see `serveRetriever`).
 */
export async function startRetriever(bus: Bus, opts: RetrieverOptions = {}): Promise<Retriever<IndexStore>> {
  const store = await IndexStore.open({
    ...(opts.dataDir === undefined ? {} : { dataDir: opts.dataDir }),
    ...(opts.embedder === undefined ? {} : { embedder: opts.embedder }),
  });
  return serveRetriever(bus, store);
}

/**
 * Serves `retrieve.v1.search`, `retrieve.v1.upsert`, `retrieve.v1.sites` and
 * `retrieve.v1.delete` from a store on the bus. Requests and replies are checked by the bus
 * against the contracts; an upsert whose items name another site is a `bad_request`.
 */
export async function serveRetriever<S extends RetrieverStore>(bus: Bus, store: S): Promise<Retriever<S>> {
  const serve = { queue: RETRIEVER_SERVICE };

  bus.serve(contracts.search, async (req) => await store.searchWithOutcome(req), serve);
  bus.serve(
    contracts.profile,
    async (req) => ({ profiles: await store.profiles(req.site, req.known) }),
    serve,
  );
  bus.serve(contracts.names, async (req) => ({ matches: await store.findNames(req.text, req.site) }), serve);
  bus.serve(contracts.items, async (req) => ({ items: await store.getItems(req.urls) }), serve);

  bus.serve(
    contracts.upsert,
    async (req) => {
      let result: UpsertResult;
      try {
        result = await store.upsert(req.site, req.items, { move: req.move });
      } catch (err) {
        if (err instanceof StoreInputError) throw new BusError('bad_request', err.message);
        throw err;
      }
      if (req.persist) await store.persist();
      return result;
    },
    serve,
  );

  bus.serve(contracts.sites, async () => ({ sites: await store.sites() }), serve);

  bus.serve(
    contracts.delete,
    async (req) => {
      const deleted = await store.deleteSite(req.site);
      if (deleted > 0) await store.persist();
      return { deleted };
    },
    serve,
  );

  return { store };
}
