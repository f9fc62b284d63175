import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startNatsServer, type NatsServerHandle } from '@askbus/bus';
import { up, type Running } from './up';

// Faults of the whole system: NATS goes away and comes back on the same address.

let nats: NatsServerHandle;
let running: Running;
let dataDir: string;
let port: number;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'askbus-faults-'));
  port = await freePort();
  nats = await startNatsServer({ port, storeDir: join(dataDir, 'nats') });
  running = await up({
    port: 0,
    host: '127.0.0.1',
    dataDir,
    rankers: 2,
    demo: true,
    natsUrl: nats.url,
    rankDelayMs: 0,
    log: () => undefined,
  });
});

afterAll(async () => {
  await running?.stop();
  await nats?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function eastwoodWesterns(timeoutMs = 10_000): Promise<string[]> {
  const res = await fetch(
    `${running.url}/ask?query=westerns+with+clint+eastwood&site=movies&streaming=false`,
    {
      signal: AbortSignal.timeout(timeoutMs),
    },
  );
  const body = (await res.json()) as { results?: { name: string }[] };
  return (body.results ?? []).map((r) => r.name);
}

describe('a NATS restart', () => {
  it('is survived: every service reconnects and queries after it succeed', async () => {
    expect(await eastwoodWesterns()).toEqual(expect.arrayContaining(['Pale Rider', 'High Plains Drifter']));

    await nats.stop();
    // While NATS is down the gateway stays up and answers what needs no other service.
    expect((await fetch(`${running.url}/health`)).status).toBe(200);
    expect((await fetch(`${running.url}/ready`)).status).toBe(503);

    nats = await startNatsServer({ port, storeDir: join(dataDir, 'nats') });
    // The first query goes out at once, while the services are still reconnecting (each on its
    // own 250 ms timer) and re-subscribing. A call dropped by a client that was still
    // disconnected, or answered no_responders because its service was not back yet, is sent
    // again by the bus (see its client side), so this query is answered, not left to wait out
    // the 15 s stream inactivity limit. The bound is loose for a loaded 2-core machine.
    const started = Date.now();
    const names = await eastwoodWesterns(30_000);
    const tookMs = Date.now() - started;
    console.log(`first query after the NATS restart answered in ${tookMs} ms`);
    expect(tookMs).toBeLessThan(10_000);
    expect(names).toEqual(expect.arrayContaining(['Pale Rider', 'High Plains Drifter']));
    expect(running.buses.every((b) => !b.nc.isClosed())).toBe(true);
  }, 60_000);
});
