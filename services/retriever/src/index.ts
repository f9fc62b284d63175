import { contracts } from '@askbus/contracts';
import { BusError, type Bus } from '@askbus/bus';
import { IndexStore, StoreInputError } from './index-store';

export * from './index-store';

/** The queue group of every retriever replica. */
export const RETRIEVER_SERVICE = 'retriever';

export interface RetrieverOptions {
  /** Where the index is kept (items.json, index.json); in memory only when undefined. */
  dataDir?: string;
}

export interface Retriever {
  store: IndexStore;
}

/**
 * Opens the index in `dataDir` and serves `retrieve.v1.search`, `retrieve.v1.upsert` and
 * `retrieve.v1.sites` on the bus. Requests and replies are checked by the bus against the
 * contracts; an upsert whose items name another site is a `bad_request`.
 */
export async function startRetriever(bus: Bus, opts: RetrieverOptions = {}): Promise<Retriever> {
  const store = await IndexStore.open(opts.dataDir === undefined ? {} : { dataDir: opts.dataDir });
  const serve = { queue: RETRIEVER_SERVICE };

  bus.serve(contracts.search, async (req) => ({ items: store.search(req) }), serve);

  bus.serve(
    contracts.upsert,
    async (req) => {
      let result: { upserted: number; total: number };
      try {
        result = store.upsert(req.site, req.items);
      } catch (err) {
        if (err instanceof StoreInputError) throw new BusError('bad_request', err.message);
        throw err;
      }
      if (req.persist) await store.persist();
      return result;
    },
    serve,
  );

  bus.serve(contracts.sites, async () => ({ sites: store.sites() }), serve);

  return { store };
}
