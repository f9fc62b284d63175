import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { AuthorizationError } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';

/** The nats-server binary: NATS_SERVER_BIN, else the PATH, else Debian's /usr/sbin. */
export function findNatsServer(): string | undefined {
  const fromEnv = process.env.NATS_SERVER_BIN;
  if (fromEnv && existsSync(fromEnv)) return fromEnv;
  const dirs = [
    ...(process.env.PATH ?? '').split(delimiter),
    '/usr/sbin',
    '/usr/local/sbin',
    '/usr/local/bin',
  ];
  return dirs.map((d) => join(d, 'nats-server')).find((p) => existsSync(p));
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

export interface NatsServerHandle {
  url: string;
  port: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

export interface NatsServerOptions {
  port?: number;
  storeDir?: string;
  /** Config file text (e.g. renderNatsAuthConfig()); the command line's address, port and JetStream still apply. */
  config?: string;
  /** A config file to load instead of `config`. */
  configFile?: string;
  /** Extra environment of the server, for the config's `$VAR` references. */
  env?: Record<string, string>;
}

/**
 * Starts a nats-server of our own (JetStream on, loopback only) on a free port, or `port`,
 * and resolves once it accepts clients.
 */
export async function startNatsServer(opts: NatsServerOptions = {}): Promise<NatsServerHandle> {
  const bin = findNatsServer();
  if (!bin) {
    throw new Error(
      'nats-server was not found: install it (Debian/Ubuntu: apt-get install -y nats-server), ' +
        'set NATS_SERVER_BIN to its path, or set NATS_URL to a running NATS server',
    );
  }
  const port = opts.port ?? (await freePort());
  const ownStore = !opts.storeDir;
  const storeDir = opts.storeDir ?? mkdtempSync(join(tmpdir(), 'askbus-nats-'));
  let configFile = opts.configFile;
  if (opts.config !== undefined && !configFile) {
    configFile = join(storeDir, 'nats-server.conf');
    writeFileSync(configFile, opts.config, { mode: 0o600 });
  }
  const args = ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir];
  const child = spawn(bin, configFile ? ['-c', configFile, ...args] : args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    // A process group of its own: Ctrl-C in a terminal signals the whole foreground group, and
    // NATS must outlive the services that drain through it (stop() ends it, last).
    detached: true,
    ...(opts.env ? { env: { ...process.env, ...opts.env } } : {}),
  });
  // …but not outlive this process.
  const killOnExit = (): void => void (child.exitCode === null && child.kill('SIGKILL'));
  process.once('exit', killOnExit);
  child.once('exit', () => process.off('exit', killOnExit));
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const url = `nats://127.0.0.1:${port}`;
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}: ${stderr}`);
    try {
      const nc = await connect({ servers: url, reconnect: false, timeout: 500 });
      await nc.close();
      break;
    } catch (err) {
      // A server with authorization refuses us, which shows it is up.
      if (err instanceof AuthorizationError) break;
      if (Date.now() - started > 10_000) {
        child.kill('SIGKILL');
        throw new Error(`nats-server did not accept clients on ${url} within 10 s: ${stderr}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url,
    port,
    process: child,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 3_000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      if (ownStore) rmSync(storeDir, { recursive: true, force: true });
    },
  };
}
