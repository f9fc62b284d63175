/**
 * The system eval:answers asks: everything `npm run up` starts (own nats-server, every service,
 * the demo sites, the default embedded retriever and no LLM), the new sites loaded with the real
 * `askbus load` from a JSON lines file, as a new user would, and questions over REST /ask.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDemoSystem, type DemoSystem } from '@askbus/cli';

const ASKBUS_BIN = fileURLToPath(new URL('../../cli/bin/askbus.mjs', import.meta.url));

/** `askbus up` on a nats-server and data folder of its own, the demo sites loaded. */
export function startSystem(): Promise<DemoSystem> {
  return startDemoSystem();
}

/** Writes the items to `<dir>/<site>.jsonl` and runs `askbus load <file> --site <site>`; resolves with its output. */
export async function loadWithCli(
  natsUrl: string,
  dir: string,
  site: string,
  items: ReadonlyArray<Record<string, unknown>>,
): Promise<string> {
  const file = join(dir, `${site}.jsonl`);
  writeFileSync(file, items.map((i) => JSON.stringify(i)).join('\n') + '\n');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ASKBUS_BIN, 'load', file, '--site', site, '--quiet'], {
      env: { ...process.env, NATS_URL: natsUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(out.trim()) : reject(new Error(`askbus load ${site} exited with ${code}: ${out}`)),
    );
  });
}

/** One question over REST /ask with streaming=false; the parsed JSON body, or an error body. */
export async function ask(
  baseUrl: string,
  site: string,
  query: string,
  timeoutMs = 120_000,
): Promise<unknown> {
  const url = `${baseUrl}/ask?${new URLSearchParams({ query, site, streaming: 'false' })}`;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    try {
      const body = JSON.parse(text) as unknown;
      return res.ok ? body : { messages: [{ message_type: 'error', error: `HTTP ${res.status}: ${text}` }] };
    } catch {
      return {
        messages: [{ message_type: 'error', error: `HTTP ${res.status}: not JSON: ${text.slice(0, 200)}` }],
      };
    }
  } catch (err) {
    return { messages: [{ message_type: 'error', error: `request failed: ${(err as Error).message}` }] };
  }
}
