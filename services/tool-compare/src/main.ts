import { instrumentLlm, runService } from '@askbus/telemetry';
import { startCompareTool } from './index';

await runService('tool-compare', ({ bus, registry }) => {
  const { llm } = startCompareTool(bus);
  instrumentLlm('tool-compare', llm, registry);
});
