/** The gateway process: connects to NATS, serves HTTP on PORT/HOST, stops cleanly on SIGTERM. */
import { connectBus, onShutdown } from '@askbus/bus';
import { buildGateway } from './index';

const port = Number(process.env.PORT ?? 8000);
const host = process.env.HOST ?? '0.0.0.0';
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`PORT must be a port number, not ${JSON.stringify(process.env.PORT)}`);
  process.exit(2);
}

const bus = await connectBus({
  service: 'gateway',
  log: (level, msg, fields) => console[level](`[gateway] ${msg}`, fields ?? ''),
});
const app = await buildGateway(bus, { logger: { level: process.env.LOG_LEVEL ?? 'info' } });
try {
  await app.listen({ port, host });
} catch (err) {
  console.error(`the gateway cannot listen on ${host}:${port}:`, err);
  await bus.drain();
  process.exit(1);
}
const address = app.server.address();
const actualPort = typeof address === 'object' && address ? address.port : port;
console.log(`askbus gateway listening on http://127.0.0.1:${actualPort}`);

onShutdown(async () => {
  await app.close();
  await bus.drain();
});
