/**
 * One system under load for bench:load, all on loopback: a nats-server of its own, N ranker
 * replicas, each a separate OS process (`node --import tsx services/ranker/src/main.ts` with
 * NATS_URL, its own NATS connection, queue group `ranker`), and one system process
 * (load-system.ts: `askbus up` with the gateway, router, retriever and tools, rankers: 0).
 * Separate ranker processes let the replicas use both cores, which in-process replicas
 * sharing one event loop could not.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startNatsServer, type NatsServerHandle } from '@askbus/bus';
import type { ProbeReply, ProbeRequest } from './load-probe';
import type { SystemMessage } from './load-system';

const benchDir = fileURLToPath(new URL('.', import.meta.url));
const repoRoot = join(benchDir, '..');
const RANKER_MAIN = join(repoRoot, 'services/ranker/src/main.ts');
const SYSTEM_MAIN = join(benchDir, 'load-system.ts');
const ASKBUS_CLI = join(repoRoot, 'cli/src/askbus.ts');
const PROBE = pathToFileURL(join(benchDir, 'load-probe.ts')).href;
const START_TIMEOUT_MS = 90_000;

export const RANKER_REPLICA =
  'a separate OS process (node --import tsx services/ranker/src/main.ts, NATS_URL set): its own ' +
  'event loop, NATS connection and local scorer, in queue group "ranker"';
export const UP_PROCESS =
  '`askbus up` as a new user starts it (`npm run up`, defaults but for the port and data folder): ' +
  'one process with the gateway, router, retriever (embedded index, demo data), 2 in-process ' +
  'rankers and the tools, and the nats-server it starts';
export const SYSTEM_PROCESS =
  'one process as `askbus up` runs it, but with 0 rankers inside: gateway (HTTP), router, retriever ' +
  '(embedded index, demo data), 5 tools, each on its own NATS connection';

/** A process whose memory is sampled; `heap` where the process can tell (MB). */
export interface TrackedProcess {
  name: string;
  role: 'system' | 'ranker' | 'nats' | 'client';
  pid: number;
  heap?: () => Promise<{ usedMB: number; afterGc: boolean } | undefined>;
}

/** Warnings and errors the children printed, counted (a load run can print thousands). */
export interface ChildLog {
  warnings: number;
  last: string[];
}

export interface LoadSystem {
  url: string;
  rankers: number;
  rankDelayMs: number;
  processes: TrackedProcess[];
  log: ChildLog;
  stop(): Promise<void>;
}

/** Keys of the caller's environment that would change what is measured; the children get ours. */
const OVERRIDDEN = /^(NATS_URL|PORT|HOST|ASKBUS_RANKERS|ASKBUS_RANK_DELAY_MS|ASKBUS_LLM_.*)$/;

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!OVERRIDDEN.test(k)) env[k] = v;
  return { ...env, ASKBUS_LLM_PROVIDER: 'local', ...extra };
}

function watchOutput(
  child: ChildProcess,
  name: string,
  log: ChildLog,
  onLine?: (line: string) => void,
): void {
  const note = (line: string): void => {
    log.warnings++;
    log.last = [...log.last.slice(-4), `${name}: ${line.slice(0, 300)}`];
  };
  if (child.stdout) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      onLine?.(line);
      // pino levels: 40 warn, 50 error, 60 fatal
      if (/"level":\s*(4|5|6)0\b/.test(line)) note(line);
    });
  }
  if (child.stderr) createInterface({ input: child.stderr }).on('line', note);
}

async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, graceMs))]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** Asks a child running load-probe.ts for its heap (after a full GC when it has --expose-gc). */
function probeHeap(child: ChildProcess): TrackedProcess['heap'] {
  let nextId = 0;
  return () =>
    new Promise((resolve) => {
      if (!child.connected) return resolve(undefined);
      const id = ++nextId;
      const onMessage = (m: ProbeReply): void => {
        if (m?.type !== 'memory' || m.id !== id) return;
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve({ usedMB: m.heapUsed / 2 ** 20, afterGc: m.gc });
      };
      const timer = setTimeout(() => {
        child.off('message', onMessage);
        resolve(undefined);
      }, 10_000);
      child.on('message', onMessage);
      child.send({ type: 'memory', id } satisfies ProbeRequest);
    });
}

