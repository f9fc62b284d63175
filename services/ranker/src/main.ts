import pino from 'pino';
import { connectBus, onShutdown } from '@askbus/bus';
import { RANKER_SERVICE, startRanker } from './index';

const log = pino({ name: RANKER_SERVICE });
const logFn = (level: 'warn' | 'error', msg: string, fields?: Record<string, unknown>) =>
  log[level](fields ?? {}, msg);
const bus = await connectBus({ service: RANKER_SERVICE, log: logFn });
const { delayMs, provider, llmBatchSize } = startRanker(bus, { log: logFn });
log.info({ nats: bus.nc.getServer(), delayMs, provider, llmBatchSize }, 'askbus ranker serving');
onShutdown(() => bus.drain());
