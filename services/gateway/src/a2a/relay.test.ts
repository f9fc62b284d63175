/**
 * RelayedEventBus against a real nats-server: the SDK's own ExecutionEventQueue reads it, as
 * resubscribe does. Envelopes are published by hand to make duplicates and gaps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import type { Task } from '@a2a-js/sdk';
import {
  AgentEvent,
  ExecutionEventQueue,
  InMemoryTaskStore,
  ServerCallContext,
  UnauthenticatedUser,
} from '@a2a-js/sdk/server';
import type { AgentExecutionEvent } from '@a2a-js/sdk/server';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { eventContracts } from '@askbus/contracts';
import { RelayedEventBus } from './relay';
import { toWire } from './task-events';

let nats: Awaited<ReturnType<typeof testNats>>;
let owner: Bus;
let relayBus: Bus;
const warnings: string[] = [];

beforeAll(async () => {
  nats = await testNats();
  owner = await testBus(nats.url, 'gateway');
  relayBus = await testBus(nats.url, 'gateway');
});

afterAll(async () => {
  await Promise.all([owner?.drain(), relayBus?.drain()]);
  await nats?.stop();
});

const ctx = new ServerCallContext({ user: new UnauthenticatedUser() });
const status = (taskId: string, state: TaskState, text = ''): AgentExecutionEvent =>
  AgentEvent.statusUpdate({
    taskId,
    contextId: 'c',
    status: { state, message: undefined, timestamp: text },
    metadata: undefined,
  });
const task = (id: string, state: TaskState): Task => ({
  id,
  contextId: 'c',
  status: { state, message: undefined, timestamp: 'stored' },
  artifacts: [],
  history: [],
  metadata: undefined,
});

function relay(taskId: string, store: InMemoryTaskStore, signal = new AbortController().signal) {
  const bus = new RelayedEventBus(taskId, {
    bus: relayBus,
    taskStore: store,
    context: ctx,
    signal,
    orphanMs: 30_000,
    cancelAckMs: 5_000,
    cancelWaitMs: 5_000,
    warn: (msg) => warnings.push(msg),
  });
  const queue = new ExecutionEventQueue(bus);
  const seen: string[] = [];
  const drained = (async () => {
    for await (const e of queue.events())
      seen.push(
        e.kind === 'statusUpdate'
          ? `status ${e.data.status?.timestamp}`
          : e.kind === 'task'
            ? `task ${e.data.status?.timestamp}`
            : e.kind,
      );
  })();
  return { bus, seen, drained };
}

const send = (taskId: string, seq: number, event: AgentExecutionEvent, origin = 'run-1'): void =>
  owner.publish(eventContracts.a2aTaskEvents, taskId, {
    type: 'event',
    taskId,
    origin,
    seq,
    event: toWire(event),
  });

describe('RelayedEventBus', () => {
  it('passes events on in order, drops duplicates, sends the stored task on a gap, ends on a terminal state', async () => {
    const id = 'relay-gap';
    const store = new InMemoryTaskStore();
    await store.save(task(id, TaskState.TASK_STATE_WORKING), ctx);
    const { seen, drained } = relay(id, store);
    await relayBus.nc.flush();
    send(id, 0, status(id, TaskState.TASK_STATE_WORKING, 'e0'));
    send(id, 1, status(id, TaskState.TASK_STATE_WORKING, 'e1'));
    send(id, 1, status(id, TaskState.TASK_STATE_WORKING, 'e1 again'));
    // 2 is lost.
    send(id, 3, status(id, TaskState.TASK_STATE_WORKING, 'e3'));
    // A new run (another gateway, or after a restart) counts from 0 again.
    send(id, 0, status(id, TaskState.TASK_STATE_COMPLETED, 'done'), 'run-2');
    send(id, 4, status(id, TaskState.TASK_STATE_WORKING, 'after the end'));
    await drained;
    expect(seen).toEqual(['status e0', 'status e1', 'task stored', 'status e3', 'status done']);
    expect(warnings).toContain('A2A relay: events were lost; sending the stored task');
  });

  it('ends the stream when the client goes away, and stops listening', async () => {
    const id = 'relay-gone';
    const gone = new AbortController();
    const { seen, drained } = relay(id, new InMemoryTaskStore(), gone.signal);
    await relayBus.nc.flush();
    send(id, 0, status(id, TaskState.TASK_STATE_WORKING, 'e0'));
    await expect.poll(() => seen).toEqual(['status e0']);
    gone.abort();
    await drained;
    send(id, 1, status(id, TaskState.TASK_STATE_WORKING, 'e1'));
    await owner.nc.flush();
    await relayBus.nc.flush();
    expect(seen).toEqual(['status e0']);
  });

  it('after the run’s end marker without a final state, sends the stored one', async () => {
    const id = 'relay-end';
    const store = new InMemoryTaskStore();
    await store.save(task(id, TaskState.TASK_STATE_FAILED), ctx);
    const { seen, drained } = relay(id, store);
    await relayBus.nc.flush();
    send(id, 0, status(id, TaskState.TASK_STATE_WORKING, 'e0'));
    owner.publish(eventContracts.a2aTaskEvents, id, { type: 'end', taskId: id, origin: 'run-1', seq: 1 });
    await drained;
    expect(seen).toEqual(['status e0', 'status stored']);
  });
});
