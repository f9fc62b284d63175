import pino from 'pino';
import { connectBus, onShutdown } from '@askbus/bus';
import { RANKER_SERVICE, startRanker } from './index';

const log = pino({ name: RANKER_SERVICE });
const bus = await connectBus({
  service: RANKER_SERVICE,
  log: (level, msg, fields) => log[level](fields ?? {}, msg),
});
const { delayMs } = startRanker(bus);
log.info({ nats: bus.nc.getServer(), delayMs }, 'askbus ranker serving');
onShutdown(() => bus.drain());
