import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import { callAfter, mcpWorld } from '../mcp/testing';
import type { McpWorld } from '../mcp/testing';
import { asTask, clientFor, sendRequest, userMessage } from './testing';

let world: McpWorld;

beforeAll(async () => {
  world = await mcpWorld();
});

afterAll(async () => {
  await world?.stop();
});

describe('A2A streams and shutdown', () => {
  it('sends SSE keep-alive comments on a quiet stream', async () => {
    const { base } = await world.gateway({ a2a: { keepAliveMs: 40 } });
    const abort = new AbortController();
    const res = await fetch(`${base}/a2a`, {
      method: 'POST',
      signal: abort.signal,
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendStreamingMessage',
        params: { message: { messageId: 'ka-1', role: 'ROLE_USER', parts: [{ text: 'slow' }] } },
      }),
    });
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes(': keepalive')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).toContain(': keepalive');
    abort.abort();
  });

  it('a client that hangs up does not cancel the task (§3.5.2)', async () => {
    const { base } = await world.gateway();
    const client = await clientFor(base, 'JSONRPC');
    const from = world.router.calls.length;
    const abort = new AbortController();
    let taskId = '';
    await (async () => {
      for await (const e of client.sendMessageStream(sendRequest(userMessage('slow')), {
        signal: abort.signal,
      })) {
        if (e.payload?.$case === 'task') taskId = e.payload.value.id;
        if (e.payload?.$case === 'artifactUpdate') abort.abort();
      }
    })().catch(() => undefined);
    expect(taskId).not.toBe('');
    await new Promise((r) => setTimeout(r, 100));
    const queryId = callAfter(world.router, from, 'slow')!;
    expect(world.router.aborted).not.toContain(queryId);
    expect((await client.getTask({ tenant: '', id: taskId })).status?.state).toBe(
      TaskState.TASK_STATE_WORKING,
    );
    await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
    await expect.poll(() => world.router.aborted, { timeout: 3_000 }).toContain(queryId);
  });

  it('closing the gateway ends open streams, stops running tasks and cancels their queries', async () => {
    const { app, base } = await world.gateway();
    const client = await clientFor(base, 'HTTP+JSON');
    const from = world.router.calls.length;
    const task = asTask(
      await client.sendMessage(sendRequest(userMessage('slow'), { returnImmediately: true })),
    );
    const stream = (async () => {
      for await (const _ of client.resubscribeTask({ tenant: '', id: task.id })) void _;
    })().catch(() => undefined);
    await expect.poll(() => callAfter(world.router, from, 'slow'), { timeout: 3_000 }).toBeDefined();
    const t0 = Date.now();
    await app.close();
    await stream;
    expect(Date.now() - t0).toBeLessThan(3_000);
    const queryId = callAfter(world.router, from, 'slow')!;
    await expect.poll(() => world.router.aborted, { timeout: 3_000 }).toContain(queryId);
    // The next gateway sees the task as failed, with the reason.
    const { base: next } = await world.gateway();
    const c2 = await clientFor(next, 'JSONRPC');
    await expect
      .poll(async () => (await c2.getTask({ tenant: '', id: task.id })).status?.state, { timeout: 3_000 })
      .toBe(TaskState.TASK_STATE_FAILED);
  });
});
