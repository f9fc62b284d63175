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
/** Where a running `askbus up` notes its gateway's URL, so `ask` and `sites` find any port. */
export const GATEWAY_URL_FILE = 'gateway.url';

/** The gateway URL a running `askbus up` noted in the data folder, if any. */
export function notedGatewayUrl(env: NodeJS.ProcessEnv = process.env): string | undefined {
  try {
    return readFileSync(join(dataDirFor(env), GATEWAY_URL_FILE), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The NATS a command line tool should use, and where that came from: NATS_URL, else the server a
 * running `askbus up` started (noted in its data folder), else the default local port.
 */
export function natsUrlFor(env: NodeJS.ProcessEnv = process.env): { url: string; from: string } {
  if (env.NATS_URL) return { url: env.NATS_URL, from: 'NATS_URL' };
  const noted = join(dataDirFor(env), NATS_URL_FILE);
  try {
    const url = readFileSync(noted, 'utf8').trim();
    if (url) return { url, from: `noted by askbus up in ${noted}` };
  } catch {
    // no askbus up running from this folder
  }
  return {
    url: 'nats://127.0.0.1:4222',
    from: `the default: no NATS_URL, and no askbus up noted one in ${noted}`,
  };
}
