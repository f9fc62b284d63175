import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { contracts } from '@askbus/contracts';
import {
  connectBus,
  findNatsServer,
  onShutdown,
  startNatsServer,
  type Bus,
  type ConnectOptions,
  type NatsServerHandle,
  type NatsUser,
} from '@askbus/bus';
import { loadDemoSites } from '@askbus/demo-data';
import { LISTEN_BACKLOG, buildGateway } from '@askbus/gateway';
import { startRanker } from '@askbus/ranker';
import { startRetriever } from '@askbus/retriever';
import { routerOptionsFromEnv, startRouter } from '@askbus/router';
import { startCompareTool } from '@askbus/tool-compare';
import { startDetailsTool } from '@askbus/tool-details';
import { startEnsembleTool } from '@askbus/tool-ensemble';
import { startRecipeTool } from '@askbus/tool-recipe';
import { startWhoTool } from '@askbus/tool-who';
import {
  createRegistry,
  instrumentBus,
  instrumentLlm,
  startTelemetry,
  type LlmCounterSource,
} from '@askbus/telemetry';
import { NATS_URL_FILE, dataDirFor } from './data-dir';

export interface UpOptions {
  port: number;
  host: string;
  dataDir: string;
  rankers: number;
  demo: boolean;
  natsUrl?: string;
  /** Simulated model latency per ranking call, for demonstrations and tests (0: none). */
  rankDelayMs: number;
  log: (line: string) => void;
  /**
   * Each service's own NATS credentials (its user of @askbus/bus natsPermissions); the demo
   * sites then load as `loader`. Without it every connection uses NATS_USER/NATS_PASSWORD,
   * NATS_TOKEN or NATS_CREDS when set, and the gateway's connection loads the demo sites.
   */
  natsCredentials?: (user: NatsUser) => Pick<ConnectOptions, 'user' | 'pass' | 'token' | 'credsFile'>;
}

export function upOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): UpOptions {
  const int = (name: string, fallback: number, min: number): number => {
    const v = env[name];
    if (v === undefined || v === '') return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min)
      throw new Error(`${name} must be a whole number ≥ ${min}, got "${v}"`);
    return n;
  };
  return {
    port: int('PORT', 8000, 0),
    host: env.HOST ?? '127.0.0.1',
    dataDir: dataDirFor(env),
    rankers: int('ASKBUS_RANKERS', 2, 1),
    demo: env.ASKBUS_DEMO !== '0',
    rankDelayMs: int('ASKBUS_RANK_DELAY_MS', 0, 0),
    natsUrl: env.NATS_URL || undefined,
    log: (line) => console.log(line),
  };
}

export interface Running {
  url: string;
  natsUrl: string;
  buses: Bus[];
  stop(): Promise<void>;
}

/**
 * Everything on one machine: NATS (found or started), every service on its own NATS
 * connection, the demo sites loaded on first start, the gateway listening.
 */
