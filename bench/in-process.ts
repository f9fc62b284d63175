import type { SearchPorts } from '@askbus/router';
import { IndexStore } from '@askbus/retriever';
import { rankItems } from '@askbus/ranker';

/**
 * The search path's ports without NATS: the retriever's index and the ranker's scorer called
 * directly, over the same index files the services use. Batches still go through the same
 * pipeline code, so only the transport differs.
 */
export async function inProcessPorts(indexDir: string): Promise<SearchPorts> {
  const store = await IndexStore.open({ dataDir: indexDir });
  return {
    retrieve: async (req) => store.search({ numResults: 50, ...req }),
    score: async function* (query, items) {
      yield* rankItems(query, items);
    },
  };
}
