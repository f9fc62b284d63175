import { connectBus, onShutdown } from '@askbus/bus';
import { routerOptionsFromEnv, startRouter } from './index';

const bus = await connectBus({
  service: 'router',
  log: (level, msg, fields) => console[level](JSON.stringify({ level, service: 'router', msg, ...fields })),
});
startRouter(bus, routerOptionsFromEnv());
console.log(`askbus router serving on ${bus.nc.getServer()}`);
onShutdown(() => bus.drain());
