import { instrumentLlm, runService } from '@askbus/telemetry';
import { routerOptionsFromEnv, startRouter } from './index';

await runService('router', ({ bus, registry }) => {
  const { model } = startRouter(bus, routerOptionsFromEnv());
  instrumentLlm('router', model.llm, registry);
});
