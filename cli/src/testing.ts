import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Message } from '@askbus/contracts';
import { renderNatsAuthConfig, startNatsServer, type NatsUser } from '@askbus/bus';
import { loadSystem } from '@askbus/service';
import { testNats } from '@askbus/bus/testing';
import { up, type Running, type UpOptions } from './up';

/** The whole system as `askbus up` runs it, on a nats-server and a data folder of its own. */
export interface DemoSystem {
  running: Running;
  natsUrl: string;
  dataDir: string;
  /** With `natsPermissions`: each NATS user's password (the services' and `loader`'s). */
  natsPasswords?: Record<NatsUser, string>;
  stop(): Promise<void>;
}

export interface DemoSystemOptions {
  /**
   * Runs NATS with the authorization renderNatsAuthConfig generates, every service connected as
   * its own user with its own permissions.
   */
  natsPermissions?: boolean;
}

/**
 * Starts every service with the demo sites loaded, for tests and benchmarks. Each call gets its
 * own nats-server, so systems never share subjects; `overrides` change the `up` options.
 */
export async function startDemoSystem(
  overrides: Partial<UpOptions> = {},
  opts: DemoSystemOptions = {},
): Promise<DemoSystem> {
  const auth = (await loadSystem()).authorization;
  const natsPasswords = opts.natsPermissions ? randomPasswords(auth.users) : undefined;
  const nats = natsPasswords
    ? await startNatsServer({ config: renderNatsAuthConfig(auth, { passwords: natsPasswords }) })
    : await testNats();
  const dataDir = overrides.dataDir ?? mkdtempSync(join(tmpdir(), 'askbus-system-'));
  const running = await up({
    port: 0,
    host: '127.0.0.1',
    rankers: 2,
    demo: true,
    rankDelayMs: 0,
    log: () => undefined,
    ...(natsPasswords ? { natsCredentials: (user: NatsUser) => ({ user, pass: natsPasswords[user] }) } : {}),
    ...overrides,
    dataDir,
    natsUrl: nats.url,
  });
  return {
    running,
    natsUrl: nats.url,
    dataDir,
    ...(natsPasswords ? { natsPasswords } : {}),
    stop: async () => {
      await running.stop();
      await nats.stop();
      if (!overrides.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A service as its own OS process (`services/<name>/src/main.ts` under tsx), for fault tests. */
export interface ServiceProcess {
  child: ChildProcess;
  /** Its stdout and stderr so far (pino JSON lines), for failure messages. */
  output(): string;
  /** Kills it at once (SIGKILL: no drain, no goodbye), and resolves when it is gone. */
  kill(): Promise<void>;
}

/**
 * Starts `services/<dir>/src/main.ts` on `natsUrl` with extra environment, and resolves once it
 * logs that it serves (its subscriptions are then registered with NATS).
 */
export async function spawnService(
  dir: string,
  natsUrl: string,
  env: Record<string, string> = {},
  startMs = 30_000,
): Promise<ServiceProcess> {
  const main = fileURLToPath(new URL(`../../services/${dir}/src/main.ts`, import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', main], {
    env: { ...process.env, NATS_URL: natsUrl, LOG_LEVEL: 'info', METRICS_PORT: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${dir} did not start: ${out}`)), startMs);
    child.once('exit', (code) => reject(new Error(`${dir} exited with ${code}: ${out}`)));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (/"msg":"askbus [\w-]+ serving"/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return {
    child,
    output: () => out,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/**
 * An OpenAI-compatible chat-completions server whose answers take as long as the test says:
 * request n (0-based, in arrival order) answers `{"score":90,…}` after `delayOf(n)` ms. It counts
 * what a fault test needs to see: requests received, answered, and abandoned (the client closed
 * the connection before the answer).
 */
export interface SlowModel {
  baseURL: string;
  delayOf: (n: number) => number;
  readonly received: number;
  readonly answered: number;
  readonly abandoned: number;
  /** Requests still waiting for their answer. */
  readonly open: number;
  reset(): void;
  close(): Promise<void>;
}

export async function startSlowModel(delayOf: (n: number) => number): Promise<SlowModel> {
  let received = 0;
  let answered = 0;
  let abandoned = 0;
  let open = 0;
  const server = createServer((req, res) => {
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404).end();
      return;
    }
    req.resume();
    const n = received++;
    open++;
    const answer = (): void => {
      const content = JSON.stringify({ score: 90, description: 'scored by the slow test model' });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `chatcmpl-slow-${n}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: 'slow',
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
      answered++;
    };
    const timer = setTimeout(answer, model.delayOf(n));
    res.on('close', () => {
      open--;
      clearTimeout(timer);
      if (!res.writableFinished) abandoned++;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const model: SlowModel = {
    baseURL: `http://127.0.0.1:${port}/v1`,
    delayOf,
    get received() {
      return received;
    },
    get answered() {
      return answered;
    },
    get abandoned() {
      return abandoned;
    },
    get open() {
      return open;
    },
    reset: () => {
      received = answered = abandoned = 0;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  return model;
}

/** The NLWeb messages of a streamed REST /ask answer, each handed to `onMessage` as it arrives. */
export async function readAskStream(
  url: string,
  onMessage: (m: Message, all: Message[]) => void = () => undefined,
  timeoutMs = 60_000,
): Promise<Message[]> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  if (!res.ok || !res.body) throw new Error(`${url} answered ${res.status}`);
  const all: Message[] = [];
  let pending = '';
  for await (const chunk of res.body.pipeThrough(new TextDecoderStream())) {
    const { data, rest } = takeSseData(pending + chunk);
    pending = rest;
    for (const d of data) {
      const m = JSON.parse(d) as Message;
      all.push(m);
      onMessage(m, all);
    }
  }
  return all;
}

/**
 * The `data` of every whole SSE frame at the start of `text` (frames without data, such as
 * keepalive comments, left out) and what follows them, which waits for the rest of its frame.
 */
export function takeSseData(text: string): { data: string[]; rest: string } {
  const data: string[] = [];
  let rest = text;
  let end: number;
  while ((end = rest.indexOf('\n\n')) >= 0) {
    const frame = rest.slice(0, end);
    rest = rest.slice(end + 2);
    const lines = frame.split('\n').filter((l) => l.startsWith('data:'));
    if (lines.length > 0) data.push(lines.map((l) => l.slice(l.startsWith('data: ') ? 6 : 5)).join('\n'));
  }
  return { data, rest };
}

function randomPasswords(users: readonly NatsUser[]): Record<NatsUser, string> {
  return Object.fromEntries(users.map((u) => [u, randomBytes(18).toString('base64url')])) as Record<
    NatsUser,
    string
  >;
}
