import { readFileSync } from 'node:fs';
import { connect } from '@nats-io/transport-node';
import { AuthorizationError, credsAuthenticator, type ConnectionOptions } from '@nats-io/nats-core';
import { Bus, type BusOptions } from './bus';
import { userInboxPrefix } from './permissions';
import { checkUserName } from './reply-inbox';

export interface ConnectOptions extends BusOptions {
  /** NATS server URL(s); defaults to NATS_URL, then nats://127.0.0.1:4222. */
  servers?: string | string[];
  /** NATS user and password; default NATS_USER and NATS_PASSWORD. */
  user?: string;
  pass?: string;
  /** NATS token; default NATS_TOKEN. */
  token?: string;
  /** A NATS creds file (JWT and nkey seed); default NATS_CREDS. */
  credsFile?: string;
  /** Where the NATS_* credentials are read from (default process.env). */
  env?: NodeJS.ProcessEnv;
}

/**
 * How to authenticate: the options' credentials if they give any, else the environment's
 * (NATS_USER + NATS_PASSWORD, NATS_TOKEN or NATS_CREDS), else none. One kind only.
 */
export function natsAuth(
  opts: ConnectOptions,
): Pick<ConnectionOptions, 'user' | 'pass' | 'token' | 'authenticator'> {
  const fromOpts = opts.user !== undefined || opts.token !== undefined || opts.credsFile !== undefined;
  const env = opts.env ?? process.env;
  const set = (v: string | undefined) => (v === '' ? undefined : v);
  const { user, pass, token, credsFile } = fromOpts
    ? opts
    : {
        user: set(env.NATS_USER),
        pass: set(env.NATS_PASSWORD),
        token: set(env.NATS_TOKEN),
        credsFile: set(env.NATS_CREDS),
      };
  const kinds = [user !== undefined, token !== undefined, credsFile !== undefined].filter(Boolean).length;
  if (kinds > 1) throw new Error('NATS credentials: give one of user and password, a token, or a creds file');
  if (user !== undefined) {
    if (pass === undefined)
      throw new Error(`NATS credentials: user "${user}" has no password (NATS_PASSWORD)`);
    return { user, pass };
  }
  if (token !== undefined) return { token };
  if (credsFile !== undefined) {
    let creds: Uint8Array;
    try {
      creds = readFileSync(credsFile);
    } catch (err) {
      throw new Error(`NATS credentials: cannot read the creds file ${credsFile}: ${(err as Error).message}`);
    }
    return { authenticator: credsAuthenticator(creds) };
  }
  return {};
}

/**
 * Connects to NATS with reconnects for ever (a NATS restart must not end a service). NATS
 * refusing a publish or subscription is logged with its subject, and refused calls fail at once.
 */
export async function connectBus(opts: ConnectOptions): Promise<Bus> {
  const auth = natsAuth(opts);
  if (auth.user !== undefined) checkUserName(auth.user);
  const servers = opts.servers ?? process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
  // A user's replies (the bus's and JetStream's) come to inboxes only it may read.
  const inboxPrefix = opts.inboxPrefix ?? (auth.user ? userInboxPrefix(auth.user) : undefined);
  let nc;
  try {
    nc = await connect({
      servers,
      name: `askbus-${opts.service}`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      ...(inboxPrefix ? { inboxPrefix } : {}),
      ...auth,
    });
  } catch (err) {
    const who = auth.user
      ? `user "${auth.user}"`
      : auth.token
        ? 'the token'
        : auth.authenticator
          ? 'the creds file'
          : 'no credentials';
    if (err instanceof AuthorizationError) {
      throw new Error(`NATS at ${String(servers)} refused ${opts.service} (${who}): ${err.message}`, {
        cause: err,
      });
    }
    throw err;
  }
  const {
    env: _env,
    user: _user,
    pass: _pass,
    token: _token,
    credsFile: _creds,
    servers: _servers,
    ...busOpts
  } = opts;
  // As a NATS user the bus answers only user inboxes and checks who cancels (BusOptions.user).
  return new Bus(nc, {
    ...busOpts,
    ...(inboxPrefix ? { inboxPrefix } : {}),
    ...(auth.user !== undefined ? { user: auth.user } : {}),
  });
}

/**
 * Runs `stop` once on SIGTERM or SIGINT, then exits; a second signal exits at once.
 * Returns a function that removes the handlers.
 */
export function onShutdown(stop: () => Promise<void>, exit = true): () => void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals): void => {
    if (stopping) process.exit(1);
    stopping = true;
    void stop()
      .catch((err) => console.error(`shutdown after ${signal} failed:`, err))
      .finally(() => exit && process.exit(0));
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
  return () => {
    process.off('SIGTERM', handler);
    process.off('SIGINT', handler);
  };
}
