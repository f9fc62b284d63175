import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { SharedLimits } from './shared-limits';

let nats: Awaited<ReturnType<typeof testNats>>;
let buses: Bus[];

beforeAll(async () => {
  nats = await testNats();
  buses = await Promise.all([testBus(nats.url, 'gateway'), testBus(nats.url, 'gateway')]);
});

afterAll(async () => {
  for (const b of buses) await b.drain(500);
  await nats?.stop();
});

const pair = async (timing?: {
  refreshMs: number;
  staleMs: number;
}): Promise<[SharedLimits, SharedLimits]> => {
  const scope = randomUUID();
  const [a, b] = await Promise.all(buses.map((bus) => SharedLimits.open(bus, scope, timing)));
  return [a!, b!];
};

it('counts concurrent requests of two replicas exactly: every count once, none lost', async () => {
  const [a, b] = await pair();
  const counts = await Promise.all(
    Array.from({ length: 120 }, (_, i) => (i % 2 === 0 ? a : b).consume('client:alice')),
  );
  expect(counts.map((c) => c.count).sort((x, y) => x - y)).toEqual(
    Array.from({ length: 120 }, (_, i) => i + 1),
  );
  expect((await b.consume('client:bob')).count).toBe(1);
  a.close();
  b.close();
});

it('holds a stream cap across replicas, and frees the share of a replica that stopped refreshing it', async () => {
  const [a, b] = await pair({ refreshMs: 100, staleMs: 400 });
  expect(await a.enter('k', 3)).toBe(true);
  expect(await a.enter('k', 3)).toBe(true);
  expect(await b.enter('k', 3)).toBe(true);
  expect(await b.enter('k', 3)).toBe(false);
  await a.leave('k');
  expect(await b.enter('k', 3)).toBe(true);
  expect(await a.enter('k', 3)).toBe(false);
  // a stops without giving its place back (as a replica that died): once its share is stale, it
  // no longer counts; b's own, refreshed, still does.
  a.close();
  await expect.poll(() => b.enter('k', 3), { timeout: 3_000, interval: 100 }).toBe(true);
  expect(b.openHere('k')).toBe(3);
  expect(await b.enter('k', 3)).toBe(false);
  b.close();
});
