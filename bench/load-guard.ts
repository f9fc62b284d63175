/**
 * Safety checks of bench:load before it opens a thousand sockets: the target must be this
 * machine's own loopback address, and the file-descriptor limit must cover the sockets.
 */
import { spawnSync } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';

/** True for 127.0.0.0/8, ::1 and their IPv4-mapped IPv6 forms. */
export function isLoopbackAddress(address: string): boolean {
  const a = address.toLowerCase().replace(/^\[|\]$/g, '');
  if (a === '::1' || a === '0:0:0:0:0:0:0:1') return true;
  const v4 = a.startsWith('::ffff:') ? a.slice('::ffff:'.length) : a;
  return isIP(v4) === 4 && v4.split('.')[0] === '127';
}

/** A target bench:load will not load; its message says why. */
export class RefusedTarget extends Error {}

/**
 * Resolves the URL's host and throws unless every address it resolves to is a loopback one:
 * the load generator must never be pointed at someone else's server.
 */
export async function assertLoopbackUrl(url: string): Promise<URL> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RefusedTarget(`bench:load: "${url}" is not a URL`);
  }
  if (parsed.protocol !== 'http:') {
    throw new RefusedTarget(`bench:load: only http:// targets, not ${parsed.protocol}`);
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  } catch (err) {
    throw new RefusedTarget(
      `bench:load refuses ${parsed.origin}: ${host} does not resolve (${(err as Error).message}), ` +
        'so it cannot be shown to be a loopback address',
    );
  }
  const outside = addresses.filter((a) => !isLoopbackAddress(a));
  if (addresses.length === 0 || outside.length > 0) {
    throw new RefusedTarget(
      `bench:load refuses ${parsed.origin}: it loads only this machine's own loopback addresses ` +
        `(127.0.0.0/8, ::1), and ${host} resolves to ${outside.join(', ') || 'nothing'}`,
    );
  }
  return parsed;
}

export interface FdLimit {
  soft: number;
  hard: number;
}

/** This process's open-files limit (from /proc/self/limits; Infinity for "unlimited"). */
export function openFilesLimit(): FdLimit | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const [soft, hard] = (line ?? '').split(/\s{2,}/).slice(1, 3);
    const num = (v: string | undefined) => (v === 'unlimited' ? Infinity : Number(v));
    if (!soft || !hard) return undefined;
    return { soft: num(soft), hard: num(hard) };
  } catch {
    return undefined;
  }
}

/**
 * Descriptors one process of the run may need: every client socket (load generator) or every
 * accepted socket (gateway), plus NATS connections, child pipes, files and headroom.
 */
export const fdsNeeded = (streams: number): number => streams + 512;

export const REEXEC_MARK = 'ASKBUS_LOAD_FD_RAISED';

/**
 * Makes sure the open-files limit covers `streams` sockets. Node cannot raise its own limit,
 * so when the soft limit is too low but the hard one allows it, the run starts again under
 * `sh -c 'ulimit -n N; exec …'` (children inherit the raised limit) and this returns the exit
 * code to leave with. Throws with a clear message when even the hard limit is too low.
 */
export function ensureFdLimit(streams: number, log: (line: string) => void): number | undefined {
  const limit = openFilesLimit();
  const need = fdsNeeded(streams);
  if (!limit) {
    log(`open-files limit: unknown (no /proc/self/limits); need about ${need}`);
    return undefined;
  }
  if (limit.soft >= need) {
    log(`open-files limit (ulimit -n): ${limit.soft} soft / ${limit.hard} hard; need about ${need}: ok`);
    return undefined;
  }
  if (limit.hard < need || process.env[REEXEC_MARK]) {
    throw new Error(
      `bench:load needs about ${need} open files for ${streams} streams, but ulimit -n is ${limit.soft} ` +
        `(hard ${limit.hard}). Raise it (ulimit -n ${need}, or LimitNOFILE / limits.conf) or use fewer --streams.`,
    );
  }
  log(
    `open-files limit ${limit.soft} is below ${need}; raising the soft limit to ${need} and starting again`,
  );
  const result = spawnSync(
    'sh',
    [
      '-c',
      `ulimit -n ${need} && exec "$0" "$@"`,
      process.execPath,
      ...process.execArgv,
      ...process.argv.slice(1),
    ],
    { stdio: 'inherit', env: { ...process.env, [REEXEC_MARK]: '1' } },
  );
  return result.status ?? 1;
}
