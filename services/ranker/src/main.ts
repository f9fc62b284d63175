import { instrumentLlm, runService } from '@askbus/telemetry';
import { RANKER_SERVICE, startRanker } from './index';

await runService(RANKER_SERVICE, ({ bus, log, registry }) => {
  const { delayMs, provider, llmBatchSize, llm } = startRanker(bus, {
    log: (level, msg, fields) => log[level](fields ?? {}, msg),
  });
  instrumentLlm(RANKER_SERVICE, llm, registry);
  log.info({ delayMs, provider, llmBatchSize }, 'ranker settings');
});
