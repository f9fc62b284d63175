/**
 * The kernel's count of connections dropped because a listening socket's accept queue was full
 * (TcpExt ListenOverflows in /proc/net/netstat, for this network namespace). A dropped SYN is
 * retried by the client after 1 s, then 3 s, 7 s …, which shows up as seconds of time to headers.
 */
import { readFileSync } from 'node:fs';

export function listenOverflows(): number {
  try {
    const lines = readFileSync('/proc/net/netstat', 'utf8').split('\n');
    const i = lines.findIndex((l) => l.startsWith('TcpExt:'));
    const keys = lines[i]?.split(/\s+/) ?? [];
    const values = lines[i + 1]?.split(/\s+/) ?? [];
    return Number(values[keys.indexOf('ListenOverflows')] ?? NaN);
  } catch {
    return NaN;
  }
}
