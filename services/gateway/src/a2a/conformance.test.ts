/**
 * Error cases and protocol details, named by the requirement ids of the A2A v1.0 TCK
 * (a2aproject/a2a-tck, tck/requirements/*.py), over raw HTTP so that the wire is what is tested.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpWorld } from '../mcp/testing';
import type { McpWorld } from '../mcp/testing';

let world: McpWorld;
let base: string;
let closedBase: string;
let authBase: string;
const TOKEN = 'a2a-test-token';

beforeAll(async () => {
  world = await mcpWorld();
  ({ base } = await world.gateway({ a2a: { push: { allowPrivate: true } } }));
  ({ base: closedBase } = await world.gateway({ a2a: { push: { enabled: false } } }));
  ({ base: authBase } = await world.gateway({ a2a: { authToken: TOKEN } }));
});

afterAll(async () => {
  await world?.stop();
});

interface RpcReply {
  status: number;
  headers: Headers;
  body: {
    jsonrpc?: string;
    id?: unknown;
    result?: Record<string, unknown>;
    error?: { code: number; message: string; data?: unknown[] };
  };
}

let nextId = 1;
async function rpc(
  method: string,
  params: unknown,
  opts: { version?: string | null; url?: string; headers?: Record<string, string> } = {},
): Promise<RpcReply> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...opts.headers };
  if (opts.version !== null) headers['A2A-Version'] = opts.version ?? '1.0';
  const res = await fetch(opts.url ?? `${base}/a2a`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text) as RpcReply['body'] };
}

async function rest(
  method: string,
  path: string,
  body?: unknown,
  opts: { url?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const res = await fetch(`${opts.url ?? base}/a2a/rest${path}`, {
    method,
    headers: {
      'A2A-Version': '1.0',
      ...(body !== undefined ? { 'content-type': 'application/a2a+json' } : {}),
      ...opts.headers,
    },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

const message = (text: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  messageId: `m-${nextId++}`,
  role: 'ROLE_USER',
  parts: [{ text }],
  ...extra,
});

async function completedTask(): Promise<{ id: string; contextId: string }> {
  const r = await rpc('SendMessage', { message: message('a finished question') });
  const task = r.body.result?.task as { id: string; contextId: string; status: { state: string } };
  expect(task.status.state).toBe('TASK_STATE_COMPLETED');
  return task;
}

describe('core operations: errors (JSON-RPC and HTTP+JSON)', () => {
  it('CORE-SEND-001 / CORE-MULTI-001a / CORE-MULTI-003: SendMessage returns a Task with server ids', async () => {
    const r = await rpc('SendMessage', { message: message('hello') });
    expect(r.status).toBe(200);
    expect(r.body.result?.task).toMatchObject({ id: expect.any(String), contextId: expect.any(String) });
  });

  it('CORE-SEND-002: a message to a terminal task is UnsupportedOperationError', async () => {
    const task = await completedTask();
    const r = await rpc('SendMessage', { message: message('more', { taskId: task.id }) });
    expect(r.body.error?.code).toBe(-32004);
    const h = await rest('POST', '/message:send', { message: message('more', { taskId: task.id }) });
    expect(h.status).toBe(400);
    expect(h.body).toMatchObject({ error: { code: 400, status: 'FAILED_PRECONDITION' } });
  });

  it('CORE-SEND-003: a part in a media type the agent does not take is ContentTypeNotSupportedError', async () => {
    const parts = [{ raw: 'dGNr', mediaType: 'application/x-unsupported-tck-type' }];
    const r = await rpc('SendMessage', { message: { messageId: 'm-raw', role: 'ROLE_USER', parts } });
    expect(r.body.error?.code).toBe(-32005);
  });

  it('CORE-GET-002: GetTask of an unknown task is TaskNotFoundError (404 over HTTP+JSON)', async () => {
    const r = await rpc('GetTask', { id: 'no-such-task' });
    expect(r.body.error?.code).toBe(-32001);
    expect(r.body.error?.data).toEqual([
      expect.objectContaining({
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: 'TASK_NOT_FOUND',
      }),
    ]);
    const h = await rest('GET', '/tasks/no-such-task');
    expect(h.status).toBe(404);
    expect(h.body).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } });
  });

  it('CORE-CANCEL-002: cancelling a finished task is TaskNotCancelableError', async () => {
    const task = await completedTask();
    expect((await rpc('CancelTask', { id: task.id })).body.error?.code).toBe(-32002);
    expect((await rest('POST', `/tasks/${task.id}:cancel`, {})).status).toBe(400);
  });

  it('CORE-CANCEL-003: cancelling an unknown task is TaskNotFoundError', async () => {
    expect((await rpc('CancelTask', { id: 'no-such-task' })).body.error?.code).toBe(-32001);
    expect((await rest('POST', '/tasks/no-such-task:cancel', {})).status).toBe(404);
  });

  it('CORE-MULTI-004: a message naming an unknown taskId is TaskNotFoundError', async () => {
    const r = await rpc('SendMessage', { message: message('to nowhere', { taskId: 'no-such-task' }) });
    expect(r.body.error?.code).toBe(-32001);
  });

  it('CORE-MULTI-005 / CORE-MULTI-006: the context is inferred from the task; a mismatching one is refused', async () => {
    const asked = await rpc('SendMessage', { message: message('vague') });
    const task = asked.body.result?.task as { id: string; contextId: string };
    const wrong = await rpc('SendMessage', {
      message: message('Paris', { taskId: task.id, contextId: 'another' }),
    });
    expect(wrong.body.error).toBeDefined();
    const right = await rpc('SendMessage', { message: message('Paris', { taskId: task.id }) });
    expect(right.body.result?.task).toMatchObject({
      id: task.id,
      contextId: task.contextId,
      status: { state: 'TASK_STATE_COMPLETED' },
    });
  });

  it('CORE-ERR-002: invalid params are refused before processing', async () => {
    expect((await rpc('SendMessage', {})).body.error?.code).toBe(-32602);
    expect((await rpc('GetTask', { id: '' })).body.error?.code).toBe(-32602);
    expect((await rpc('SendMessage', { message: message('x', { parts: [] }) })).body.error?.code).toBe(
      -32602,
    );
  });

  it('CORE-CAP-001: push-config calls on an agent without push are PushNotificationNotSupportedError', async () => {
    const r = await rpc(
      'CreateTaskPushNotificationConfig',
      { taskId: 'x', url: 'https://93.184.216.34/hook' },
      { url: `${closedBase}/a2a` },
    );
    expect(r.body.error?.code).toBe(-32003);
    const card = (await (
      await fetch(`${closedBase}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })
    ).json()) as {
      capabilities: Record<string, unknown>;
    };
    expect(card.capabilities.pushNotifications).toBeFalsy();
  });

  it('CORE-CAP-003: GetExtendedAgentCard without an extended card is UnsupportedOperationError', async () => {
    expect((await rpc('GetExtendedAgentCard', {})).body.error?.code).toBe(-32004);
    expect((await rest('GET', '/extendedAgentCard')).status).toBe(400);
  });

  it('STREAM-SUB: SubscribeToTask of an unknown task is TaskNotFoundError; of a finished one UnsupportedOperationError', async () => {
    expect((await rpc('SubscribeToTask', { id: 'no-such-task' })).body.error?.code).toBe(-32001);
    const task = await completedTask();
    expect((await rpc('SubscribeToTask', { id: task.id })).body.error?.code).toBe(-32004);
  });

  it('PUSH-GET / PUSH-DEL: an unknown config is TaskNotFoundError; deleting is idempotent', async () => {
    const asked = await rpc('SendMessage', { message: message('vague') });
    const task = asked.body.result?.task as { id: string };
    const got = await rpc('GetTaskPushNotificationConfig', { taskId: task.id, id: 'none' });
    expect(got.body.error?.code).toBe(-32001);
    const del = await rpc('DeleteTaskPushNotificationConfig', { taskId: task.id, id: 'none' });
    expect(del.body.error).toBeUndefined();
    await rpc('CancelTask', { id: task.id });
  });
});

describe('JSON-RPC binding', () => {
  it('JSONRPC-FMT-002 / JSONRPC-SSE-002: a non-JSON content type is ContentTypeNotSupportedError (-32005)', async () => {
    const res = await fetch(`${base}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'A2A-Version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as RpcReply['body']).error?.code).toBe(-32005);
  });

  it('JSONRPC-ERR-001: malformed JSON is a parse error (-32700), an unknown method -32601', async () => {
    const res = await fetch(`${base}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: '{"jsonrpc": "2.0", ',
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    expect((await rpc('DanceTask', {})).body.error?.code).toBe(-32601);
  });

  it('JSONRPC-SSE-001: streams are text/event-stream; each event is a JSON-RPC response with the request id', async () => {
    const res = await fetch(`${base}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'sse-1',
        method: 'SendStreamingMessage',
        params: { message: message('sse') },
      }),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await res.text())
      .split('\n\n')
      .filter((b) => b.startsWith('data:'))
      .map((b) => JSON.parse(b.slice(5)) as { id: string; result: Record<string, unknown> });
    expect(events.every((e) => e.id === 'sse-1')).toBe(true);
    expect(Object.keys(events[0]!.result)).toEqual(['task']);
    expect(events.some((e) => 'artifactUpdate' in e.result)).toBe(true);
  });

  it('accepts the endpoint with a trailing slash', async () => {
    expect((await rpc('GetTask', { id: 'x' }, { url: `${base}/a2a/` })).body.error?.code).toBe(-32001);
  });

  it('refuses a request body over the limit (1 MiB, body-limits.ts) with 413', async () => {
    const big = 'x'.repeat(10 * 1024 * 1024 + 10);
    const res = await fetch(`${base}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: message(big) },
      }),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({
      error: { code: -32600, message: expect.stringMatching(/larger than 1 MiB/) },
    });
    const r = await fetch(`${base}/a2a/rest/message:send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({ message: message(big) }),
    });
    expect(r.status).toBe(413);
  });
});

describe('HTTP+JSON binding', () => {
  it('HTTP_JSON: an unsupported content type is ContentTypeNotSupportedError (400)', async () => {
    const h = await rest('POST', '/message:send', 'hello', { headers: { 'content-type': 'text/plain' } });
    expect(h.status).toBe(400);
    expect(JSON.stringify(h.body)).toMatch(/CONTENT_TYPE_NOT_SUPPORTED|Content-Type/);
  });

  it('HTTP_JSON: malformed JSON is a 400 google.rpc.Status', async () => {
    const h = await rest('POST', '/message:send', '{"message": ');
    expect(h.status).toBe(400);
    expect(h.body).toMatchObject({ error: { code: 400 } });
  });

  it('HTTP_JSON: responses are application/a2a+json; GET /tasks lists, :subscribe streams', async () => {
    const sent = await rest('POST', '/message:send', { message: message('rest list') });
    expect(sent.headers.get('content-type')).toMatch(/application\/a2a\+json/);
    const task = sent.body.task as { id: string; contextId: string };
    const list = await rest('GET', `/tasks?contextId=${task.contextId}&includeArtifacts=true`);
    expect(list.body).toMatchObject({ tasks: [{ id: task.id }], nextPageToken: '', totalSize: 1 });
    const none = await rest('GET', `/tasks?contextId=${task.contextId}`);
    expect((none.body.tasks as Record<string, unknown>[])[0]).not.toHaveProperty('artifacts');
  });
});

describe('versioning', () => {
  it('VER-SERVER-002: an unsupported A2A-Version is VersionNotSupportedError (-32009)', async () => {
    expect((await rpc('GetTask', { id: 'x' }, { version: '9.9' })).body.error?.code).toBe(-32009);
    expect((await rest('GET', '/tasks/x', undefined, { headers: { 'A2A-Version': '9.9' } })).status).toBe(
      400,
    );
  });

  it('VER-SERVER-001: the version may come as the A2A-Version query parameter', async () => {
    const r = await rpc('GetTask', { id: 'x' }, { version: null, url: `${base}/a2a?A2A-Version=1.0` });
    expect(r.body.error?.code).toBe(-32001);
  });

  it('VER-SERVER-003: no A2A-Version means 0.3: the v0.3 method names and shapes answer', async () => {
    const r = await rpc(
      'message/send',
      {
        message: {
          kind: 'message',
          messageId: 'legacy-1',
          role: 'user',
          parts: [{ kind: 'text', text: 'old client' }],
        },
      },
      { version: null },
    );
    expect(r.body.result).toMatchObject({ kind: 'task', status: { state: 'completed' } });
    const id = (r.body.result as { id: string }).id;
    const got = await rpc('tasks/get', { id }, { version: null });
    expect(got.body.result).toMatchObject({ kind: 'task', id });
    // The same task under the v1.0 names.
    expect((await rpc('GetTask', { id })).body.result).toMatchObject({
      id,
      status: { state: 'TASK_STATE_COMPLETED' },
    });
    // v1.0 names are not v0.3 methods.
    expect((await rpc('GetTask', { id }, { version: null })).body.error?.code).toBe(-32601);
  });

  it('CARD-PROTO: the card declares both versions; A2A-Version: 0.3 gets the v0.3 card', async () => {
    const v1 = (await (
      await fetch(`${base}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })
    ).json()) as {
      supportedInterfaces: { url: string; protocolBinding: string; protocolVersion: string }[];
    };
    expect(v1.supportedInterfaces).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ url: `${base}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }),
        expect.objectContaining({
          url: `${base}/a2a/rest`,
          protocolBinding: 'HTTP+JSON',
          protocolVersion: '1.0',
        }),
        expect.objectContaining({ protocolVersion: '0.3' }),
      ]),
    );
    const old = (await (
      await fetch(`${base}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '0.3' } })
    ).json()) as Record<string, unknown>;
    expect(old).toMatchObject({ protocolVersion: '0.3', url: `${base}/a2a`, preferredTransport: 'JSONRPC' });
  });
});

describe('agent card', () => {
  it('CARD-STRUCT / CARD-CACHE-001..003: skills and capabilities, with Cache-Control, ETag and Last-Modified', async () => {
    const res = await fetch(`${base}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toMatch(/max-age=\d+/);
    expect(res.headers.get('last-modified')).toBeTruthy();
    const etag = res.headers.get('etag')!;
    const card = (await res.json()) as Record<string, unknown>;
    expect(card).toMatchObject({
      name: 'askbus',
      capabilities: { streaming: true, pushNotifications: true },
      skills: [{ id: 'ask' }, { id: 'list_sites' }, { id: 'who' }],
    });
    expect(card).not.toHaveProperty('securitySchemes');
    const again = await fetch(`${base}/.well-known/agent-card.json`, {
      headers: { 'A2A-Version': '1.0', 'if-none-match': etag },
    });
    expect(again.status).toBe(304);
  });
});

describe('auth on', () => {
  it('AUTH: the card is public and declares the bearer scheme; calls without the token get 401', async () => {
    const card = (await (
      await fetch(`${authBase}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })
    ).json()) as Record<string, unknown>;
    expect(card).toMatchObject({
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
      securityRequirements: [{ schemes: { bearer: {} } }],
      capabilities: { extendedAgentCard: true },
    });
    const anon = await rpc('GetTask', { id: 'x' }, { url: `${authBase}/a2a` });
    expect(anon.status).toBe(401);
    expect(anon.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const wrong = await rest('GET', '/tasks/x', undefined, {
      url: authBase,
      headers: { authorization: 'Bearer nope' },
    });
    expect(wrong.status).toBe(401);
    const ok = await rpc(
      'GetTask',
      { id: 'x' },
      { url: `${authBase}/a2a`, headers: { authorization: `Bearer ${TOKEN}` } },
    );
    expect(ok.body.error?.code).toBe(-32001);
  });

  it('CORE-CAP-003 (declared): authenticated callers get the extended card', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const r = await rpc('GetExtendedAgentCard', {}, { url: `${authBase}/a2a`, headers: auth });
    expect(r.body.result).toMatchObject({
      name: 'askbus',
      skills: [{ id: 'ask' }, { id: 'list_sites' }, { id: 'who' }],
    });
    expect(JSON.stringify(r.body.result)).toContain('survive gateway restarts');
    const h = await rest('GET', '/extendedAgentCard', undefined, { url: authBase, headers: auth });
    expect(h.status).toBe(200);
    expect(h.body).toMatchObject({ name: 'askbus' });
  });
});
