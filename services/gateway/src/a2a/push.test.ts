import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerCallContext } from '@a2a-js/sdk/server';
import type { PushNotificationStore } from '@a2a-js/sdk/server';
import { TaskState } from '@a2a-js/sdk';
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import { mcpWorld } from '../mcp/testing';
import type { McpWorld } from '../mcp/testing';
import { GuardedPushSender, checkWebhookUrl, isPrivateAddress } from './push';
import type { DeliveryReport } from './push';
import { asTask, clientFor, sendRequest, userMessage, webhookReceiver } from './testing';

let world: McpWorld;
const reports: DeliveryReport[] = [];

beforeAll(async () => {
  world = await mcpWorld();
});

afterAll(async () => {
  await world?.stop();
});

const config = (
  url: string,
  extra: Partial<TaskPushNotificationConfig> = {},
): TaskPushNotificationConfig => ({
  tenant: '',
  id: '',
  taskId: '',
  url,
  token: '',
  authentication: undefined,
  ...extra,
});

describe('webhook URL guard', () => {
  it('refuses private, loopback, link-local and reserved addresses, IPv4 and IPv6', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.20.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '64:ff9b::a9fe:a9fe',
    ])
      expect(isPrivateAddress(a), a).toBe(true);
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700::1111'])
      expect(isPrivateAddress(a), a).toBe(false);
  });

  it('checks the scheme and every address the host resolves to', async () => {
    await expect(checkWebhookUrl('http://localhost:8080/hook', false)).rejects.toThrow(/loopback/);
    await expect(checkWebhookUrl('http://[::1]/hook', false)).rejects.toThrow(/private, loopback/);
    await expect(checkWebhookUrl('http://169.254.169.254/latest', false)).rejects.toThrow(/link-local/);
    await expect(checkWebhookUrl('ftp://example.com/x', false)).rejects.toThrow(/http or https/);
    await expect(checkWebhookUrl('http://user:pw@93.184.216.34/', false)).rejects.toThrow(/credentials/);
    await expect(checkWebhookUrl('not a url', false)).rejects.toThrow(/not a URL/);
    await expect(checkWebhookUrl('https://93.184.216.34/hook', false)).resolves.toBeInstanceOf(URL);
    await expect(checkWebhookUrl('http://127.0.0.1:9/hook', true)).resolves.toBeInstanceOf(URL);
  });

  it('refuses a loopback webhook by default, on the push-config call and inline in SendMessage', async () => {
    const { base } = await world.gateway();
    const client = await clientFor(base, 'JSONRPC');
    const hook = await webhookReceiver();
    try {
      const task = asTask(await client.sendMessage(sendRequest(userMessage('vague'))));
      await expect(
        client.createTaskPushNotificationConfig(config(hook.url, { taskId: task.id })),
      ).rejects.toMatchObject({ envelopeCode: -32602, message: expect.stringMatching(/refused.*loopback/) });
      await expect(
        client.sendMessage(
          sendRequest(userMessage('inline'), { taskPushNotificationConfig: config(hook.url) }),
        ),
      ).rejects.toMatchObject({ envelopeCode: -32602 });
      expect(hook.attempts()).toBe(0);
    } finally {
      await hook.close();
    }
  });

  it('checks again at delivery time and does not send to a refused address', async () => {
    const hook = await webhookReceiver();
    const got: DeliveryReport[] = [];
    const store: PushNotificationStore = {
      save: async () => undefined,
      load: async () => [config(hook.url, { id: 'c1', taskId: 't1' })],
      delete: async () => undefined,
    };
    const sender = new GuardedPushSender(store, { onDelivery: (d) => got.push(d), retries: 2, backoffMs: 1 });
    await sender.send(
      {
        payload: {
          $case: 'statusUpdate',
          value: { taskId: 't1', contextId: 'c', status: undefined, metadata: undefined },
        },
      },
      new ServerCallContext({ requestedVersion: '1.0' }),
    );
    await sender.idle();
    await hook.close();
    expect(got).toEqual([
      expect.objectContaining({ ok: false, attempts: 1, error: expect.stringMatching(/loopback/) }),
    ]);
    expect(hook.attempts()).toBe(0);
  });
});

describe('push delivery (loopback allowed by the test option)', () => {
  let base: string;
  beforeAll(async () => {
    ({ base } = await world.gateway({
      a2a: {
        push: { allowPrivate: true, backoffMs: 10, onDelivery: (d) => reports.push(d) },
      },
    }));
  });

  it('posts every event of the task, authenticated and signed with the token', async () => {
    const hook = await webhookReceiver();
    try {
      const client = await clientFor(base, 'HTTP+JSON');
      const task = asTask(
        await client.sendMessage(
          sendRequest(userMessage('push me'), {
            taskPushNotificationConfig: config(hook.url, {
              token: 'tok-123',
              authentication: { scheme: 'Bearer', credentials: 'hook-secret' },
            }),
          }),
        ),
      );
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      await expect
        .poll(() => hook.received.some((r) => r.body.includes('TASK_STATE_COMPLETED')), { timeout: 3_000 })
        .toBe(true);
      const bodies = hook.received.map((r) => JSON.parse(r.body) as Record<string, unknown>);
      expect(bodies.some((b) => 'artifactUpdate' in b)).toBe(true);
      for (const r of hook.received) {
        expect(r.headers['content-type']).toBe('application/a2a+json');
        expect(r.headers.authorization).toBe('Bearer hook-secret');
        expect(r.headers['x-a2a-notification-token']).toBe('tok-123');
        const sig = String(r.headers['x-a2a-signature']);
        const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(sig);
        expect(m).not.toBeNull();
        const want = createHmac('sha256', 'tok-123').update(`${m![1]}.${r.body}`).digest('hex');
        expect(m![2]).toBe(want);
      }
      // In order: the completed status is the last delivery.
      expect(hook.received[hook.received.length - 1]?.body).toContain('TASK_STATE_COMPLETED');
    } finally {
      await hook.close();
    }
  });

  it('retries a failing webhook with backoff until it accepts', async () => {
    const hook = await webhookReceiver(2);
    try {
      const client = await clientFor(base, 'JSONRPC');
      const task = asTask(await client.sendMessage(sendRequest(userMessage('vague'))));
      await client.createTaskPushNotificationConfig(config(hook.url, { taskId: task.id, id: 'retry' }));
      await client.cancelTask({ tenant: '', id: task.id, metadata: undefined });
      await expect
        .poll(() => hook.received.some((r) => r.body.includes('TASK_STATE_CANCELED')), { timeout: 3_000 })
        .toBe(true);
      // the delivery is reported once the sender has read the webhook's answer, which may be
      // after the webhook has recorded the body
      await expect
        .poll(() => reports.find((r) => r.configId === 'retry'), { timeout: 3_000 })
        .toMatchObject({ ok: true, attempts: 3, status: 200 });
    } finally {
      await hook.close();
    }
  });
});
