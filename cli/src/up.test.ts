import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bus } from '@askbus/bus';
import { startDemoSystem, type DemoSystem } from './testing';
import type { Running } from './up';

/** The whole system as `askbus up` runs it, on a nats-server of this test's own. */
let system: DemoSystem;
let running: Running;
let dataDir: string;

beforeAll(async () => {
  system = await startDemoSystem();
  ({ running, dataDir } = system);
});

afterAll(() => system?.stop());

interface Sse {
  event: string;
  data: Record<string, unknown>;
}
function parseSse(text: string): Sse[] {
  return text
    .split(/\n\n/)
    .map((block) => {
      const lines = block.split('\n');
      const event =
        lines
          .find((l) => l.startsWith('event:'))
          ?.slice(6)
          .trim() ?? 'message';
      const data = lines
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5))
        .join('\n');
      return data ? { event, data: JSON.parse(data) as Record<string, unknown> } : undefined;
    })
    .filter((e): e is Sse => e !== undefined);
}

const resultItems = (events: Sse[]) =>
  events
    .filter((e) => e.data.message_type === 'result' && Array.isArray(e.data.content))
    .flatMap((e) => e.data.content as { name: string; score: number; description: string }[]);

describe('gatewayUrl', () => {
  it('finds the gateway a running askbus up noted, on whatever port it took', async () => {
    const { gatewayUrl } = await import('./client');
    expect(gatewayUrl(undefined, { ASKBUS_DATA_DIR: dataDir })).toBe(running.url);
    expect(gatewayUrl(undefined, { ASKBUS_DATA_DIR: dataDir, ASKBUS_URL: 'http://x.example:9' })).toBe(
      'http://x.example:9',
    );
  });
});

describe('askbus up, end to end over NATS', () => {
  it('streams Eastwood westerns for "westerns with clint eastwood"', async () => {
    const res = await fetch(`${running.url}/ask?query=westerns+with+clint+eastwood&site=movies`);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const events = parseSse(await res.text());
    const types = events.map((e) => e.data.message_type);
    expect(types[0]).toBe('begin-nlweb-response');
    expect(types.at(-1)).toBe('end-nlweb-response');
    const top = resultItems(events)
      .slice(0, 5)
      .map((i) => i.name);
    expect(top).toEqual(expect.arrayContaining(['Pale Rider', 'High Plains Drifter']));
    expect(resultItems(events)[0]!.description).toMatch(/eastwood/i);
  });

  it('answers the cars site without streaming', async () => {
    const res = await fetch(
      `${running.url}/ask?query=fuel+efficient+japanese+cars&site=cars&streaming=false`,
    );
    const body = (await res.json()) as { results: { schema_object: unknown }[] };
    expect(res.status).toBe(200);
    expect(body.results.length).toBeGreaterThan(0);
    expect(JSON.stringify(body.results.slice(0, 5))).toMatch(/Japan/);
  });

  it('lists the demo sites', async () => {
    const body = (await (await fetch(`${running.url}/sites`)).json()) as { sites: string[] };
    expect(body.sites).toEqual(expect.arrayContaining(['movies', 'cars']));
  });

  it('is ready', async () => {
    expect((await fetch(`${running.url}/ready`)).status).toBe(200);
  });
});

describe('a client that hangs up', () => {
  let slowSystem: DemoSystem;
  let slow: Running;
  beforeAll(async () => {
    // A second system with slow rankers, on a nats-server of its own, over the same index.
    slowSystem = await startDemoSystem({ dataDir, demo: false, rankDelayMs: 5_000 });
    slow = slowSystem.running;
  });
  afterAll(() => slowSystem?.stop());

  it('cancels the query in the router and in every ranker working on it', async () => {
    const byService = (name: string): Bus[] => slow.buses.filter((b) => b.service === name);
    const cancelled = (name: string) => byService(name).reduce((n, b) => n + b.stats.cancelled, 0);
    const inFlight = (name: string) => byService(name).reduce((n, b) => n + b.stats.inFlight, 0);
    const ac = new AbortController();
    const res = await fetch(`${slow.url}/ask?query=westerns&site=movies`, { signal: ac.signal });
    const reader = res.body!.getReader();
    await reader.read(); // begin-nlweb-response: the query is under way
    await waitFor(() => inFlight('ranker') > 0);
    const t0 = Date.now();
    ac.abort();
    await waitFor(() => cancelled('router') === 1 && inFlight('ranker') === 0);
    expect(Date.now() - t0).toBeLessThan(2_000); // long before the 5 s model delay
    expect(cancelled('ranker')).toBeGreaterThan(0);
  });
});

async function waitFor(cond: () => boolean, ms = 4_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('natsUrlFor', () => {
  it('takes NATS_URL, else the server a running askbus up noted in the data folder', async () => {
    const { natsUrlFor } = await import('./data-dir');
    expect(natsUrlFor({ NATS_URL: 'nats://nats.example:4222' })).toMatchObject({
      url: 'nats://nats.example:4222',
      from: 'NATS_URL',
    });
    // `running` above was started with a NATS_URL of its own, so it noted nothing.
    expect(natsUrlFor({ ASKBUS_DATA_DIR: dataDir })).toMatchObject({ url: 'nats://127.0.0.1:4222' });
    const noted = mkdtempSync(join(tmpdir(), 'askbus-noted-'));
    writeFileSync(join(noted, 'nats.url'), 'nats://127.0.0.1:45678\n');
    expect(natsUrlFor({ ASKBUS_DATA_DIR: noted })).toMatchObject({ url: 'nats://127.0.0.1:45678' });
    rmSync(noted, { recursive: true, force: true });
  });
});

describe('NLWeb protocol 0.5 filters, end to end', () => {
  it('applies query.type in the retriever and a genre filter where the items have genres', async () => {
    const ask = async (query: Record<string, unknown>) => {
      const res = await fetch(`${running.url}/ask`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, return_response: { streaming: false } }),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as {
        content: { type: string; resource?: { data: Record<string, unknown> } }[];
      };
      return body.content.filter((c) => c.type === 'resource').map((c) => c.resource!.data);
    };
    const cars = await ask({ text: 'japanese', site: ['all'], type: 'Car' });
    expect(cars.length).toBeGreaterThan(0);
    expect(cars.every((d) => d['@type'] === 'Car')).toBe(true);
    const westerns = await ask({ text: 'clint eastwood', site: ['movies'], genre: 'Western' });
    expect(westerns.map((d) => d.name)).toEqual(
      expect.arrayContaining(['Pale Rider', 'High Plains Drifter']),
    );
    expect(westerns.every((d) => JSON.stringify(d.genre).includes('Western'))).toBe(true);
  });
});
