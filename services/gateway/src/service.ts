import { z } from 'zod';
import { contracts, eventContracts } from '@askbus/contracts';
import { defineService, envVar } from '@askbus/service';
import { PUSH_BUCKET, TASKS_BUCKET } from './a2a/store';
import { CONVERSATIONS_BUCKET } from './conversations/store';
import { EVENTS_BUCKET, SESSIONS_BUCKET } from './mcp/shared-sessions';
import { RATE_BUCKET, STREAMS_BUCKET } from './shared-limits';
import { LISTEN_BACKLOG, buildGateway } from './index';

/** The gateway's settings, from the environment. */
export const GatewayConfig = z
  .object({
    PORT: envVar.int(8000, 0, 65_535),
    HOST: z.preprocess((v) => (v === '' ? undefined : v), z.string().default('0.0.0.0')),
    LOG_LEVEL: z.preprocess((v) => (v === '' ? undefined : v), z.string().default('info')),
    // 1: when PORT is taken, listen on a free port instead of failing (`askbus up` on a laptop)
    ASKBUS_PORT_FALLBACK: envVar.flag(false),
    // Proxies whose X-Forwarded-* to believe: true, or their addresses/CIDRs, comma-separated
    ASKBUS_TRUST_PROXY: envVar.optional(),
  })
  .transform((e) => ({
    port: e.PORT,
    host: e.HOST,
    logLevel: e.LOG_LEVEL,
    portFallback: e.ASKBUS_PORT_FALLBACK,
    trustProxy: trustProxyFrom(e.ASKBUS_TRUST_PROXY),
  }));

/** ASKBUS_TRUST_PROXY as Fastify's trustProxy: true/false, or the proxies' addresses and CIDRs. */
export function trustProxyFrom(v: string | undefined): boolean | string[] | undefined {
  if (v === undefined) return undefined;
  if (/^(true|false)$/i.test(v)) return v.toLowerCase() === 'true';
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export default defineService({
  name: 'gateway',
  description:
    'HTTP: the chat page, REST /ask (NLWeb’s dialects), MCP and A2A; every question goes to the router.',
  serves: [],
  calls: [
    contracts.ask,
    contracts.sites,
    contracts.search,
    contracts.profile,
    contracts.names,
    contracts.items,
  ],
  // A2A tasks and push configs, conversations, MCP sessions and their events, rate and stream
  // counts; replicas share A2A task events and cancels, and MCP session events.
  kvBuckets: [
    TASKS_BUCKET,
    PUSH_BUCKET,
    CONVERSATIONS_BUCKET,
    SESSIONS_BUCKET,
    EVENTS_BUCKET,
    RATE_BUCKET,
    STREAMS_BUCKET,
  ],
  events: [eventContracts.a2aTaskEvents, eventContracts.a2aCancelTask, eventContracts.mcpSession],
  config: GatewayConfig,
  manifest: 'gateway.yaml',
  start: async ({ bus, registry, config }) => {
    const app = await buildGateway(bus, {
      logger: config.logLevel === 'silent' ? false : { level: config.logLevel },
      metrics: registry,
      ...(config.trustProxy === undefined ? {} : { trustProxy: config.trustProxy }),
    });
    let tookFreePort = false;
    try {
      await app.listen({ port: config.port, host: config.host, backlog: LISTEN_BACKLOG });
    } catch (err) {
      if (!config.portFallback || config.port === 0 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') {
        await app.close();
        throw new Error(
          `the gateway cannot listen on ${config.host}:${config.port}: ${(err as Error).message}`,
        );
      }
      await app.listen({ port: 0, host: config.host, backlog: LISTEN_BACKLOG });
      tookFreePort = true;
    }
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const shownHost = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
    return {
      url: `http://${shownHost}:${port}`,
      describe: { port, tookFreePort },
      stop: () => app.close(),
    };
  },
});
