/**
 * Property tests of the JSON-RPC endpoints, MCP (/mcp, plain JSON POST, no session) and A2A
 * (/a2a): arbitrary envelopes and batches get JSON-RPC errors with the right codes, never a
 * 500 and never a crash; /health still answers after each batch.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mcpFault } from './rpc-model';
import { SEED, expectHealthy, isSpecialQuery, startWorld } from './world';
import type { World } from './world';

let world: World;
beforeAll(async () => {
  world = await startWorld({ a2a: { keepAliveMs: 1_000, callTimeoutMs: 5_000 } }, true);
});
afterAll(async () => {
  await world?.stop();
});
afterEach(async () => {
  await expectHealthy(world.app);
});

const FC = { seed: SEED, numRuns: 80 } as const;

type Endpoint = 'mcp' | 'a2a';

/** Known methods of each endpoint, so that params of wrong types reach the method's validation. */
const METHODS: Record<Endpoint, string[]> = {
  mcp: [
    'initialize',
    'tools/list',
    'tools/call',
    'ping',
    'logging/setLevel',
    'resources/list',
    'prompts/list',
  ],
  a2a: [
    'SendMessage',
    'GetTask',
    'CancelTask',
    'ListTasks',
    'GetExtendedAgentCard',
    'CreateTaskPushNotificationConfig',
    'GetTaskPushNotificationConfig',
    'ListTaskPushNotificationConfigs',
    'DeleteTaskPushNotificationConfig',
    'message/send',
    'tasks/get',
    'tasks/cancel',
  ],
};

const STANDARD = new Set([-32700, -32600, -32601, -32602]);
/** Server-defined errors (-32000…-32099), among them A2A's TaskNotFound (-32001) and friends. */
const isServerDefined = (code: number): boolean => code <= -32000 && code >= -32099;

interface Rpc {
  jsonrpc?: unknown;
  id?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown };
}

async function post(endpoint: Endpoint, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${world.base}/${endpoint}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      ...(endpoint === 'a2a' ? { 'A2A-Version': '1.0' } : {}),
      ...headers,
    },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type') ?? '', text };
}

/** One JSON-RPC response object: jsonrpc 2.0, an id, and exactly one of result and error. */
function expectResponse(r: unknown, what: string): Rpc {
  const o = r as Rpc;
  if (typeof o !== 'object' || o === null || Array.isArray(o))
    throw new Error(`${what}: not an object: ${JSON.stringify(r)}`);
  expect(o.jsonrpc, what).toBe('2.0');
  expect('id' in o, what).toBe(true);
  expect('result' in o !== 'error' in o, `${what}: exactly one of result and error`).toBe(true);
  if (o.error) {
    expect(typeof o.error.code, what).toBe('number');
    expect(typeof o.error.message, what).toBe('string');
    const code = o.error.code as number;
    if (!STANDARD.has(code) && !isServerDefined(code))
      throw new Error(`${what}: error code ${code}: ${JSON.stringify(o)}`);
  }
  return o;
}

/** The properties: status < 500, and a body that is empty (notifications) or JSON-RPC. */
async function call(endpoint: Endpoint, body: string, headers?: Record<string, string>): Promise<Rpc[]> {
  const what = `${endpoint} ${body.slice(0, 300)}`;
  const res = await post(endpoint, body, headers);
  if (res.status >= 500) throw new Error(`${what}: status ${res.status}: ${res.text.slice(0, 300)}`);
  if (res.text === '') return [];
  let parsed: unknown;
  if (res.type.startsWith('text/event-stream')) {
    parsed = res.text
      .split('\n')
      .filter((l) => l.startsWith('data:') && l.slice(5).trim())
      .map((l) => JSON.parse(l.slice(5)) as unknown);
  } else {
    try {
      parsed = JSON.parse(res.text);
    } catch {
      throw new Error(`${what}: status ${res.status}, body not JSON: ${res.text.slice(0, 200)}`);
    }
  }
  const all = Array.isArray(parsed) ? parsed : [parsed];
  return all.map((r) => expectResponse(r, what));
}

const idValue = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 10 }),
  fc.constant(null),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom<unknown>(true, {}, [], [1], { a: 1 }),
);