async function startRanker(
  index: number,
  natsUrl: string,
  rankDelayMs: number,
  log: ChildLog,
  children: ChildProcess[],
): Promise<TrackedProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', PROBE, '--expose-gc', RANKER_MAIN], {
    cwd: repoRoot,
    env: childEnv({
      NATS_URL: natsUrl,
      ASKBUS_RANK_DELAY_MS: String(rankDelayMs),
      LOG_LEVEL: 'info',
      OTEL_SDK_DISABLED: 'true',
    }),
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  children.push(child);
  const name = `ranker-${index + 1}`;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start within 90 s`)), START_TIMEOUT_MS);
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code} before serving`)));
    watchOutput(child, name, log, (line) => {
      if (!line.includes('askbus ranker serving')) return;
      clearTimeout(timer);
      resolve();
    });
  });
  return { name, role: 'ranker', pid: child.pid!, heap: probeHeap(child) };
}

async function startSystemProcess(
  natsUrl: string,
  dataDir: string,
  log: ChildLog,
  children: ChildProcess[],
): Promise<{ url: string; tracked: TrackedProcess }> {
  // ASKBUS_LOAD_CPU_PROF_DIR: a V8 CPU profile of the system process, written when it stops.
  const profileDir = process.env.ASKBUS_LOAD_CPU_PROF_DIR;
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const child = spawn(process.execPath, ['--import', 'tsx', '--expose-gc', ...profile, SYSTEM_MAIN], {
    cwd: repoRoot,
    env: childEnv({
      ASKBUS_LOAD_NATS_URL: natsUrl,
      ASKBUS_LOAD_DATA_DIR: dataDir,
      OTEL_SDK_DISABLED: 'true',
    }),
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  children.unshift(child); // stopped first
  watchOutput(child, 'system', log);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('the system did not start within 90 s')),
      START_TIMEOUT_MS,
    );
    child.once('exit', (code) => reject(new Error(`the system process exited with ${code} before serving`)));
    child.on('message', (m: SystemMessage) => {
      if (m.type === 'ready') {
        clearTimeout(timer);
        resolve(m.url);
      } else if (m.type === 'failed') {
        clearTimeout(timer);
        reject(new Error(`the system failed to start: ${m.error}`));
      }
    });
  });
  const tracked: TrackedProcess = {
    name: 'system (gateway+router+retriever+tools)',
    role: 'system',
    pid: child.pid!,
    heap: probeHeap(child),
  };
  return { url, tracked };
}

/** Starts everything; on a failure part-way, stops what had started and throws. */
export async function startLoadSystem(opts: { rankers: number; rankDelayMs: number }): Promise<LoadSystem> {
  const log: ChildLog = { warnings: 0, last: [] };
  const dataDir = mkdtempSync(join(tmpdir(), 'askbus-load-'));
  const children: ChildProcess[] = [];
  let nats: NatsServerHandle | undefined;
  const stop = async (): Promise<void> => {
    // Front to back: the system (gateway) first, so nothing waits on a ranker that already left.
    for (const child of children) await stopChild(child);
    await nats?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    nats = await startNatsServer();
    const processes: TrackedProcess[] = [{ name: 'nats-server', role: 'nats', pid: nats.process.pid! }];
    // Rankers first, so the system never sees a query with no ranker subscribed.
    const natsUrl = nats.url;
    const starts = await Promise.allSettled(
      Array.from({ length: opts.rankers }, (_, i) =>
        startRanker(i, natsUrl, opts.rankDelayMs, log, children),
      ),
    );
    const failed = starts.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    const rankers = starts.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const system = await startSystemProcess(natsUrl, dataDir, log, children);
    processes.unshift(system.tracked, ...rankers);
    return { url: system.url, rankers: opts.rankers, rankDelayMs: opts.rankDelayMs, processes, log, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** `askbus up` itself, as its own process (with its own nats-server), for the burst under it. */
export async function startUpSystem(opts: { rankDelayMs: number }): Promise<LoadSystem> {
  const log: ChildLog = { warnings: 0, last: [] };
  const dataDir = mkdtempSync(join(tmpdir(), 'askbus-load-up-'));
  const child = spawn(process.execPath, ['--import', 'tsx', ASKBUS_CLI, 'up'], {
    cwd: repoRoot,
    env: childEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      ASKBUS_DATA_DIR: dataDir,
      ASKBUS_RANK_DELAY_MS: String(opts.rankDelayMs),
      OTEL_SDK_DISABLED: 'true',
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stop = async (): Promise<void> => {
    await stopChild(child, 20_000);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error('askbus up did not start within 90 s')),
        START_TIMEOUT_MS,
      );
      child.once('exit', (code) => reject(new Error(`askbus up exited with ${code} before serving`)));
      watchOutput(child, 'up', log, (line) => {
        const m = /askbus is up: (http:\/\/\S+)/.exec(line);
        if (!m) return;
        clearTimeout(timer);
        resolve(m[1]!);
      });
    });
    return {
      url,
      rankers: 2,
      rankDelayMs: opts.rankDelayMs,
      processes: [{ name: 'askbus up', role: 'system', pid: child.pid! }],
      log,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
