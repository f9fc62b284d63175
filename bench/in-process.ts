import { SearchRequest } from '@askbus/contracts';
import { WordNet } from '@askbus/embeddings';
import { Understander, type SearchPorts } from '@askbus/router';
import { IndexStore } from '@askbus/retriever';
import { rankItems } from '@askbus/ranker';

/**
 * The search path's ports without NATS: the retriever's index, its profiles and names, and the
 * ranker's scorer called directly, over the same index files the services use. Batches still go
 * through the same pipeline code (understanding included), so only the transport differs.
 */
export async function inProcessPorts(indexDir: string): Promise<SearchPorts> {
  const store = await IndexStore.open({ dataDir: indexDir });
  const understander = new Understander(
    {
      profiles: async (site, known) => store.profiles(site, known),
      names: async (site, text) => store.findNames(text, site),
    },
    WordNet.get(),
  );
  return {
    retrieve: async (req) => store.searchWithOutcome(SearchRequest.parse(req)),
    score: async function* (query, items, _signal, understanding) {
      yield rankItems(query, items, understanding);
    },
    understand: async (query, site, signal) =>
      (await understander.understand(query, site, signal))?.understanding,
  };
}
