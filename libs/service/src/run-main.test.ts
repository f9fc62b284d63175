import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts } from '@askbus/contracts';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';

const here = dirname(fileURLToPath(import.meta.url));
const tsx = join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/cli.mjs');

let nats: Awaited<ReturnType<typeof testNats>>;
let client: Bus;
beforeAll(async () => {
  nats = await testNats();
  client = await testBus(nats.url, 'client');
});
afterAll(async () => {
  await client.drain();
  await nats.stop();
});

describe('a service process (runMain)', () => {
  it('serves metrics, and on SIGTERM goes unready, finishes its work, stops taking more and exits 0', async () => {
    const child = spawn(process.execPath, [tsx, join(here, 'fixtures/slow-service.ts')], {
      env: { ...process.env, NATS_URL: nats.url, METRICS_PORT: '0', SLOW_MS: '800' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const t0 = Date.now();
    while (!/"opsPort":\d+/.test(out)) {
      if (Date.now() - t0 > 20_000) throw new Error(`service did not start:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const line = JSON.parse(out.split('\n').find((l) => l.includes('"opsPort"'))!) as {
      opsPort: number;
      service: string;
    };
    expect(line.service).toBe('slowsvc');
    const ops = `http://127.0.0.1:${line.opsPort}`;
    expect((await fetch(`${ops}/readyz`)).status).toBe(200);

    await client.request(contracts.sites, {}, { timeoutMs: 5_000 });
    const metrics = await (await fetch(`${ops}/metrics`)).text();
    expect(metrics).toMatch(
      /askbus_requests_handled_total\{service="slowsvc",subject="retrieve.v1.sites",outcome="ok"\} 1/,
    );
    expect(metrics).toMatch(/askbus_request_duration_seconds_bucket\{le="1",service="slowsvc"/);

    const inFlight = client.request(contracts.sites, {}, { timeoutMs: 5_000 });
    await new Promise((r) => setTimeout(r, 150));
    child.kill('SIGTERM');
    // Readiness goes false while the request is still being handled.
    let unready = false;
    for (let i = 0; i < 20 && !unready; i++) {
      const res = await fetch(`${ops}/readyz`).catch(() => undefined);
      unready = res?.status === 503;
      if (!unready) await new Promise((r) => setTimeout(r, 20));
    }
    expect(unready).toBe(true);
    // New work is refused (no one serves the subject any more) ...
    await expect(client.request(contracts.sites, {}, { timeoutMs: 2_000 })).rejects.toMatchObject({
      code: 'no_responders',
    });
    // ... while the work in flight completes.
    await expect(inFlight).resolves.toMatchObject({ sites: [{ name: 'slow' }] });
    expect(await exited).toBe(0);
  }, 30_000);
});
