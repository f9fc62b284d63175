/**
 * MCP JSON-RPC batches over HTTP (mcp/envelope.ts, mcp/web-bridge.ts): where the protocol version
 * has batches (2025-03-26, assumed without an Mcp-Protocol-Version header) every element gets its
 * own answer, the SDK's for valid ones and -32600/-32601/-32602 for the others; later versions
 * refuse a batch. Before, the SDK refused a whole batch with -32700 for one bad element.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { expectedInBatch, isRecord, mcpElement, mcpFault, validId } from './rpc-model';
import { SEED, expectHealthy, startWorld } from './world';
import type { World } from './world';

let world: World;
beforeAll(async () => {
  world = await startWorld({}, true);
});
afterAll(async () => {
  await world?.stop();
});
afterEach(async () => {
  await expectHealthy(world.app);
});

const JSON_ONLY = { 'content-type': 'application/json', accept: 'application/json' };
const STREAMABLE = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

interface Answer {
  jsonrpc: '2.0';
  id: string | number | null;
  result?: unknown;
  error?: { code: number; message: string };
}

async function post(body: unknown, headers: Record<string, string> = JSON_ONLY) {
  const res = await fetch(`${world.base}/mcp`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  let answers: unknown;
  if (type.startsWith('text/event-stream'))
    answers = text
      .split('\n')
      .filter((l) => l.startsWith('data:') && l.slice(5).trim())
      .map((l) => JSON.parse(l.slice(5)) as unknown);
  else answers = text === '' ? undefined : JSON.parse(text);
  return { status: res.status, type, answers, sid: res.headers.get('mcp-session-id') };
}

/** Answers as {id, code} (code undefined for a result), sorted, for order-free comparison. */
const outline = (answers: unknown): { id: unknown; code: number | undefined }[] =>
  (answers as Answer[])
    .map((a) => ({ id: a.id, code: a.error?.code }))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

const tools = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
const mixed = [
  tools,
  { foo: 'boo' },
  { jsonrpc: '2.0', id: 2, method: 'tools/call', params: [1] },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 3, method: 'no/such', params: ['x'] },
  { jsonrpc: '1.0', id: 4, method: 'ping' },
  { jsonrpc: '2.0', id: 5.5, method: 'ping' },
  { jsonrpc: '2.0', id: 6, method: 'ping' },
];
const mixedOutline = outline([
  { id: 1 },
  { id: null, error: { code: -32600 } },
  { id: 2, error: { code: -32602 } },
  { id: 3, error: { code: -32601 } },
  { id: 4, error: { code: -32600 } },
  { id: null, error: { code: -32600 } },
  { id: 6 },
]);

describe('MCP batches without a session', () => {
  it('JSON: one answer per element, the valid ones answered by the server', async () => {
    const res = await post(mixed);
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/^application\/json/);
    expect(Array.isArray(res.answers)).toBe(true);
    expect(outline(res.answers)).toEqual(mixedOutline);
    const list = (res.answers as Answer[]).find((a) => a.id === 1);
    expect((list?.result as { tools: unknown[] }).tools).toHaveLength(5);
  });

  it('SSE: the same answers as events', async () => {
    const res = await post(mixed, STREAMABLE);
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/^text\/event-stream/);
    expect(outline(res.answers)).toEqual(mixedOutline);
  });

  it('a batch of one request is answered by an array of one', async () => {
    const res = await post([tools]);
    expect(res.status).toBe(200);
    expect(outline(res.answers)).toEqual([{ id: 1, code: undefined }]);
  });

  it('only notifications and invalid elements: 200 with the errors', async () => {
    const res = await post([{ jsonrpc: '2.0', method: 'notifications/initialized' }, 7]);
    expect(res.status).toBe(200);
    expect(res.answers).toEqual([
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.any(String) } },
    ]);
  });

  it('only valid notifications: 202 and no body', async () => {
    const res = await post([{ jsonrpc: '2.0', method: 'notifications/initialized' }]);
    expect(res.status).toBe(202);
    expect(res.answers).toBeUndefined();
  });

  it('nothing valid: 400 with every error', async () => {
    const res = await post([1, { jsonrpc: '2.0', id: 9, method: 'tools/list', params: 'x' }]);
    expect(res.status).toBe(400);
    expect(outline(res.answers)).toEqual(
      outline([
        { id: null, error: { code: -32600 } },
        { id: 9, error: { code: -32600 } },
      ]),
    );
  });

  it('a second request with an id already in the batch is an Invalid Request', async () => {
    const res = await post([tools, { ...tools, method: 'ping' }]);
    expect(outline(res.answers)).toEqual(outline([{ id: 1 }, { id: null, error: { code: -32600 } }]));
  });

  it('an empty batch, and one over 100 messages, are one Invalid Request', async () => {
    for (const batch of [[], Array.from({ length: 101 }, (_, i) => ({ ...tools, id: i }))]) {
      const res = await post(batch);
      expect(res.status).toBe(400);
      expect(res.answers).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    }
  });

  it.each(['2025-06-18', '2025-11-25'])('MCP %s has no batches: 400, one -32600', async (version) => {
    const res = await post([tools], { ...JSON_ONLY, 'mcp-protocol-version': version });
    expect(res.status).toBe(400);
    expect(res.answers).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    // a single message with that header is fine
    const one = await post(tools, { ...JSON_ONLY, 'mcp-protocol-version': version });
    expect(one.status).toBe(200);
  });

  it('initialize inside a batch is refused whole (the SDK: only one initialization request)', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 10,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const res = await post([init, tools]);
    expect(res.status).toBe(400);
    expect(res.answers).toMatchObject({ error: { code: -32600 } });
  });
});

