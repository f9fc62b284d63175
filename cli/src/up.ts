import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  findNatsServer,
  onShutdown,
  startNatsServer,
  type Bus,
  type ConnectOptions,
  type NatsServerHandle,
  type NatsUser,
} from '@askbus/bus';
import { loadSystem, runInProcess, type Env } from '@askbus/service';
import { handlersOf, loadTools } from '@askbus/tools';
import { startSystemTelemetry } from '@askbus/telemetry';
import { GATEWAY_URL_FILE, NATS_URL_FILE, dataDirFor, notedGatewayUrl } from './data-dir';

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
   * Each service's own NATS credentials (its user in the permissions derived from the
   * declarations). Without it every connection uses NATS_USER/NATS_PASSWORD, NATS_TOKEN or
   * NATS_CREDS when set.
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
  /** Every service instance's bus, in start order (the gateway's last). */
  buses: Bus[];
  /** Stops in order: the gateway, then each service drained, then the nats-server it started. */
  stop(): Promise<void>;
}

/**
 * Everything on one machine: NATS (found or started), then every service that declares itself
 * (services/<name>/src/service.ts) in this process, each on its own NATS connection with the
 * same config its own process would read, plus what `up` sets: the data folder, the port, the
 * demo sites (the retriever loads the missing ones), the rankers' count and delay.
 */
export async function up(opts: UpOptions): Promise<Running> {
  mkdirSync(opts.dataDir, { recursive: true });
  const system = await loadSystem();
  // Every handler config/tools.xml names must be a declared service's, before anything starts.
  system.checkTools(handlersOf(loadTools()));
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
  const stopNats = async (): Promise<void> => {
    if (nats) rmSync(join(opts.dataDir, NATS_URL_FILE), { force: true });
    await nats?.stop();
  };

  const env: Env = {
    ...process.env,
    LOG_LEVEL: process.env.LOG_LEVEL || 'warn',
    ASKBUS_DATA_DIR: opts.dataDir,
    ASKBUS_INDEX_DIR: join(opts.dataDir, 'index'),
    ASKBUS_DEMO: opts.demo ? '1' : '0',
    ASKBUS_RANK_DELAY_MS: String(opts.rankDelayMs),
    PORT: String(opts.port),
    HOST: opts.host,
    ASKBUS_PORT_FALLBACK: '1',
  };
  let running;
  try {
    running = await runInProcess({
      system,
      env,
      natsUrl,
      replicas: { ranker: opts.rankers },
      ...(opts.natsCredentials ? { credentials: opts.natsCredentials } : {}),
    });
  } catch (err) {
    await stopNats();
    throw err;
  }
  const [gateway] = running.handles('gateway');
  if (!gateway?.url) throw new Error('the gateway did not say where it listens');
  const { instances } = running;
  // So `askbus ask` and `askbus sites` find this gateway on whatever port it took.
  const gatewayUrlFile = join(opts.dataDir, GATEWAY_URL_FILE);
  writeFileSync(gatewayUrlFile, gateway.url);
  for (const [site, items] of Object.entries(running.handles('retriever')[0]?.describe?.demoLoaded ?? {}))
    opts.log(`loaded demo site ${site}: ${String(items)} items`);
  if (gateway.describe?.tookFreePort) opts.log(`port ${opts.port} is in use; took a free one`);
  return {
    url: gateway.url,
    natsUrl,
    buses: instances.map((i) => i.bus),
    stop: async () => {
      await running.stop();
      // Unless another `askbus up` on the same folder noted its own since.
      if (notedGatewayUrl({ ASKBUS_DATA_DIR: opts.dataDir }) === gateway.url)
        rmSync(gatewayUrlFile, { force: true });
      await stopNats();
    },
  };
}

export async function runUp(): Promise<void> {
  const opts = upOptionsFromEnv();
  // Traces go out only when OTEL_EXPORTER_OTLP_ENDPOINT (or another OTEL_* variable) asks; each
  // service's spans carry its own service.name.
  const telemetry = startSystemTelemetry('cli');
  const running = await up(opts);
  onShutdown(async () => {
    opts.log('askbus: stopping');
    await running.stop();
    await telemetry.shutdown();
  });
  opts.log(
    `askbus is up: ${running.url}  (try ${running.url}/ask?query=westerns+with+clint+eastwood&site=movies)`,
  );
  opts.log(
    `  npx askbus ask|sites find it through ${opts.dataDir}; from elsewhere: ASKBUS_URL=${running.url} npx askbus sites` +
      `  (askbus load: NATS_URL=${running.natsUrl})`,
  );
}
