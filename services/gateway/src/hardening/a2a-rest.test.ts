/**
 * Property tests of A2A's HTTP+JSON binding (/a2a/rest): every route (message:send,
 * message:stream, tasks, tasks/{id}, :cancel, :subscribe, push configs, extendedAgentCard) with
 * wrong types, invalid JSON, unknown routes and methods, odd versions and content types, unicode
 * ids and huge bodies. Every refusal is a 4xx in the binding's error form (google.rpc.Status:
 * {error:{code, status, message, details[]}}, code = the HTTP status), never a 5xx; the server
 * keeps answering.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isRecord, unicodeText } from './rpc-model';
import { SEED, expectHealthy, startWorld } from './world';
import type { World } from './world';

const MAX_BODY = 64 * 1024;

let world: World;
beforeAll(async () => {
  world = await startWorld(
    { a2a: { keepAliveMs: 1_000, callTimeoutMs: 5_000, maxBodyBytes: MAX_BODY } },
    true,
  );
});
afterAll(async () => {
  await world?.stop();
});
afterEach(async () => {
  await expectHealthy(world.app);
});

/** Whether a body is a REST error of A2A v1.0 (google.rpc.Status) for this HTTP status. */
function isRestError(body: unknown, status: number): boolean {
  if (!isRecord(body) || !isRecord(body.error)) return false;
  const e = body.error;
  return (
    e.code === status &&
    typeof e.status === 'string' &&
    typeof e.message === 'string' &&
    (e.details === undefined || Array.isArray(e.details))
  );
}