const wrongParams = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom<unknown>(
    null,
    1,
    'x',
    true,
    [],
    {},
    { name: 1 },
    { message: null },
    { id: 5 },
    { message: { parts: 'x' } },
  ),
  fc.record(
    {
      name: fc.oneof(
        fc.constantFrom('ask', 'who', 'list_sites', 'details', 'compare', 'nope'),
        fc.jsonValue({ maxDepth: 1 }),
      ),
      arguments: fc.oneof(
        fc.jsonValue({ maxDepth: 2 }),
        fc.record({ query: fc.jsonValue({ maxDepth: 1 }), site: fc.jsonValue({ maxDepth: 1 }) }),
      ),
      id: fc.jsonValue({ maxDepth: 1 }),
      message: fc.oneof(
        fc.jsonValue({ maxDepth: 2 }),
        fc.record(
          {
            messageId: fc.jsonValue({ maxDepth: 0 }),
            role: fc.jsonValue({ maxDepth: 0 }),
            parts: fc.jsonValue({ maxDepth: 2 }),
          },
          { requiredKeys: [] },
        ),
      ),
      protocolVersion: fc.jsonValue({ maxDepth: 0 }),
      level: fc.jsonValue({ maxDepth: 0 }),
    },
    { requiredKeys: [] },
  ),
);

/** An envelope with any of its fields missing or of a wrong type. */
const envelope = (endpoint: Endpoint) =>
  fc.record(
    {
      jsonrpc: fc.oneof(
        { weight: 4, arbitrary: fc.constant<unknown>('2.0') },
        { weight: 1, arbitrary: fc.constantFrom<unknown>('1.0', '2', 2, null, '', ['2.0']) },
      ),
      id: idValue,
      method: fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom<unknown>(...METHODS[endpoint]) },
        { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
        {
          weight: 1,
          arbitrary: fc.constantFrom<unknown>(null, 1, [], {}, 'rpc.discover', '__proto__', 'constructor'),
        },
      ),
      params: wrongParams,
    },
    { requiredKeys: [] },
  );

/** Keeps the fake router's special queries (hang, slow …) out of generated tool calls and messages. */
const harmless = (v: unknown): boolean =>
  !JSON.stringify(v).match(/"(hang|slow|idle|fail)"/) && !isSpecialQuery(v);

for (const endpoint of ['mcp', 'a2a'] as const) {
  describe(`${endpoint}: arbitrary JSON-RPC`, () => {
    it('envelopes: never a 5xx, always a JSON-RPC response with a standard or server code', async () => {
      await fc.assert(
        fc.asyncProperty(envelope(endpoint), async (env) => {
          fc.pre(harmless(env));
          const out = await call(endpoint, JSON.stringify(env));
          const e = env as Record<string, unknown>;
          const validEnvelope =
            e.jsonrpc === '2.0' &&
            typeof e.method === 'string' &&
            (e.params === undefined ||
              (typeof e.params === 'object' && e.params !== null && !Array.isArray(e.params))) &&
            (e.id === undefined ||
              typeof e.id === 'string' ||
              Number.isSafeInteger(e.id) ||
              // MCP ids must not be null
              (e.id === null && endpoint === 'a2a'));
          // A structurally invalid envelope is an Invalid Request (MCP: exactly as rpc-model.ts says).
          if (endpoint === 'mcp') {
            const fault = mcpFault(e);
            if (fault)
              expect(out).toEqual([
                { jsonrpc: '2.0', id: fault.id, error: { code: fault.code, message: expect.any(String) } },
              ]);
          } else if (!validEnvelope && out.length === 1 && out[0]!.error)
            expect([-32600, -32601, -32602]).toContain(out[0]!.error.code);
          // a valid envelope with an unknown method is Method not found
          if (
            validEnvelope &&
            !METHODS[endpoint].includes(e.method as string) &&
            e.id !== undefined &&
            out[0]?.error
          )
            expect(out[0].error.code).toBe(-32601);
        }),
        FC,
      );
    });

    it('batches of envelopes: never a 5xx', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(envelope(endpoint), { maxLength: 5 }), async (batch) => {
          fc.pre(harmless(batch));
          await call(endpoint, JSON.stringify(batch));
        }),
        { ...FC, numRuns: 40 },
      );
    });

    it('malformed JSON is -32700 (or -32600 for an empty body)', async () => {
      const valid = JSON.stringify({ jsonrpc: '2.0', id: 1, method: METHODS[endpoint][1], params: {} });
      await fc.assert(
        fc.asyncProperty(
          fc.nat(),
          fc.constantFrom('', '}', '\u0000', ',', '\uD800', 'garbage'),
          async (cut, junk) => {
            const body = valid.slice(0, cut % valid.length) + junk;
            let parses = true;
            try {
              JSON.parse(body);
            } catch {
              parses = false;
            }
            const out = await call(endpoint, body);
            if (!parses) {
              expect(out).toHaveLength(1);
              expect(body.trim() === '' ? [-32600, -32700] : [-32700]).toContain(out[0]!.error?.code);
            }
          },
        ),
        FC,
      );
    });

    it('unknown methods are -32601 and echo the id', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc
            .string({ minLength: 1, maxLength: 20 })
            .filter((m) => !METHODS[endpoint].includes(m) && !m.startsWith('notifications/')),
          fc.oneof(fc.integer(), fc.string({ minLength: 1, maxLength: 10 })),
          async (method, id) => {
            const out = await call(endpoint, JSON.stringify({ jsonrpc: '2.0', id, method, params: {} }));
            expect(out).toHaveLength(1);
            expect(out[0]!.error?.code).toBe(-32601);
            expect(out[0]!.id).toEqual(id);
          },
        ),
        { ...FC, numRuns: 40 },
      );
    });

    it('wrong content types and arbitrary bytes: never a 5xx', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.uint8Array({ maxLength: 200 }),
          fc.constantFrom(
            'application/json',
            'text/plain',
            'application/x-www-form-urlencoded',
            'application/xml',
            'multipart/form-data; boundary=x',
          ),
          async (bytes, type) => {
            const res = await fetch(`${world.base}/${endpoint}`, {
              method: 'POST',
              headers: { 'content-type': type, accept: 'application/json', 'A2A-Version': '1.0' },
              body: Buffer.from(bytes),
              signal: AbortSignal.timeout(10_000),
            });
            const text = await res.text();
            if (res.status >= 500)
              throw new Error(`${endpoint} [${type}]: ${res.status} ${text.slice(0, 200)}`);
            if (text) JSON.parse(text);
          },
        ),
        { ...FC, numRuns: 40 },
      );
    });
  });
}

