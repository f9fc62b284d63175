/**
 * Two gateway replicas on one NATS (each its own bus, Fastify server and SDK request handler): a
 * task runs on A; SubscribeToTask and CancelTask on B reach it through `a2a.v1.events.<taskId>`
 * and `a2a.v1.cancel.<taskId>`. Real nats-server, real HTTP, the SDK's own client.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { TaskState } from '@a2a-js/sdk';
import type { Artifact, StreamResponse, Task } from '@a2a-js/sdk';
import type { TaskStore } from '@a2a-js/sdk/server';
import { ServerCallContext, UnauthenticatedUser } from '@a2a-js/sdk/server';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { contracts, createMessageFactory, eventSubject, eventContracts } from '@askbus/contracts';
import { buildGateway } from '../index';
import { fakeItem } from '../testing';
import { asTask, clientFor, collect, sendRequest, userMessage } from './testing';
import type { Binding } from './testing';
import type { A2aInternals, A2aOptions } from './plugin';

const PACED_RESULTS = 6;
/** Pause between the paced router's results: long enough for B to join mid-run. */
const PACE_MS = 250;
/** Heartbeat of quiet tasks; relays give up after 3 missed ones (900 ms). */
const HEARTBEAT_MS = 300;

let nats: Awaited<ReturnType<typeof testNats>>;
let routerBus: Bus;
const buses: Bus[] = [];
const apps: FastifyInstance[] = [];
const aborted: string[] = [];
const calls: { query: string; queryId: string }[] = [];
type Replica = { base: string; internals: A2aInternals; bus: Bus };
let A: Replica;
let B: Replica;

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/**
 * The router: `paced` sends PACED_RESULTS results PACE_MS apart, then a summary; `slow` sends
 * one result and waits until its query is cancelled (recorded in `aborted`); `vague` asks the
 * user a question (the task parks in INPUT_REQUIRED).
 */
function servePacedRouter(bus: Bus): void {
  bus.serveStream(contracts.ask, async function* (req, ctx) {
    calls.push({ query: req.query, queryId: ctx.queryId });
    const msg = createMessageFactory(req.conversationId, req.queryId);
    yield msg({ message_type: 'begin-nlweb-response', query: req.query });
    if (req.query === 'vague') {
      yield msg({ message_type: 'ask_user', content: 'Which city are you in?' });
      yield msg({ message_type: 'end-nlweb-response' });
      return;
    }
    if (req.query === 'slow') {
      yield msg({ message_type: 'result', content: [fakeItem(0)] });
      await sleep(30_000, ctx.signal);
      if (ctx.signal.aborted) aborted.push(ctx.queryId);
      return;
    }
    for (let i = 0; i < PACED_RESULTS; i++) {
      yield msg({ message_type: 'result', content: [fakeItem(i)] });
      await sleep(PACE_MS, ctx.signal);
    }
    yield msg({ message_type: 'result', '@type': 'Summary', content: 'A summary.' });
    yield msg({ message_type: 'end-nlweb-response' });
  });
}

async function replica(): Promise<Replica> {
  const bus = await testBus(nats.url, 'gateway');
  buses.push(bus);
  let internals: A2aInternals | undefined;
  const app = await buildGateway(bus, {
    // onReady is a plugin option that buildGateway passes through with the rest of `a2a`.
    a2a: {
      replicas: { heartbeatMs: HEARTBEAT_MS },
      onReady: (i: A2aInternals) => (internals = i),
    } as A2aOptions,
  });
  apps.push(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return { base: `http://127.0.0.1:${port}`, internals: internals!, bus };
}

beforeAll(async () => {
  nats = await testNats();
  routerBus = await testBus(nats.url, 'router');
  servePacedRouter(routerBus);
  await routerBus.nc.flush();
  A = await replica();
  B = await replica();
});

afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await Promise.all([routerBus, ...buses].map((b) => b.drain()));
  await nats?.stop();
});

