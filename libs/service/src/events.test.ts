import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { eventContracts, eventSubject, keyOfSubjectToken, subjectToken } from '@askbus/contracts';
import type { A2aTaskEventEnvelope } from '@askbus/contracts';
import type { Bus, EventMeta } from '@askbus/bus';
import { BusError } from '@askbus/bus';
import { startNatsServer } from '@askbus/bus';
import { passwordEnvVar } from '@askbus/bus';
import type { NatsUser } from '@askbus/bus';
import { renderNatsAuthConfig } from '@askbus/bus';
import { connectBus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { parseTraceparent } from '@askbus/bus';
import { loadSystem } from './system';

// The whole system's principals, as the services declare them.
const auth = (await loadSystem()).authorization;
const NATS_USERS = auth.users;

let nats: Awaited<ReturnType<typeof testNats>>;
let publisher: Bus;
let subscriber: Bus;
const warnings: string[] = [];

beforeAll(async () => {
  nats = await testNats();
  publisher = await testBus(nats.url, 'pub');
  subscriber = await testBus(nats.url, 'sub', { log: (_level, msg) => warnings.push(msg) });
});

afterAll(async () => {
  await Promise.all([publisher?.drain(), subscriber?.drain()]);
  await nats?.stop();
});

const end = (taskId: string, seq: number): A2aTaskEventEnvelope => ({
  type: 'end',
  taskId,
  origin: 'o1',
  seq,
});

/** Collects what a subscription hears until `n` events arrived. */
function hear(key: string | undefined, n: number) {
  const got: { event: A2aTaskEventEnvelope; meta: EventMeta }[] = [];
  let done: () => void = () => undefined;
  const all = new Promise<void>((r) => (done = r));
  const sub = subscriber.subscribe(eventContracts.a2aTaskEvents, key, (event, meta) => {
    got.push({ event, meta });
    if (got.length === n) done();
  });
  return { got, all, sub };
}

describe('Bus.publish / Bus.subscribe (event subjects)', () => {
  it('delivers validated events on <prefix>.<key> with a W3C traceparent of the caller’s trace', async () => {
    const { got, all, sub } = hear('task-1', 2);
    await subscriber.nc.flush();
    const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    publisher.publish(eventContracts.a2aTaskEvents, 'task-1', end('task-1', 0), { traceparent: parent });
    publisher.publish(eventContracts.a2aTaskEvents, 'task-2', end('task-2', 0)); // another key: not heard
    publisher.publish(eventContracts.a2aTaskEvents, 'task-1', end('task-1', 1));
    await all;
    sub.unsubscribe();
    expect(got.map((g) => g.event.seq)).toEqual([0, 1]);
    expect(got[0]!.meta.subject).toBe('a2a.v1.events.task-1');
    expect(parseTraceparent(got[0]!.meta.traceparent)?.traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(parseTraceparent(got[1]!.meta.traceparent)).toBeDefined();
  });

  it('hears every key without one; a key that is no subject token travels encoded', async () => {
    const { got, all, sub } = hear(undefined, 2);
    await subscriber.nc.flush();
    publisher.publish(eventContracts.a2aTaskEvents, 'a', end('a', 0));
    publisher.publish(eventContracts.a2aTaskEvents, 'odd.key *>', end('odd.key *>', 0));
    await all;
    sub.unsubscribe();
    expect(got.map((g) => g.meta.subject)).toEqual([
      'a2a.v1.events.a',
      `a2a.v1.events.${subjectToken('odd.key *>')}`,
    ]);
    expect(subjectToken('odd.key *>')).toMatch(/^_[0-9a-f]+$/);
    for (const key of ['a', 'odd.key *>', 'ünï.cødé', '550e8400-e29b-41d4-a716-446655440000'])
      expect(keyOfSubjectToken(subjectToken(key))).toBe(key);
  });

  it('refuses to publish an invalid event, and drops (and logs) an invalid one it receives', async () => {
    expect(() =>
      publisher.publish(eventContracts.a2aTaskEvents, 'x', {
        type: 'end',
        taskId: 'x',
        origin: 'o',
      } as never),
    ).toThrow(BusError);
    const { got, all, sub } = hear('x', 1);
    await subscriber.nc.flush();
    const subject = eventSubject(eventContracts.a2aTaskEvents, 'x');
    publisher.nc.publish(subject, 'not json');
    publisher.nc.publish(
      subject,
      JSON.stringify({ type: 'event', taskId: 'x', origin: 'o', seq: 0, event: {} }),
    );
    publisher.publish(eventContracts.a2aTaskEvents, 'x', end('x', 3));
    await all;
    sub.unsubscribe();
    expect(got.map((g) => g.event.seq)).toEqual([3]);
    expect(warnings.filter((w) => w === 'dropped an invalid event')).toHaveLength(2);
  });
});

describe('event subjects under the generated NATS authorization', () => {
  it('gateways publish and hear A2A task events and cancel requests; a ranker may do neither', async () => {
    const passwords = Object.fromEntries(NATS_USERS.map((u) => [u, `pw-${u}`]));
    const server = await startNatsServer({
      config: renderNatsAuthConfig(auth),
      env: Object.fromEntries(NATS_USERS.map((u) => [passwordEnvVar(u), passwords[u]!])),
    });
    const logs: string[] = [];
    const as = (user: NatsUser) =>
      connectBus({
        servers: server.url,
        service: user,
        user,
        pass: passwords[user]!,
        log: (_level, msg) => logs.push(msg),
      });
    const [a, b, ranker] = await Promise.all([as('gateway'), as('gateway'), as('ranker')]);
    try {
      const heard: string[] = [];
      b.subscribe(eventContracts.a2aTaskEvents, undefined, (e) => heard.push(`event ${e.taskId}`));
      b.subscribe(eventContracts.a2aCancelTask, undefined, (e) => heard.push(`cancel ${e.taskId}`));
      ranker.subscribe(eventContracts.a2aTaskEvents, undefined, (e) => heard.push(`ranker ${e.taskId}`));
      await Promise.all([b.nc.flush(), ranker.nc.flush()]);
      ranker.publish(eventContracts.a2aTaskEvents, 't0', end('t0', 0));
      a.publish(eventContracts.a2aTaskEvents, 't1', end('t1', 0));
      a.publish(eventContracts.a2aCancelTask, 't1', { taskId: 't1' });
      await vi.waitFor(() => expect(heard).toEqual(['event t1', 'cancel t1']));
      expect(logs.join('\n')).toMatch(/ranker may not subscribe to "a2a\.v1\.events\.\*"/);
      expect(logs.join('\n')).toMatch(/ranker may not publish to "a2a\.v1\.events\.t0"/);
    } finally {
      await Promise.all([a, b, ranker].map((x) => x.drain(1_000)));
      await server.stop();
    }
  });
});
