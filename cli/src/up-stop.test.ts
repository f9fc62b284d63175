/**
 * Ctrl-C on `askbus up` in a terminal signals its whole process group. The services stop in
 * order (the gateway first, so a question in flight still gets its answer; then each service
 * drains; nats-server, in a group of its own, last) instead of NATS leaving under them.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';

const cli = fileURLToPath(new URL('./askbus.ts', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'askbus-up-stop-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

it('answers the question in flight and exits cleanly when the terminal sends SIGINT', async () => {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    ASKBUS_DATA_DIR: dataDir,
    ASKBUS_RANK_DELAY_MS: '1500',
    ASKBUS_RANKERS: '1',
  };
  delete env.NATS_URL;
  const child = spawn(process.execPath, ['--import', 'tsx', cli, 'up'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, as a shell gives a foreground job.
    detached: true,
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`askbus up did not come up: ${out}`)), 90_000);
      child.stdout.on('data', () => {
        const m = /askbus is up: (http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
    });
    const inFlight = fetch(`${url}/ask?query=westerns+with+clint+eastwood&site=movies`).then((r) => r.text());
    await new Promise((r) => setTimeout(r, 500));
    const signalled = Date.now();
    process.kill(-child.pid!, 'SIGINT');
    const answer = await inFlight;
    expect(answer).toMatch(/Eastwood|Pale Rider|High Plains Drifter/);
    expect(answer).toMatch(/end-nlweb-response/);
    expect(await exited).toBe(0);
    // No 10 s stall on a NATS that left first.
    expect(Date.now() - signalled).toBeLessThan(8_000);
    expect(out).not.toMatch(/AVV_ERR_READY_TIMEOUT|CONNECTION_REFUSED|disconnected/i);
  } finally {
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
  }
}, 120_000);
