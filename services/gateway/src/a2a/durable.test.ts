import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testBus } from '@askbus/bus/testing';
import { buildGateway } from '../index';
import { TaskState } from '@a2a-js/sdk';
import { mcpWorld } from '../mcp/testing';
import type { McpWorld } from '../mcp/testing';
import { asTask, clientFor, sendRequest, userMessage } from './testing';

let world: McpWorld;

beforeAll(async () => {
  world = await mcpWorld();
});

afterAll(async () => {
  await world?.stop();
});

describe('A2A tasks in NATS JetStream KV', () => {
  it('a task outlives the gateway that ran it: GetTask, ListTasks and SubscribeToTask answer from a new one', async () => {
    const first = await world.gateway();
    const c1 = await clientFor(first.base, 'JSONRPC');
    const done = asTask(await c1.sendMessage(sendRequest(userMessage('durable question'))));
    const parked = asTask(
      await c1.sendMessage(sendRequest(userMessage('vague', { contextId: done.contextId }))),
    );
    expect(parked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    await first.app.close();

    const second = await world.gateway();
    for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
      const c2 = await clientFor(second.base, binding);
      const got = await c2.getTask({ tenant: '', id: done.id });
      expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(got.artifacts.map((a) => a.artifactId).sort()).toEqual(['answer', 'results', 'summary']);
      const listed = await c2.listTasks({
        tenant: '',
        contextId: done.contextId,
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 10,
        pageToken: '',
        statusTimestampAfter: undefined,
      });
      expect(listed.tasks.map((t) => t.id).sort()).toEqual([done.id, parked.id].sort());
    }
    // The parked task continues on the new gateway.
    const c2 = await clientFor(second.base, 'JSONRPC');
    const answered = asTask(
      await c2.sendMessage(
        sendRequest(userMessage('Lyon', { taskId: parked.id, contextId: parked.contextId })),
      ),
    );
    expect(answered.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // SubscribeToTask on a finished task is refused (UnsupportedOperation, not TaskNotFound).
    const err = await (async () => {
      for await (const _ of c2.resubscribeTask({ tenant: '', id: done.id })) void _;
    })().catch((e: unknown) => e);
    expect(err).toMatchObject({ name: expect.stringMatching(/UnsupportedOperation/) });
  });
});

const natsBin = ['nats-server', '/usr/sbin/nats-server', '/usr/local/bin/nats-server'].find(
  (b) => spawnSync(b, ['--version']).status === 0,
);

describe.skipIf(!natsBin)('A2A on a NATS without JetStream', () => {
  it('starts with in-memory stores (and a warning) unless a durable store is required', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = s.address() as AddressInfo;
        s.close(() => resolve(p));
      });
    });
    const child = spawn(natsBin!, ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
    try {
      let bus: Awaited<ReturnType<typeof testBus>> | undefined;
      for (let i = 0; i < 100 && !bus; i++) {
        bus = await testBus(`nats://127.0.0.1:${port}`, 'gateway').catch(async () => {
          await new Promise((r) => setTimeout(r, 50));
          return undefined;
        });
      }
      expect(bus).toBeDefined();
      const app = await buildGateway(bus!, { a2a: {} });
      await app.listen({ port: 0, host: '127.0.0.1' });
      const { port: gw } = app.server.address() as AddressInfo;
      const client = await clientFor(`http://127.0.0.1:${gw}`, 'JSONRPC');
      await expect(client.getTask({ tenant: '', id: 'x' })).rejects.toMatchObject({ envelopeCode: -32001 });
      await app.close();
      await expect(buildGateway(bus!, { a2a: { requireDurableStore: true } })).rejects.toThrow();
      await bus!.drain();
    } finally {
      child.kill('SIGKILL');
    }
  });
});
