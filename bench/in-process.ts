import { SearchRequest, toRankItem } from '@askbus/contracts';
import { WordNet } from '@askbus/embeddings';
import { llmFromEnv, loadPrompts } from '@askbus/llm';
import { loadTools } from '@askbus/tools';
import {
  SchemaTypeWords,
  Understander,
  type AnswerModel,
  type RoutingDeps,
  type SearchPorts,
} from '@askbus/router';
import { IndexStore } from '@askbus/retriever';
import { AnalysisCache, DEFAULT_RANK_CACHE_ITEMS, rankAnalysed } from '@askbus/ranker';

/** What the one-process pipeline runs with: the search ports, and the router's model and tool routing. */
export interface InProcessPipeline {
  ports: SearchPorts;
  model: AnswerModel;
  routing: RoutingDeps;
}

/**
 * The ask path without NATS: the retriever's index, its profiles and names, and the ranker's
 * scorer (with the ranker's analysis cache) called directly, over the same index files the services use, with the router's own
 * model (the embedded default, as `askbus up` runs it) for understanding and tool routing.
 * Batches still go through the same pipeline code, so only the transport differs.
 *
 * The tool services are not here: a query routed to another tool than search fails in
 * `runTool`, and the bench checks that both paths answered with the same number of results.
 */
export async function inProcessPipeline(indexDir: string): Promise<InProcessPipeline> {
  const store = await IndexStore.open({ dataDir: indexDir });
  const model: AnswerModel = { llm: llmFromEnv(), prompts: loadPrompts() };
  const understander = new Understander(
    {
      profiles: async (site, known) => store.profiles(site, known),
      names: async (site, text) => store.findNames(text, site),
    },
    WordNet.get(),
    { llm: model.llm },
  );
  // the ranker service keeps each item's text analysis between requests; so does this path
  const analyses = new AnalysisCache(DEFAULT_RANK_CACHE_ITEMS);
  const ports: SearchPorts = {
    retrieve: async (req) => store.searchWithOutcome(SearchRequest.parse(req)),
    score: async function* (query, items, _signal, understanding) {
      yield rankAnalysed(
        query,
        items.map((item) => analyses.analyse(toRankItem(item))),
        understanding,
      );
    },
    understand: async (query, site, signal) =>
      (await understander.understand(query, site, signal))?.understanding,
  };
  const typeWords = new SchemaTypeWords(WordNet.get());
  const routing: RoutingDeps = {
    llm: model.llm,
    tools: loadTools(),
    namedTypes: (query) => typeWords.named(query),
    siteTypes: async (site) => {
      const sites = store.sites();
      const names = site.includes('all') ? sites.map((s) => s.name) : site;
      return [...new Set(sites.filter((s) => names.includes(s.name)).flatMap((s) => s.types))];
    },
    runTool: (handler) => {
      throw new Error(`the one-process bench runs no tool service (${handler})`);
    },
  };
  return { ports, model, routing };
}