export async function up(opts: UpOptions): Promise<Running> {
  mkdirSync(opts.dataDir, { recursive: true });
  let nats: NatsServerHandle | undefined;
  let natsUrl = opts.natsUrl;
  if (!natsUrl) {
    if (!findNatsServer()) {
      throw new Error(
        'askbus needs NATS. Either set NATS_URL to a running server (for example nats://127.0.0.1:4222), ' +
          'or install nats-server so askbus can start its own (Debian/Ubuntu: sudo apt-get install -y nats-server; ' +
          'elsewhere: https://docs.nats.io/running-a-nats-service/introduction/installation).',
      );
    }
    nats = await startNatsServer({ storeDir: join(opts.dataDir, 'nats') });
    natsUrl = nats.url;
    // So `askbus load` and friends find this server without being told (see natsUrlFor).
    writeFileSync(join(opts.dataDir, NATS_URL_FILE), natsUrl);
    opts.log(`started nats-server on ${natsUrl}`);
  } else {
    opts.log(`using NATS at ${natsUrl}`);
  }

  const log = (service: string) => (level: 'warn' | 'error', msg: string, fields?: Record<string, unknown>) =>
    console[level](JSON.stringify({ level, service, msg, ...fields }));
  const connect = (service: NatsUser | 'askbus-load') =>
    connectBus({
      servers: natsUrl,
      service,
      log: log(service),
      ...opts.natsCredentials?.(service === 'askbus-load' ? 'loader' : service),
    });

  const retrieverBus = await connect('retriever');
  await startRetriever(retrieverBus, { dataDir: join(opts.dataDir, 'index') });
  // Each service's language-model client, for the LLM metrics (fallbacks, circuit breakers).
  const llms: [string, LlmCounterSource][] = [];
  const rankerBuses: Bus[] = [];
  for (let i = 0; i < opts.rankers; i++) {
    const bus = await connect('ranker');
    llms.push(['ranker', startRanker(bus, { delayMs: opts.rankDelayMs }).llm]);
    rankerBuses.push(bus);
  }
  const routerBus = await connect('router');
  llms.push(['router', startRouter(routerBus, routerOptionsFromEnv()).model.llm]);
  // One service per tool handler of config/tools.xml, each on its own connection.
  const toolBuses: Bus[] = [];
  for (const [service, start] of [
    ['tool-details', startDetailsTool],
    ['tool-compare', startCompareTool],
    ['tool-ensemble', startEnsembleTool],
    ['tool-recipe', startRecipeTool],
    ['tool-who', startWhoTool],
  ] as const) {
    const bus = await connect(service);
    llms.push([service, start(bus).llm]);
    toolBuses.push(bus);
  }
  const gatewayBus = await connect('gateway');
  await Promise.all([retrieverBus, ...rankerBuses, routerBus, ...toolBuses].map((b) => b.nc.flush()));

  if (opts.demo && opts.natsCredentials) {
    // The gateway may not write the index; the loader's user may.
    const loaderBus = await connect('askbus-load');
    try {
      await loadMissingDemoSites(loaderBus, opts.log);
    } finally {
      await loaderBus.drain(5_000);
    }
  } else if (opts.demo) await loadMissingDemoSites(gatewayBus, opts.log);

  const buses = [gatewayBus, routerBus, ...toolBuses, ...rankerBuses, retrieverBus];
  const metrics = createRegistry();
  for (const bus of buses) instrumentBus(bus, metrics);
  for (const [service, llm] of llms) instrumentLlm(service, llm, metrics);
  const app = await buildGateway(gatewayBus, { logger: false, metrics });
  let port = opts.port;
  try {
    await app.listen({ port, host: opts.host, backlog: LISTEN_BACKLOG });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    opts.log(`port ${port} is in use; taking a free one`);
    await app.listen({ port: 0, host: opts.host, backlog: LISTEN_BACKLOG });
  }
  const address = app.server.address();
  port = typeof address === 'object' && address ? address.port : port;
  const shownHost = opts.host === '0.0.0.0' || opts.host === '::' ? '127.0.0.1' : opts.host;
  const url = `http://${shownHost}:${port}`;

  return {
    url,
    natsUrl,
    buses,
    stop: async () => {
      await app.close();
      // Front to back, so nothing is left waiting on a service that already left.
      for (const bus of buses) await bus.drain(5_000);
      if (nats) rmSync(join(opts.dataDir, NATS_URL_FILE), { force: true });
      await nats?.stop();
    },
  };
}

async function loadMissingDemoSites(bus: Bus, log: (line: string) => void): Promise<void> {
  const { sites } = await bus.request(contracts.sites, {}, { timeoutMs: 10_000 });
  const have = new Set(sites.map((s) => s.name));
  const demo = loadDemoSites().filter((d) => !have.has(d.site));
  for (const { site, items } of demo) {
    const batch = 500;
    for (let i = 0; i < items.length; i += batch) {
      await bus.request(
        contracts.upsert,
        { site, items: items.slice(i, i + batch), persist: i + batch >= items.length },
        { timeoutMs: 60_000 },
      );
    }
    log(`loaded demo site ${site}: ${items.length} items`);
  }
}

export async function runUp(): Promise<void> {
  const opts = upOptionsFromEnv();
  // Traces go out only when OTEL_EXPORTER_OTLP_ENDPOINT (or another OTEL_* variable) asks.
  const telemetry = startTelemetry('askbus');
  const running = await up(opts);
  onShutdown(async () => {
    opts.log('askbus: stopping');
    await running.stop();
    await telemetry.shutdown();
  });
  opts.log(
    `askbus is up: ${running.url}  (try ${running.url}/ask?query=westerns+with+clint+eastwood&site=movies)`,
  );
}