interface Call {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** The properties: never a 5xx; a 4xx is JSON in the REST error form; an SSE stream ends. */
async function call(c: Call): Promise<{ status: number; body: unknown; text: string }> {
  const what = `${c.method} ${c.path} ${JSON.stringify(c.headers)} ${String(c.body).slice(0, 200)}`;
  const res = await fetch(`${world.base}/a2a/rest${c.path}`, {
    method: c.method,
    headers: c.headers,
    ...(c.body !== undefined ? { body: c.body } : {}),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  if (res.status >= 500) throw new Error(`${what}: status ${res.status}: ${text.slice(0, 300)}`);
  if (res.status < 400) return { status: res.status, body: undefined, text };
  const type = res.headers.get('content-type') ?? '';
  expect(type, what).toMatch(/^application\/(a2a\+)?json/);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${what}: a ${res.status} whose body is not JSON: ${text.slice(0, 200)}`);
  }
  if (!isRestError(body, res.status))
    throw new Error(`${what}: a ${res.status} not in the REST error form: ${text.slice(0, 300)}`);
  return { status: res.status, body, text };
}

/**
 * A path segment: unicode, percent signs (some not valid percent-encoding), slashes. No `.` or
 * `..`: fetch resolves them away, out of the binding.
 */
/** Percent-encoded UTF-8 (lone surrogates become U+FFFD, as a browser sends them). */
const pct = (s: string): string =>
  [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

const segment = fc.oneof(
  unicodeText.map(pct),
  fc.constantFrom('...', '%', '%ZZ', '%00', '%2F', 'a%2Fb', ':cancel', 'x'.repeat(2_000), '🦄', 'é'),
);

const route = fc.oneof(
  fc.constantFrom('/message:send', '/message:stream', '/tasks', '/extendedAgentCard'),
  segment.map((id) => `/tasks/${id}`),
  segment.map((id) => `/tasks/${id}:cancel`),
  segment.map((id) => `/tasks/${id}:subscribe`),
  segment.map((id) => `/tasks/${id}/pushNotificationConfigs`),
  fc.tuple(segment, segment).map(([id, c]) => `/tasks/${id}/pushNotificationConfigs/${c}`),
  segment.map((t) => `/${t}/message:send`),
  fc.constantFrom('', '/', '/nope', '/message:nope', '/message', '/tasks/a/b/c/d', '/v1/message:send', '//x'),
);

const query = fc.oneof(
  fc.constant(''),
  fc
    .record(
      {
        historyLength: fc.constantFrom('-1', 'abc', '1e309', '99999999999999999999', '', '0'),
        pageSize: fc.constantFrom('-5', 'x', '0', '1000000'),
        pageToken: unicodeText,
        status: fc.constantFrom('TASK_STATE_WORKING', 'nope', ''),
        includeArtifacts: fc.constantFrom('true', 'maybe'),
        tenant: unicodeText,
      },
      { requiredKeys: [] },
    )
    .map((q) => `?${new URLSearchParams(q as Record<string, string>).toString()}`),
);

/** Keeps the fake router's special queries (hang, slow …) out of messages that would run. */
const harmless = (v: unknown): boolean => !/\b(hang|slow|idle|fail)\b/.test(JSON.stringify(v) ?? '');

const part = fc.oneof(
  fc.record({ text: fc.oneof(unicodeText, fc.jsonValue({ maxDepth: 1 })) }, { requiredKeys: [] }),
  fc.record(
    { data: fc.jsonValue({ maxDepth: 2 }), mediaType: fc.jsonValue({ maxDepth: 0 }) },
    { requiredKeys: [] },
  ),
  fc.record({ url: fc.jsonValue({ maxDepth: 0 }), raw: fc.jsonValue({ maxDepth: 0 }) }, { requiredKeys: [] }),
  fc.jsonValue({ maxDepth: 1 }),
);

const message = fc.record(
  {
    messageId: fc.oneof(unicodeText, fc.jsonValue({ maxDepth: 0 })),
    role: fc.oneof(fc.constantFrom<unknown>('ROLE_USER', 'ROLE_AGENT', 'user', 'ROLE_UNSPECIFIED', 5)),
    parts: fc.oneof(fc.array(part, { maxLength: 3 }), fc.jsonValue({ maxDepth: 1 })),
    contextId: fc.oneof(unicodeText, fc.jsonValue({ maxDepth: 0 })),
    taskId: fc.oneof(unicodeText, fc.jsonValue({ maxDepth: 0 })),
    metadata: fc.jsonValue({ maxDepth: 2 }),
    extensions: fc.jsonValue({ maxDepth: 1 }),
    referenceTaskIds: fc.jsonValue({ maxDepth: 1 }),
  },
  { requiredKeys: [] },
);

const body = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .record(
        {
          message: fc.oneof(message, fc.jsonValue({ maxDepth: 1 })),
          configuration: fc.oneof(
            fc.jsonValue({ maxDepth: 2 }),
            fc.record(
              {
                acceptedOutputModes: fc.jsonValue({ maxDepth: 1 }),
                historyLength: fc.jsonValue({ maxDepth: 0 }),
                returnImmediately: fc.jsonValue({ maxDepth: 0 }),
                taskPushNotificationConfig: fc.jsonValue({ maxDepth: 2 }),
              },
              { requiredKeys: [] },
            ),
          ),
          metadata: fc.jsonValue({ maxDepth: 2 }),
          tenant: fc.jsonValue({ maxDepth: 0 }),
          // push config bodies
          url: fc.oneof(
            fc.constantFrom('https://hook.example/x', 'http://127.0.0.1/', 'notaurl'),
            fc.jsonValue({ maxDepth: 0 }),
          ),
          id: fc.jsonValue({ maxDepth: 0 }),
          token: fc.jsonValue({ maxDepth: 0 }),
          authentication: fc.jsonValue({ maxDepth: 2 }),
        },
        { requiredKeys: [] },
      )
      .map((b) => JSON.stringify(b)),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('', '{', '{"message":', 'null', '[]', '"x"', '\u0000', '{"a":1}}'),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
);

const headers = fc.record({
  version: fc.oneof(
    { weight: 5, arbitrary: fc.constant<string | undefined>('1.0') },
    {
      weight: 1,
      arbitrary: fc.constantFrom<string | undefined>(undefined, '0.3', '', '2.0', '1.0.1', 'x', '1'),
    },
  ),
  type: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom<string | undefined>('application/json', 'application/a2a+json') },
    {
      weight: 1,
      arbitrary: fc.constantFrom<string | undefined>(
        undefined,
        'text/plain',
        'application/json; charset=latin1',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
      ),
    },
  ),
});

function headersOf(h: { version: string | undefined; type: string | undefined }): Record<string, string> {
  return {
    accept: 'application/a2a+json, application/json, text/event-stream',
    ...(h.version !== undefined ? { 'A2A-Version': h.version } : {}),
    ...(h.type !== undefined ? { 'content-type': h.type } : {}),
  };
}

describe('A2A HTTP+JSON: arbitrary requests', () => {
  it('routes × methods × bodies × headers: never a 5xx, every 4xx in the REST error form', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'PATCH'),
        route,
        query,
        headers,
        body,
        async (method, path, q, h, b) => {
          fc.pre(harmless(b) && harmless(path));
          const withBody = method !== 'GET';
          await call({ method, path: path + q, headers: headersOf(h), ...(withBody ? { body: b } : {}) });
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('message:send bodies of wrong types: 4xx in the REST error form, or an answer', async () => {
    await fc.assert(
      fc.asyncProperty(body, fc.constantFrom('/message:send', '/message:stream'), async (b, path) => {
        fc.pre(harmless(b));
        await call({
          method: 'POST',
          path,
          headers: headersOf({ version: '1.0', type: 'application/json' }),
          body: b,
        });
      }),
      { seed: SEED, numRuns: 150 },
    );
  });
});

describe('A2A HTTP+JSON: specific refusals', () => {
  const v1 = headersOf({ version: '1.0', type: 'application/a2a+json' });

  it('invalid JSON is a 400', async () => {
    for (const b of ['{', '{"message":', '\u0000', '{"a":1}}']) {
      const res = await call({ method: 'POST', path: '/message:send', headers: v1, body: b });
      expect(res.status, b).toBe(400);
    }
  });

  it('unknown routes and methods are 404 (or 405) in the REST form', async () => {
    for (const [method, path] of [
      ['GET', '/nope'],
      ['POST', '/message:nope'],
      ['GET', '/message:send'],
      ['PUT', '/tasks/x'],
      ['PATCH', '/message:send'],
    ] as const) {
      const res = await call({ method, path, headers: v1, ...(method === 'GET' ? {} : { body: '{}' }) });
      expect([404, 405], `${method} ${path}`).toContain(res.status);
    }
  });

  it('unicode task ids are TaskNotFound (404), echoed intact', async () => {
    for (const id of ['🦄', 'e\u0301', '日本語', '\u202Eabc', 'a b', 'x'.repeat(2_000)]) {
      const res = await call({ method: 'GET', path: `/tasks/${pct(id)}`, headers: v1 });
      expect(res.status, id).toBe(404);
      const cancel = await call({
        method: 'POST',
        path: `/tasks/${pct(id)}:cancel`,
        headers: v1,
        body: '{}',
      });
      expect(cancel.status, id).toBe(404);
    }
  });

  it('a body over the limit is a 413 in the REST form; the binding keeps answering', async () => {
    const big = JSON.stringify({
      message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x'.repeat(MAX_BODY) }] },
    });
    const res = await call({ method: 'POST', path: '/message:send', headers: v1, body: big });
    expect(res.status).toBe(413);
    const after = await call({ method: 'GET', path: '/tasks/none', headers: v1 });
    expect(after.status).toBe(404);
  });

  it('a path that is no valid percent-encoding is a 400 in the REST form', async () => {
    for (const path of ['/tasks/%ZZ', '/tasks/%E0%A4%A/pushNotificationConfigs', '/tasks/a%:cancel'])
      expect((await call({ method: 'GET', path, headers: v1 })).status, path).toBe(400);
  });

  it('a 20 000-deep body is a 400, deep data is no 5xx', async () => {
    const depth = 20_000;
    const res = await call({
      method: 'POST',
      path: '/message:send',
      headers: v1,
      body: '['.repeat(depth) + ']'.repeat(depth),
    });
    expect(res.status).toBe(400);
    const deep = `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}]}}`;
    const res2 = await call({ method: 'POST', path: '/message:send', headers: v1, body: deep });
    expect(res2.status).toBeLessThan(500);
  });
});

describe('counterexamples found by the properties (fixed in a2a/plugin.ts, a2a/wire.ts, index.ts)', () => {
  const v1 = headersOf({ version: '1.0', type: 'application/json' });
  const msg = (over: Record<string, unknown>) =>
    JSON.stringify({ message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'q' }], ...over } });

  // The SDK's proto decoding threw a TypeError on these: HTTP 500 (REST), -32603 (JSON-RPC).
  it.each([
    ['raw that is no string', msg({ parts: [{ raw: 0 }] })],
    ['a null part', msg({ parts: [null] })],
    ['a toString member', msg({ messageId: { toString: 1 } })],
    ['a valueOf member deep inside', msg({ metadata: { a: [{ valueOf: 'x' }] } })],
  ])('REST message:send with %s is a 400', async (_, b) => {
    const res = await call({ method: 'POST', path: '/message:send', headers: v1, body: b });
    expect(res.status).toBe(400);
  });

  it('REST push config with a toString member is a 400', async () => {
    const res = await call({
      method: 'POST',
      path: '/tasks/t/pushNotificationConfigs',
      headers: v1,
      body: JSON.stringify({ url: { toString: 1 } }),
    });
    expect(res.status).toBe(400);
  });

  it('JSON-RPC SendMessage with raw that is no string is -32602, not -32603', async () => {
    const res = await fetch(`${world.base}/a2a`, {
      method: 'POST',
      headers: v1,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ raw: 0 }] } },
      }),
    });
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: 1, error: { code: -32602 } });
  });

  it('a tenant path with a body that is no object is a 400 (the SDK set body.tenant: a 500)', async () => {
    const res = await call({ method: 'POST', path: '/acme/message:send', headers: v1, body: '"x"' });
    expect(res.status).toBe(400);
  });

  it("an unknown REST path with content-type a2a+json is the binding's 404 (it reached the JSON-RPC handler: 200 -32005)", async () => {
    const res = await call({
      method: 'GET',
      path: '/nope',
      headers: headersOf({ version: '1.0', type: 'application/a2a+json' }),
    });
    expect(res.status).toBe(404);
  });

  it("PUT, PATCH and the bare base path are the binding's 404, not the gateway's", async () => {
    expect((await call({ method: 'PUT', path: '/tasks/x', headers: v1, body: '{}' })).status).toBe(404);
    expect((await call({ method: 'PATCH', path: '/message:send', headers: v1, body: '{}' })).status).toBe(
      404,
    );
    expect((await call({ method: 'GET', path: '', headers: v1 })).status).toBe(404);
  });
});
