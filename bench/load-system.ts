/**
 * The system process of bench:load, started by load-cluster.ts with an IPC channel: what
 * `askbus up` runs (gateway, router, retriever on the embedded index, the five tools, each on
 * its own NATS connection, demo data loaded) but with no ranker inside, because the rankers
 * run as processes of their own. Tells the parent its URL, answers memory questions
 * (load-probe.ts), stops on SIGTERM.
 *
 * Env: ASKBUS_LOAD_NATS_URL, ASKBUS_LOAD_DATA_DIR.
 */
import { up } from '@askbus/cli';
import type { ProbeReply } from './load-probe';
import './load-probe';

export type SystemMessage =
  { type: 'ready'; url: string; pid: number } | { type: 'failed'; error: string } | ProbeReply;

const send = (m: SystemMessage): void => void process.send?.(m);

const natsUrl = process.env.ASKBUS_LOAD_NATS_URL;
const dataDir = process.env.ASKBUS_LOAD_DATA_DIR;
if (!natsUrl || !dataDir || !process.send) {
  console.error(
    'load-system.ts is started by bench/load-cluster.ts (needs IPC, ASKBUS_LOAD_NATS_URL, _DATA_DIR)',
  );
  process.exit(2);
}

try {
  const running = await up({
    port: 0,
    host: '127.0.0.1',
    dataDir,
    natsUrl,
    rankers: 0,
    demo: true,
    rankDelayMs: 0,
    log: (line) => console.log(line),
  });
  let stopping = false;
  process.on('SIGTERM', () => {
    if (stopping) return;
    stopping = true;
    running.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
  send({ type: 'ready', url: running.url, pid: process.pid });
} catch (err) {
  send({ type: 'failed', error: String((err as Error).stack ?? err) });
  process.exit(1);
}
