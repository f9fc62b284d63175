import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

/** askbus's data folder: ASKBUS_DATA_DIR, else `.data` in the checkout. */
export function dataDirFor(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.ASKBUS_DATA_DIR ?? join(repoRoot, '.data'));
}

/** Where a running `askbus up` notes the URL of the nats-server it started. */
export const NATS_URL_FILE = 'nats.url';

/**
 * The NATS a command line tool should use: NATS_URL, else the server a running `askbus up`
 * started (noted in its data folder), else the default local port.
 */
export function natsUrlFor(env: NodeJS.ProcessEnv = process.env): string {
  if (env.NATS_URL) return env.NATS_URL;
  try {
    const noted = readFileSync(join(dataDirFor(env), NATS_URL_FILE), 'utf8').trim();
    if (noted) return noted;
  } catch {
    // no askbus up running from this folder
  }
  return 'nats://127.0.0.1:4222';
}
