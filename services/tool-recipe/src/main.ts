import { instrumentLlm, runService } from '@askbus/telemetry';
import { startRecipeTool } from './index';

await runService('tool-recipe', ({ bus, registry }) => {
  const { llm } = startRecipeTool(bus);
  instrumentLlm('tool-recipe', llm, registry);
});
