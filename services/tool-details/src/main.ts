import { instrumentLlm, runService } from '@askbus/telemetry';
import { startDetailsTool } from './index';

await runService('tool-details', ({ bus, registry }) => {
  const { llm } = startDetailsTool(bus);
  instrumentLlm('tool-details', llm, registry);
});
