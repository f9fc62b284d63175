import { contracts } from '@askbus/contracts';
import { defineService, fromEnv } from '@askbus/service';
import { RANKER_SERVICE, rankerOptionsFromEnv, startRanker } from './index';

export default defineService({
  name: RANKER_SERVICE,
  description: 'Scores candidate items against the question (a language model, or the local scorer).',
  serves: [contracts.score],
  calls: [],
  // ASKBUS_RANK_DELAY_MS, ASKBUS_RANK_LLM_BATCH
  config: fromEnv(rankerOptionsFromEnv),
  deploy: { memory: { request: '256Mi', limit: '1Gi' } },
  manifest: 'ranker.yaml',
  start: ({ bus, log, config }) => {
    const ranker = startRanker(bus, {
      ...config,
      log: (level, msg, fields) => log[level](fields ?? {}, msg),
    });
    return {
      llm: ranker.llm,
      describe: { delayMs: ranker.delayMs, provider: ranker.provider, llmBatchSize: ranker.llmBatchSize },
    };
  },
});
