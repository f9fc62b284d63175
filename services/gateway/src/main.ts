/** The gateway process: connects to NATS, serves HTTP on PORT/HOST, stops cleanly on SIGTERM. */
import { runService } from '@askbus/telemetry';
import { LISTEN_BACKLOG, buildGateway } from './index';

const port = Number(process.env.PORT ?? 8000);
const host = process.env.HOST ?? '0.0.0.0';
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`PORT must be a port number, not ${JSON.stringify(process.env.PORT)}`);
  process.exit(2);
}

await runService('gateway', async ({ bus, log, registry }) => {
  const app = await buildGateway(bus, {
    logger: { level: process.env.LOG_LEVEL ?? 'info' },
    metrics: registry,
  });
  try {
    await app.listen({ port, host, backlog: LISTEN_BACKLOG });
  } catch (err) {
    log.error({ err }, `the gateway cannot listen on ${host}:${port}`);
    await bus.drain();
    process.exit(1);
  }
  const address = app.server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  console.log(`askbus gateway listening on http://127.0.0.1:${actualPort}`);
  return () => app.close();
});
