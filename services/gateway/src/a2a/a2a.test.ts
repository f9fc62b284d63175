import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import type { StreamResponse, Task } from '@a2a-js/sdk';
import { callAfter, mcpWorld } from '../mcp/testing';
import type { McpWorld } from '../mcp/testing';
import { asTask, clientFor, collect, data, sendRequest, userMessage } from './testing';
import type { Binding } from './testing';

let world: McpWorld;
let base: string;

beforeAll(async () => {
  world = await mcpWorld();
  ({ base } = await world.gateway({ a2a: { push: { allowPrivate: true, backoffMs: 20 } } }));
});

afterAll(async () => {
  await world?.stop();
});

const kinds = (events: StreamResponse[]): string[] => events.map((e) => e.payload?.$case ?? '?');
const stateOf = (t: Task): TaskState | undefined => t.status?.state;
const textOfStatus = (t: Task): string =>
  (t.status?.message?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

describe.each<Binding>(['JSONRPC', 'HTTP+JSON'])('A2A over %s with the SDK client', (binding) => {
  let client: Client;
  const urls: string[] = [];
  const recording: typeof fetch = (input, init) => {
    urls.push(String(input instanceof Request ? input.url : input));
    return fetch(input, init);
  };
  beforeAll(async () => {
    client = await clientFor(base, binding, recording);
  });

  it('picks the interface of the binding from the agent card', async () => {
    await client.getTask({ tenant: '', id: 'nope', historyLength: undefined }).catch(() => undefined);
    const last = urls[urls.length - 1] ?? '';
    if (binding === 'JSONRPC') expect(last).toBe(`${base}/a2a`);
    else expect(last).toBe(`${base}/a2a/rest/tasks/nope`);
    const card = await client.getAgentCard();
    expect(card.skills.map((s) => s.id)).toEqual(['ask', 'list_sites', 'who']);
    expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: true });
  });

  it('SendMessage runs the ask and returns the completed task with its artifacts', async () => {
    const from = world.router.calls.length;
    const task = asTask(
      await client.sendMessage(
        sendRequest(
          userMessage([
            data({ site: 'movies', mode: 'summarize' }),
            { ...data(null), content: { $case: 'text', value: 'space movies' } },
          ]),
        ),
      ),
    );
    expect(stateOf(task)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOfStatus(task)).toBe('3 results for "space movies"');
    const results = task.artifacts.find((a) => a.artifactId === 'results');
    expect(
      results?.parts.map((p) =>
        p.content?.$case === 'data' ? (p.content.value as { name: string }).name : '',
      ),
    ).toEqual(['Item 0', 'Item 1', 'Item 2']);
    expect(task.artifacts.map((a) => a.artifactId).sort()).toEqual(['answer', 'results', 'summary']);
    const call = world.router.calls.slice(from).find((c) => c.req.query === 'space movies');
    expect(call?.req).toMatchObject({ site: ['movies'], mode: 'summarize', conversationId: task.contextId });
  });

  it('SendStreamingMessage streams artifact updates while ranking runs, then completes', async () => {
    const events = await collect(client.sendMessageStream(sendRequest(userMessage('streamed question'))));
    const k = kinds(events);
    expect(k[0]).toBe('task');
    expect(k).toContain('artifactUpdate');
    const last = events[events.length - 1]?.payload;
    expect(last?.$case).toBe('statusUpdate');
    if (last?.$case === 'statusUpdate') expect(last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const firstArtifact = k.indexOf('artifactUpdate');
    expect(firstArtifact).toBeLessThan(k.length - 1);
    const chunks = events.flatMap((e) =>
      e.payload?.$case === 'artifactUpdate' && e.payload.value.artifact?.artifactId === 'results'
        ? [e.payload.value]
        : [],
    );
    expect(chunks.map((c) => c.append)).toEqual([false, true]);
  });

  it('GetTask answers the task, with at most historyLength messages', async () => {
    const sent = asTask(await client.sendMessage(sendRequest(userMessage('get me'))));
    const got = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
    expect(got.id).toBe(sent.id);
    expect(stateOf(got)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(got.artifacts.length).toBeGreaterThan(0);
    expect(got.history.length).toBeGreaterThan(0);
    const none = await client.getTask({ tenant: '', id: sent.id, historyLength: 0 });
    expect(none.history).toEqual([]);
  });

  it('ListTasks filters by context, pages with a cursor and leaves artifacts out by default', async () => {
    const first = asTask(await client.sendMessage(sendRequest(userMessage('list one'))));
    const contextId = first.contextId;
    await client.sendMessage(sendRequest(userMessage('list two', { contextId })));
    await client.sendMessage(sendRequest(userMessage('list three', { contextId })));
    const page1 = await client.listTasks({
      tenant: '',
      contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 2,
      pageToken: '',
      statusTimestampAfter: undefined,
    });
    expect(page1.totalSize).toBe(3);
    expect(page1.tasks).toHaveLength(2);
    expect(page1.nextPageToken).not.toBe('');
    for (const t of page1.tasks) expect(t.artifacts).toEqual([]);
    const page2 = await client.listTasks({
      tenant: '',
      contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 2,
      pageToken: page1.nextPageToken,
      statusTimestampAfter: undefined,
      includeArtifacts: true,
    });
    expect(page2.tasks).toHaveLength(1);
    expect(page2.nextPageToken).toBe('');
    expect(page2.tasks[0]?.artifacts.length).toBeGreaterThan(0);
    const ids = [...page1.tasks, ...page2.tasks].map((t) => t.id);
    expect(new Set(ids).size).toBe(3);
    const stamps = [...page1.tasks, ...page2.tasks].map((t) => t.status?.timestamp ?? '');
    expect([...stamps].sort().reverse()).toEqual(stamps);
  });

  it('ask_user parks the task in input-required; the next message in the task answers it', async () => {
    const from = world.router.calls.length;
    const asked = asTask(await client.sendMessage(sendRequest(userMessage('vague'))));
    expect(stateOf(asked)).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(textOfStatus(asked)).toBe('Which city are you in?');
    const answered = asTask(
      await client.sendMessage(
        sendRequest(userMessage('Paris', { taskId: asked.id, contextId: asked.contextId })),
      ),
    );
    expect(answered.id).toBe(asked.id);
    expect(answered.contextId).toBe(asked.contextId);
    expect(stateOf(answered)).toBe(TaskState.TASK_STATE_COMPLETED);
    const next = world.router.calls.slice(from).find((c) => c.req.query === 'Paris');
    expect(next?.req.prev).toEqual(['vague']);
    expect(next?.req.conversationId).toBe(asked.contextId);
  });

  it('CancelTask cancels the query in every service', async () => {
    const from = world.router.calls.length;
    const before = world.routerBus.stats.cancelled;
    const started = asTask(
      await client.sendMessage(sendRequest(userMessage('slow'), { returnImmediately: true })),
    );
    await expect.poll(() => callAfter(world.router, from, 'slow'), { timeout: 3_000 }).toBeDefined();
    const cancelled = await client.cancelTask({ tenant: '', id: started.id, metadata: undefined });
    expect(stateOf(cancelled)).toBe(TaskState.TASK_STATE_CANCELED);
    const queryId = callAfter(world.router, from, 'slow')!;
    await expect.poll(() => world.router.aborted, { timeout: 3_000 }).toContain(queryId);
    await expect.poll(() => world.routerBus.stats.cancelled, { timeout: 3_000 }).toBeGreaterThan(before);
    expect(stateOf(await client.getTask({ tenant: '', id: started.id }))).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it('SubscribeToTask replays the task so far, then follows it to the end', async () => {
    const from = world.router.calls.length;
    const started = asTask(
      await client.sendMessage(sendRequest(userMessage('slow'), { returnImmediately: true })),
    );
    // The first result arrives before anyone subscribes.
    await expect
      .poll(async () => (await client.getTask({ tenant: '', id: started.id })).artifacts.length, {
        timeout: 3_000,
      })
      .toBeGreaterThan(0);
    const events: StreamResponse[] = [];
    const done = (async () => {
      for await (const e of client.resubscribeTask({ tenant: '', id: started.id })) {
        events.push(e);
        if (events.length === 1) await client.cancelTask({ tenant: '', id: started.id, metadata: undefined });
      }
    })();
    await done;
    const first = events[0]?.payload;
    expect(first?.$case).toBe('task');
    if (first?.$case === 'task') {
      expect(first.value.artifacts.find((a) => a.artifactId === 'results')?.parts).toHaveLength(1);
    }
    const last = events[events.length - 1]?.payload;
    expect(last?.$case).toBe('statusUpdate');
    if (last?.$case === 'statusUpdate') expect(last.value.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(callAfter(world.router, from, 'slow')).toBeDefined();
  });

  it('creates, gets, lists and deletes push-notification configs', async () => {
    const task = asTask(await client.sendMessage(sendRequest(userMessage('vague'))));
    const created = await client.createTaskPushNotificationConfig({
      tenant: '',
      id: 'hook-1',
      taskId: task.id,
      url: 'http://127.0.0.1:9/hook',
      token: 'secret-token',
      authentication: undefined,
    });
    expect(created).toMatchObject({ id: 'hook-1', taskId: task.id, url: 'http://127.0.0.1:9/hook' });
    const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'hook-1' });
    expect(got.url).toBe('http://127.0.0.1:9/hook');
    const listed = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 0,
      pageToken: '',
    });
    expect(listed.configs.map((c) => c.id)).toEqual(['hook-1']);
    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'hook-1' });
    // Idempotent.
    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'hook-1' });
    const after = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 0,
      pageToken: '',
    });
    expect(after.configs).toEqual([]);
    await client.cancelTask({ tenant: '', id: task.id, metadata: undefined });
  });

  it('runs the list_sites and who skills chosen by message metadata', async () => {
    const sites = asTask(
      await client.sendMessage(sendRequest(userMessage('sites?', { metadata: { skill: 'list_sites' } }))),
    );
    expect(stateOf(sites)).toBe(TaskState.TASK_STATE_COMPLETED);
    const part = sites.artifacts[0]?.parts[0]?.content;
    expect(part?.$case === 'data' && part.value).toMatchObject({
      sites: [{ name: 'movies' }, { name: 'cars' }],
    });
    const who = asTask(
      await client.sendMessage(sendRequest(userMessage('car', { metadata: { skill: 'who' } }))),
    );
    const ranked = who.artifacts[0]?.parts[0]?.content;
    // The same ranking as /who and MCP's who: the movie found for "car" matches nothing of it.
    expect(ranked?.$case === 'data' && ranked.value).toMatchObject({
      query: 'car',
      sites: [{ name: 'cars', hits: 2, matches: 2, best: { name: 'Car 0' } }],
    });
    const unknown = asTask(
      await client.sendMessage(sendRequest(userMessage('x', { metadata: { skill: 'dance' } }))),
    );
    expect(stateOf(unknown)).toBe(TaskState.TASK_STATE_REJECTED);
  });

  it('a failing router fails the task with the reason', async () => {
    const task = asTask(await client.sendMessage(sendRequest(userMessage('fail'))));
    expect(stateOf(task)).toBe(TaskState.TASK_STATE_FAILED);
    expect(textOfStatus(task)).toContain('the fake router broke');
  });
});
