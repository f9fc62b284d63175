import { z } from 'zod';
import { contracts, toolContract } from '@askbus/contracts';
import { defineService } from '@askbus/service';
import { startWhoTool } from './index';

export default defineService({
  name: 'tool-who',
  description: 'Which of the loaded sites can answer a question.',
  serves: [toolContract('who')],
  calls: [contracts.sites, contracts.search, contracts.score],
  config: z.object({}),
  start: ({ bus }) => ({ llm: startWhoTool(bus).llm }),
});