describe('JSON-RPC: specific codes', () => {
  it.each(['mcp', 'a2a'] as const)('%s: missing or wrong jsonrpc is an Invalid Request', async (endpoint) => {
    for (const jsonrpc of [undefined, '1.0', 2, null]) {
      const out = await call(endpoint, JSON.stringify({ jsonrpc, id: 1, method: METHODS[endpoint][1] }));
      expect(out).toEqual([{ jsonrpc: '2.0', id: 1, error: { code: -32600, message: expect.any(String) } }]);
    }
  });

  it.each(['mcp', 'a2a'] as const)('%s: params of the wrong type are -32602', async (endpoint) => {
    const method = endpoint === 'mcp' ? 'tools/call' : 'GetTask';
    // MCP: params that are no structured value make no valid request object (-32600).
    const primitive = endpoint === 'mcp' ? -32600 : -32602;
    for (const [params, code] of [
      [1, primitive],
      ['x', primitive],
      [true, primitive],
      [[1], -32602],
      [{ name: 1 }, -32602],
    ] as const) {
      const out = await call(endpoint, JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }));
      expect(out, JSON.stringify(params)).toMatchObject([{ jsonrpc: '2.0', id: 1, error: { code } }]);
    }
  });
});

describe('counterexamples found by the properties (A2A, fixed in a2a/plugin.ts)', () => {
  // The SDK answered every one of these with -32602 "Invalid JSON-RPC Request." and echoed ids of
  // any type; JSON-RPC 2.0 wants -32600 (and id null when the id is not a valid one).
  it.each([
    [{}, null, -32600],
    [{ jsonrpc: '1.0', id: 1, method: 'GetTask', params: { id: 'x' } }, 1, -32600],
    [{ id: 1, method: 'GetTask' }, 1, -32600],
    [{ jsonrpc: '2.0', id: {}, method: 'GetTask', params: { id: 'x' } }, null, -32600],
    [{ jsonrpc: '2.0', id: true, method: 'nope' }, null, -32600],
    [{ jsonrpc: '2.0', id: 1, method: 1 }, 1, -32600],
    [[], null, -32600],
    [[{ jsonrpc: '2.0', id: 1, method: 'GetTask' }], null, -32600],
    [{ jsonrpc: '2.0', id: 1, method: '' }, 1, -32601],
  ])('%j → %j, %i', async (body, id, code) => {
    const out = await call('a2a', JSON.stringify(body));
    expect(out).toEqual([{ jsonrpc: '2.0', id, error: { code, message: expect.any(String) } }]);
  });
});