/** An event as both gateways must show it: its kind and what it says. */
function describeEvent(e: StreamResponse): string {
  const p = e.payload;
  if (p?.$case === 'statusUpdate') {
    const text = p.value.status?.message?.parts.map((x) =>
      x.content?.$case === 'text' ? x.content.value : '',
    );
    return `status ${TaskState[p.value.status?.state ?? 0]} ${text?.join('') ?? ''}`;
  }
  if (p?.$case === 'artifactUpdate') {
    const parts = p.value.artifact?.parts.map((x) => JSON.stringify(x.content));
    return `artifact ${p.value.artifact?.artifactId} append=${p.value.append} ${parts?.join(',')}`;
  }
  return p?.$case ?? 'none';
}

/** The urls of the result items a task or an event carries. */
function resultUrls(x: StreamResponse): string[] {
  const p = x.payload;
  const artifacts: Artifact[] =
    p?.$case === 'artifactUpdate' ? [p.value.artifact!] : p?.$case === 'task' ? p.value.artifacts : [];
  return artifacts
    .filter((a) => a.artifactId === 'results')
    .flatMap((a) => a.parts)
    .map((part) => (part.content?.$case === 'data' ? (part.content.value as { url: string }).url : ''));
}

describe('A2A across gateway replicas', () => {
  it.each<Binding>(['JSONRPC', 'HTTP+JSON'])(
    'SubscribeToTask on B (%s) streams the events of a task running on A, in order, to the end',
    async (binding) => {
      const a = await clientFor(A.base, 'JSONRPC');
      const b = await clientFor(B.base, binding);
      const onA: StreamResponse[] = [];
      let resolveTask: (id: string) => void = () => undefined;
      const taskIdP = new Promise<string>((r) => (resolveTask = r));
      const streamA = (async () => {
        for await (const e of a.sendMessageStream(sendRequest(userMessage('paced')))) {
          onA.push(e);
          if (e.payload?.$case === 'task') resolveTask(e.payload.value.id);
        }
      })();
      const taskId = await taskIdP;
      // B joins mid-run: after A has streamed its first result.
      await expect
        .poll(() => onA.some((e) => e.payload?.$case === 'artifactUpdate'), { timeout: 5_000 })
        .toBe(true);
      // Garbage on the task's subject is logged and dropped by B's relay.
      B.bus.nc.publish(eventSubject(eventContracts.a2aTaskEvents, taskId), '{"type":"event","seq":"x"}');
      const onB = await collect(b.resubscribeTask({ tenant: '', id: taskId }));
      await streamA;

      const [snapshot, ...live] = onB;
      expect(snapshot?.payload?.$case).toBe('task');
      if (snapshot?.payload?.$case !== 'task') return;
      expect(snapshot.payload.value.id).toBe(taskId);
      expect(snapshot.payload.value.status?.state).toBe(TaskState.TASK_STATE_WORKING);
      // B's live events are exactly A's last ones, in A's order, ending with COMPLETED.
      const fromA = onA.filter((e) => e.payload?.$case !== 'task').map(describeEvent);
      const fromB = live.map(describeEvent);
      expect(fromB.length).toBeGreaterThanOrEqual(4);
      expect(fromB).toEqual(fromA.slice(fromA.length - fromB.length));
      expect(fromB[fromB.length - 1]).toMatch(/^status TASK_STATE_COMPLETED/);
      expect(fromB.some((d) => d.startsWith('artifact answer'))).toBe(true);
      // Nothing lost between the snapshot and the live events: every result reached B.
      const seen = new Set(onB.flatMap(resultUrls));
      expect(seen.size).toBe(PACED_RESULTS);
    },
    30_000,
  );

  it('CancelTask on B cancels the task running on A: its query stops, both streams end CANCELED', async () => {
    const a = await clientFor(A.base, 'JSONRPC');
    const b = await clientFor(B.base, 'HTTP+JSON');
    const from = calls.length;
    const onA: StreamResponse[] = [];
    let resolveTask: (id: string) => void = () => undefined;
    const taskIdP = new Promise<string>((r) => (resolveTask = r));
    const streamA = (async () => {
      for await (const e of a.sendMessageStream(sendRequest(userMessage('slow')))) {
        onA.push(e);
        if (e.payload?.$case === 'task') resolveTask(e.payload.value.id);
      }
    })();
    const taskId = await taskIdP;
    await expect
      .poll(() => calls.slice(from).find((c) => c.query === 'slow'), { timeout: 5_000 })
      .toBeDefined();
    const queryId = calls.slice(from).find((c) => c.query === 'slow')!.queryId;
    const streamB = collect(b.resubscribeTask({ tenant: '', id: taskId }));
    // Quiet for more than 3 heartbeats: B's relay must still follow the task (A's heartbeats).
    await sleep(4 * HEARTBEAT_MS);
    const cancelled = await b.cancelTask({ tenant: '', id: taskId, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    // The query on the router was cancelled (bus.cancel on A, where the task runs).
    await expect.poll(() => aborted, { timeout: 5_000 }).toContain(queryId);
    await streamA;
    const onB = await streamB;
    const lastState = (es: StreamResponse[]) => {
      const p = es[es.length - 1]?.payload;
      return p?.$case === 'statusUpdate' ? p.value.status?.state : undefined;
    };
    expect(lastState(onA)).toBe(TaskState.TASK_STATE_CANCELED);
    expect(lastState(onB)).toBe(TaskState.TASK_STATE_CANCELED);
    // Both gateways read CANCELED from the store, and it stays so (A's run does not overwrite it).
    await sleep(300);
    for (const base of [A.base, B.base]) {
      const c = await clientFor(base, 'JSONRPC');
      expect((await c.getTask({ tenant: '', id: taskId })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    }
  }, 30_000);

  it('CancelTask on B cancels a task parked on A (INPUT_REQUIRED), without waiting out its limits', async () => {
    const a = await clientFor(A.base, 'JSONRPC');
    const b = await clientFor(B.base, 'JSONRPC');
    const parked = asTask(await a.sendMessage(sendRequest(userMessage('vague'))));
    expect(parked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const onA = vi.spyOn(A.internals.executor, 'cancelTask');
    const t0 = Date.now();
    const cancelled = await b.cancelTask({ tenant: '', id: parked.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    // A's executor did it (B's request reached it), and nobody waited out the 10 s limit for a
    // save that no request on A would make (a generous bound for a loaded machine).
    expect(onA).toHaveBeenCalledWith(parked.id, expect.anything());
    onA.mockRestore();
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect((await a.getTask({ tenant: '', id: parked.id })).status?.state).toBe(
      TaskState.TASK_STATE_CANCELED,
    );
  }, 30_000);

  it('a relay ends when its client goes away: B stops following the task', async () => {
    const a = await clientFor(A.base, 'JSONRPC');
    const b = await clientFor(B.base, 'JSONRPC');
    const task = asTask(await a.sendMessage(sendRequest(userMessage('slow'), { returnImmediately: true })));
    const gone = new AbortController();
    const stream = (async () => {
      for await (const _ of b.resubscribeTask({ tenant: '', id: task.id }, { signal: gone.signal })) void _;
    })().catch(() => undefined);
    await expect.poll(() => B.internals.eventBuses.relaying, { timeout: 5_000 }).toBe(1);
    gone.abort();
    await stream;
    await expect.poll(() => B.internals.eventBuses.relaying, { timeout: 5_000 }).toBe(0);
    await a.cancelTask({ tenant: '', id: task.id, metadata: undefined });
  }, 30_000);

  it('a task no gateway runs any more: SubscribeToTask ends after the missed heartbeats, CancelTask cancels it on B', async () => {
    // A task left WORKING in the store by a gateway that died (written directly, no runner).
    const ctx = new ServerCallContext({ user: new UnauthenticatedUser() });
    const store: TaskStore = B.internals.taskStore;
    const task: Task = {
      id: `orphan-${Date.now()}`,
      contextId: 'ctx-orphan',
      status: {
        state: TaskState.TASK_STATE_WORKING,
        message: undefined,
        timestamp: new Date().toISOString(),
      },
      artifacts: [],
      history: [],
      metadata: undefined,
    };
    await store.save(task, ctx);
    const b = await clientFor(B.base, 'JSONRPC');
    const t0 = Date.now();
    const events = await collect(b.resubscribeTask({ tenant: '', id: task.id }));
    // Bounds are generous (a loaded 2-core machine): the relay waits 3 heartbeats (900 ms).
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(events[0]?.payload?.$case).toBe('task');
    const cancelled = await b.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(asTask(await b.getTask({ tenant: '', id: task.id })).status?.state).toBe(
      TaskState.TASK_STATE_CANCELED,
    );
  }, 30_000);
});