describe('MCP over HTTP: deep nesting', () => {
  // body-limits.ts: JSON nested deeper than 64 levels is refused before it is parsed.
  it('a 100 000-deep batch, and 100 000-deep params, are one Invalid Request; params under the limit reach the method', async () => {
    const depth = 100_000;
    const arrays = await post('['.repeat(depth) + ']'.repeat(depth));
    expect(arrays.status).toBe(400);
    expect(arrays.answers).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    const deep = (n: number): string => `{"x":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}`;
    const refused = await post(`{"jsonrpc":"2.0","id":"deep","method":"ping","params":${deep(depth)}}`);
    expect(refused.status).toBe(400);
    expect(refused.answers).toMatchObject({
      id: null,
      error: { code: -32600, message: expect.stringMatching(/deeper than 64/) },
    });
    // 60 levels inside params (the envelope adds 2): answered.
    const ping = await post(`{"jsonrpc":"2.0","id":"deep","method":"ping","params":${deep(60)}}`);
    expect(ping.answers).toEqual({ jsonrpc: '2.0', id: 'deep', result: {} });
    const call = await post(
      `{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"who","arguments":{"query":${deep(55)}}}}`,
    );
    expect(call.answers).toMatchObject({ id: 'c', error: { code: -32602 } });
  });
});

describe('MCP batches in a session', () => {
  async function session(version: string): Promise<Record<string, string>> {
    const res = await post(
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'batch', version: '1' } },
      },
      STREAMABLE,
    );
    expect(res.sid).toBeTruthy();
    const headers = { ...STREAMABLE, 'mcp-session-id': res.sid!, 'mcp-protocol-version': version };
    expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).status).toBe(202);
    return headers;
  }

  it('2025-03-26: per-element answers on the session stream', async () => {
    const res = await post(mixed, await session('2025-03-26'));
    expect(res.status).toBe(200);
    expect(outline(res.answers)).toEqual(mixedOutline);
  });

  it('2025-06-18: a batch is refused, the session keeps answering', async () => {
    const headers = await session('2025-06-18');
    expect((await post(mixed, headers)).status).toBe(400);
    expect(outline([(await post([tools], headers)).answers])).toEqual([{ id: null, code: -32600 }]);
    expect(outline((await post(tools, headers)).answers)).toEqual([{ id: 1, code: undefined }]);
  });
});

// ------------------------------------------------------------------ the property

describe('MCP batches: the property', () => {
  it('every element gets what the model says; never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(mcpElement, { minLength: 1, maxLength: 8 }), async (batch) => {
        // Unique valid ids keep the model simple (duplicates have their own test above).
        const ids = batch
          .filter(isRecord)
          .map((e) => e.id)
          .filter(validId);
        fc.pre(new Set(ids).size === ids.length);
        fc.pre(!batch.some((e) => isInitializeRequest(e)));
        const res = await post(batch);
        expect(res.status).toBeLessThan(500);
        const want = batch.map(expectedInBatch);
        const served = want.filter((w) => w === 'server');
        const errors = want.filter((w): w is { code: number; id: unknown } => typeof w === 'object');
        const valid = batch.filter((e) => !mcpFault(e)).length;
        if (valid === 0 && errors.length === 0) {
          // only notifications with bad params: refused as one
          expect(res.status).toBe(400);
          return;
        }
        if (valid > 0 && served.length === 0 && errors.length === 0) {
          expect(res.status).toBe(202);
          return;
        }
        expect(res.status).toBe(valid === 0 ? 400 : 200);
        const got = res.answers as Answer[];
        expect(Array.isArray(got)).toBe(true);
        expect(got).toHaveLength(served.length + errors.length);
        for (const a of got) {
          expect(a.jsonrpc).toBe('2.0');
          expect('result' in a !== 'error' in a).toBe(true);
        }
        // Valid ids are unique in the batch: an answer with one belongs to its element.
        const byId = new Map<unknown, Answer>(got.filter((a) => a.id !== null).map((a) => [a.id, a]));
        expect(byId.size).toBe(got.filter((a) => a.id !== null).length);
        want.forEach((w, i) => {
          const e = batch[i];
          const id = isRecord(e) ? e.id : undefined;
          if (w === 'server') expect(byId.has(id), JSON.stringify(batch[i])).toBe(true);
          else if (typeof w === 'object' && w.id !== null)
            expect(byId.get(w.id)?.error?.code, JSON.stringify(batch[i])).toBe(w.code);
        });
        const codes = (list: { id: unknown; code?: number | undefined }[]): unknown[] =>
          list
            .filter((x) => x.id === null)
            .map((x) => x.code)
            .sort();
        expect(codes(got.map((a) => ({ id: a.id, code: a.error?.code })))).toEqual(codes(errors));
      }),
      { seed: SEED, numRuns: 60 },
    );
  });
});
