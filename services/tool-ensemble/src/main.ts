import { instrumentLlm, runService } from '@askbus/telemetry';
import { startEnsembleTool } from './index';

await runService('tool-ensemble', ({ bus, registry }) => {
  const { llm } = startEnsembleTool(bus);
  instrumentLlm('tool-ensemble', llm, registry);
});
