import { z } from 'zod';
import { contracts, toolContract } from '@askbus/contracts';
import { defineService } from '@askbus/service';
import { startCompareTool } from './index';

export default defineService({
  name: 'tool-compare',
  description: 'Two named items side by side: finds both and compares the facts the question asks about.',
  serves: [toolContract('compare')],
  calls: [contracts.search, contracts.names, contracts.items],
  config: z.object({}),
  start: ({ bus }) => ({ llm: startCompareTool(bus).llm }),
});
