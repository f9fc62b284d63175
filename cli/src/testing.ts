import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testNats } from '@askbus/bus/testing';
import { up, type Running, type UpOptions } from './up';

/** The whole system as `askbus up` runs it, on a nats-server and a data folder of its own. */
export interface DemoSystem {
  running: Running;
  natsUrl: string;
  dataDir: string;
  stop(): Promise<void>;
}

/**
 * Starts every service with the demo sites loaded, for tests and benchmarks. Each call gets its
 * own nats-server, so systems never share subjects; `overrides` change the `up` options.
 */
export async function startDemoSystem(overrides: Partial<UpOptions> = {}): Promise<DemoSystem> {
  const nats = await testNats();
  const dataDir = overrides.dataDir ?? mkdtempSync(join(tmpdir(), 'askbus-system-'));
  const running = await up({
    port: 0,
    host: '127.0.0.1',
    rankers: 2,
    demo: true,
    rankDelayMs: 0,
    log: () => undefined,
    ...overrides,
    dataDir,
    natsUrl: nats.url,
  });
  return {
    running,
    natsUrl: nats.url,
    dataDir,
    stop: async () => {
      await running.stop();
      await nats.stop();
      if (!overrides.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
