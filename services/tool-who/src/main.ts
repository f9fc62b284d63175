import { instrumentLlm, runService } from '@askbus/telemetry';
import { startWhoTool } from './index';

await runService('tool-who', ({ bus, registry }) => {
  const { llm } = startWhoTool(bus);
  instrumentLlm('tool-who', llm, registry);
});
