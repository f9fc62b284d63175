/**
 * Properties of what found issue 19's stalls and 500s, on every JSON surface (REST /ask in each
 * dialect, /who, MCP /mcp and /mcp/ws, A2A /a2a and /a2a/rest, the chat API's /chat/ws):
 *
 * - nesting depth × size: a valid request with a value of any depth (under and over the limit)
 *   and any padding (under and over the surface's size limit) placed inside it, sent with a
 *   length or chunked. Never a 5xx; past the depth limit a 400, past the size limit a 413, both
 *   in the surface's own error form; under both, whatever the request itself deserves.
 * - the `toString` family of member names (`toString`, `valueOf`, `__proto__`, `constructor`, …)
 *   with any value, at any place of a valid request of every dialect: never a 5xx, every 4xx in
 *   the dialect's form. They broke `String(...)` in dialect.ts (500).
 *
 * Real HTTP and WebSockets against a gateway on a real NATS.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import WebSocket from 'ws';
import { BODY_LIMITS } from '../body-limits';
import { SEED, expectHealthy, isNlwebError, isSpecialQuery, isV05Error, startWorld } from './world';
import type { World } from './world';
import { isRecord } from './rpc-model';
import { isV05Body } from '../v05-detect';

const LIMIT = 64 * 1024; // every surface's size limit in this suite: small, so that runs stay cheap
const DEPTH = BODY_LIMITS.jsonDepth;

let world: World;
beforeAll(async () => {
  world = await startWorld(
    { maxBodyBytes: LIMIT, mcp: { maxMessageBytes: LIMIT }, a2a: { maxBodyBytes: LIMIT } },
    true,
  );
});
afterAll(async () => {
  await world?.stop();
});
afterEach(async () => {
  await expectHealthy(world.app);
});

type Form = 'nlweb' | 'v05' | 'jsonrpc' | 'a2a-rest' | 'chat';

interface Surface {
  name: string;
  form: Form;
  path: string;
  headers?: Record<string, string>;
  /** A valid request with `value` at one of its members. */
  body(value: string): string;
}

const A2A_V1 = { 'a2a-version': '1.0' };
const message = (data: string): string =>
  `{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"westerns"},{"data":${data}}]}`;

const HTTP_SURFACES: Surface[] = [
  {
    name: 'REST /ask 2025',
    form: 'nlweb',
    path: '/ask',
    body: (v) => `{"query":"westerns","site":"movies","filters":${v}}`,
  },
  {
    name: 'REST /ask v0.55',
    form: 'nlweb',
    path: '/ask',
    body: (v) => `{"query":{"text":"westerns","site":"movies","x":${v}},"prefer":{"streaming":false}}`,
  },
  {
    name: 'REST /ask 0.5',
    form: 'v05',
    path: '/ask',
    body: (v) =>
      `{"query":{"text":"westerns","site":"movies"},"return_response":{"streaming":false},"extra":${v}}`,
  },
  {
    name: 'REST /ask as text/plain',
    form: 'nlweb',
    path: '/ask',
    headers: { 'content-type': 'text/plain' },
    body: (v) => `{"query":"westerns","x":${v}}`,
  },
  { name: 'POST /who', form: 'v05', path: '/who', body: (v) => `{"query":{"text":"westerns"},"x":${v}}` },
  {
    name: 'MCP /mcp',
    form: 'jsonrpc',
    path: '/mcp',
    headers: { accept: 'application/json' },
    body: (v) => `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":${v}}}`,
  },
  {
    name: 'A2A /a2a',
    form: 'jsonrpc',
    path: '/a2a',
    headers: A2A_V1,
    body: (v) => `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"none","x":${v}}}`,
  },
  {
    name: 'A2A /a2a/rest',
    form: 'a2a-rest',
    path: '/a2a/rest/message:send',
    headers: A2A_V1,
    body: (v) => `{"message":${message(v)},"configuration":{"returnImmediately":true}}`,
  },
];

/** Whether a 4xx body is in `form`. */
function inForm(form: Form, body: unknown, status: number): boolean {
  switch (form) {
    case 'nlweb':
      return isNlwebError(body);
    case 'v05':
      return isV05Error(body);
    case 'jsonrpc':
      return (
        isRecord(body) &&
        body.jsonrpc === '2.0' &&
        isRecord(body.error) &&
        typeof body.error.code === 'number'
      );
    case 'a2a-rest':
      return (
        isRecord(body) &&
        isRecord(body.error) &&
        body.error.code === status &&
        typeof body.error.message === 'string'
      );
    case 'chat':
      return isRecord(body) && body.type === 'error' && typeof body.message === 'string';
  }
}

/** One request over real HTTP: with a Content-Length, or chunked. */
function post(
  s: Surface,
  body: string,
  chunked: boolean,
): Promise<{ status: number; body: unknown; text: string }> {
  return new Promise((resolve, reject) => {
    const bytes = Buffer.from(body);
    const req = httpRequest(`${world.base}${s.path}`, {
      method: 'POST',
      agent: false,
      headers: {
        'content-type': 'application/json',
        ...(chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(bytes.length) }),
        ...s.headers,
      },
    });
    req.on('response', (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode ?? 0, body: parsed, text });
      });
    });
    req.on('error', (err) => setTimeout(() => reject(err), 1_000));
    for (let at = 0; at < bytes.length; at += 16 * 1024) req.write(bytes.subarray(at, at + 16 * 1024));
    req.end();
  });
}

/** How deep a parsed JSON value nests: `[]` and `{}` are 1, a scalar 0 (no recursion). */
function depthOf(v: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[v, 0]];
  while (stack.length) {
    const [x, d] = stack.pop()!;
    if (typeof x !== 'object' || x === null) continue;
    max = Math.max(max, d + 1);
    for (const child of Object.values(x as object)) stack.push([child, d + 1]);
  }
  return max;
}

/** A JSON value nested `depth` levels (arrays, objects or both), its innermost holding `pad`. */
const nested = (depth: number, shape: 'array' | 'object' | 'mixed', pad: string): string => {
  const open = (i: number): string => (shape === 'array' || (shape === 'mixed' && i % 2) ? '[' : '{"k":');
  const close = (i: number): string => (shape === 'array' || (shape === 'mixed' && i % 2) ? ']' : '}');
  let text = JSON.stringify(pad);
  let head = '';
  let tail = '';
  for (let i = 0; i < depth; i++) {
    head += open(i);
    tail = close(i) + tail;
  }
  text = head + text + tail;
  return text;
};

/** Depths around the limit (and far past it), sizes around the size limit. */
const depthArb = fc.oneof(
  fc.integer({ min: 0, max: DEPTH - 8 }),
  fc.integer({ min: DEPTH - 2, max: DEPTH + 2 }),
  fc.constantFrom(1_000, 20_000),
);
const padArb = fc.oneof(
  fc.constant(0),
  fc.integer({ min: 0, max: LIMIT / 2 }),
  fc.integer({ min: LIMIT - 200, max: LIMIT + 200 }),
  fc.constant(LIMIT * 3),
);

describe('nesting depth × size on every JSON surface', () => {
  for (const s of HTTP_SURFACES) {
    it(`${s.name}: past the depth limit a 400, past the size limit a 413, in the surface's form; never a 5xx`, async () => {
      await fc.assert(
        fc.asyncProperty(
          depthArb,
          padArb,
          fc.constantFrom('array', 'object', 'mixed'),
          fc.boolean(),
          async (depth, pad, shape, chunked) => {
            const body = s.body(nested(depth, shape, 'p'.repeat(pad)));
            const bytes = Buffer.byteLength(body);
            const tooDeep = depthOf(JSON.parse(body)) > DEPTH;
            const what = `${s.name} depth ${depth} ${shape}, ${bytes} bytes${chunked ? ', chunked' : ''}`;
            const r = await post(s, body, chunked);
            expect(r.status, `${what}: ${r.text.slice(0, 200)}`).toBeLessThan(500);
            // A body refused for its size is not read: /ask cannot know its dialect and answers in 2025's.
            const form = r.status === 413 && s.path === '/ask' ? 'nlweb' : s.form;
            if (r.status >= 400)
              expect(inForm(form, r.body, r.status), `${what}: ${r.text.slice(0, 300)}`).toBe(true);
            if (bytes > LIMIT) {
              // With a length, the size is refused before a byte is read; chunked, whichever comes first.
              if (!chunked || !tooDeep) expect(r.status, what).toBe(413);
              else expect([400, 413], what).toContain(r.status);
            } else if (tooDeep) {
              expect(r.status, what).toBe(400);
              expect(r.text, what).toMatch(/deeper than 64 levels/);
            } else {
              expect(r.text, what).not.toMatch(/deeper than/);
              expect(r.status, what).not.toBe(413);
            }
          },
        ),
        { seed: SEED, numRuns: 40 },
      );
    });
  }

  /** Frames to a WebSocket; resolves with the first `count` frames answered. */
  async function frames(
    path: string,
    protocol: string | undefined,
    sent: string[],
    count: number,
  ): Promise<unknown[]> {
    const ws = new WebSocket(`${world.base.replace('http', 'ws')}${path}`, protocol ? [protocol] : []);
    const got: unknown[] = [];
    try {
      await new Promise<void>((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
      const done = new Promise<void>((resolve, reject) => {
        ws.on('message', (d: Buffer) => {
          const f = JSON.parse(d.toString('utf8')) as unknown;
          // The chat API greets and reports state too: only errors and pongs count here.
          if (isRecord(f) && typeof f.type === 'string' && f.type !== 'error' && f.type !== 'pong') return;
          got.push(f);
          if (got.length >= count) resolve();
        });
        ws.once('close', (code) => reject(new Error(`closed ${code} after ${got.length} frames`)));
      });
      for (const f of sent) ws.send(f);
      await done;
      return got;
    } finally {
      ws.terminate();
    }
  }

  it('/mcp/ws and /chat/ws frames: past the depth limit an error frame; the socket keeps answering', async () => {
    await fc.assert(
      fc.asyncProperty(depthArb, fc.constantFrom('array', 'object', 'mixed'), async (depth, shape) => {
        const v = nested(depth, shape, 'p');
        const mcp = await frames(
          '/mcp/ws',
          'mcp',
          [
            `{"jsonrpc":"2.0","id":"a","method":"ping","params":{"x":${v}}}`,
            '{"jsonrpc":"2.0","id":"b","method":"ping"}',
          ],
          2,
        );
        const answers = mcp as { id: unknown; error?: { code: number; message: string } }[];
        expect(answers.find((a) => a.id === 'b')).toEqual({ jsonrpc: '2.0', id: 'b', result: {} });
        if (depth > DEPTH) {
          expect(answers.find((a) => a.id === null)?.error).toMatchObject({
            code: -32600,
            message: expect.stringMatching(/deeper/),
          });
        } else if (depth + 3 <= DEPTH)
          expect(answers.find((a) => a.id === 'a')).toMatchObject({ result: {} });

        const chat = await frames('/chat/ws', undefined, [`{"type":"ping","x":${v}}`, '{"type":"ping"}'], 2);
        if (depth > DEPTH)
          expect(chat[0]).toMatchObject({ type: 'error', message: expect.stringMatching(/deeper/) });
        for (const f of chat)
          expect(isRecord(f) && (f.type === 'pong' || inForm('chat', f, 400)), JSON.stringify(f)).toBe(true);
      }),
      { seed: SEED, numRuns: 25 },
    );
  });
});

/** Member names that are properties of every object (or special to JSON.parse's callers). */
const PROTO_KEYS = [
  'toString',
  'valueOf',
  '__proto__',
  'constructor',
  'prototype',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  'toJSON',
  '__defineGetter__',
  '__lookupGetter__',
  'then',
] as const;

const protoValue = fc.oneof(
  fc.constantFrom<unknown>(1, 'x', null, true, {}, [], { toString: 1 }, { valueOf: 'v' }, { __proto__: 1 }),
  fc
    .record({ k: fc.constantFrom(...PROTO_KEYS), v: fc.jsonValue({ maxDepth: 2 }) })
    .map(({ k, v }) => ({ [k]: v })),
  fc.jsonValue({ maxDepth: 2 }),
);

/** Every place of a base request a member may be added at (`[]`: the top), or replaced. */
function places(v: unknown, at: string[] = []): string[][] {
  const out = [at];
  if (isRecord(v))
    for (const [k, x] of Object.entries(v)) out.push([...at, k], ...places(x, [...at, k]).slice(1));
  return out;
}

/** The base with `key: value` set inside the object at `at`, or the member at `at` replaced by it. */
function withMember(base: unknown, at: string[], key: string | undefined, value: unknown): string {
  const copy = JSON.parse(JSON.stringify(base)) as Record<string, unknown>;
  let o: Record<string, unknown> = copy;
  for (const k of at.slice(0, key === undefined ? -1 : undefined)) {
    const next = o[k];
    if (!isRecord(next)) return JSON.stringify(copy);
    o = next;
  }
  const name = key ?? at[at.length - 1];
  if (name === undefined) return JSON.stringify(copy);
  // defineProperty: plain assignment of "__proto__" would set the prototype, not a member.
  Object.defineProperty(o, name, { value, enumerable: true, configurable: true, writable: true });
  return JSON.stringify(copy);
}

interface DialectCase {
  name: string;
  surface: Surface;
  base: unknown;
}

const DIALECTS: DialectCase[] = [
  {
    name: 'REST /ask 2025',
    surface: { name: '', form: 'nlweb', path: '/ask', body: () => '' },
    base: { query: 'westerns', site: 'movies', streaming: 'false', prev: ['older'] },
  },
  {
    name: 'REST /ask v0.55',
    surface: { name: '', form: 'nlweb', path: '/ask', body: () => '' },
    base: {
      query: { text: 'westerns', site: 'movies' },
      context: { prev: ['older'] },
      prefer: { streaming: false, mode: 'list' },
      meta: { version: '0.55' },
    },
  },
  {
    name: 'REST /ask 0.5',
    surface: { name: '', form: 'v05', path: '/ask', body: () => '' },
    base: {
      query: { text: 'westerns', site: 'movies' },
      context: { prev: ['older'] },
      return_response: { streaming: false, mode: 'list' },
      meta: { api_version: '0.5', request_id: 'r1' },
    },
  },
  {
    name: 'POST /who 0.5',
    surface: { name: '', form: 'v05', path: '/who', body: () => '' },
    base: { query: { text: 'westerns' }, meta: { api_version: '0.5' } },
  },
  {
    name: 'MCP tools/call',
    surface: {
      name: '',
      form: 'jsonrpc',
      path: '/mcp',
      headers: { accept: 'application/json' },
      body: () => '',
    },
    base: {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'who', arguments: { query: 'westerns' } },
    },
  },
  {
    name: 'A2A JSON-RPC SendMessage',
    surface: { name: '', form: 'jsonrpc', path: '/a2a', headers: A2A_V1, body: () => '' },
    base: {
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: {
        message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'westerns' }] },
        configuration: { returnImmediately: true },
      },
    },
  },
  {
    name: 'A2A REST message:send',
    surface: { name: '', form: 'a2a-rest', path: '/a2a/rest/message:send', headers: A2A_V1, body: () => '' },
    base: {
      message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'westerns' }], metadata: { a: 1 } },
      configuration: { returnImmediately: true },
    },
  },
];

describe('the toString family of member names in every dialect', () => {
  for (const d of DIALECTS) {
    it(`${d.name}: never a 5xx, every 4xx in the dialect's form`, async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...places(d.base)),
          fc.option(fc.constantFrom(...PROTO_KEYS), { nil: undefined }),
          protoValue,
          async (at, key, value) => {
            const body = withMember(d.base, at, key, value);
            fc.pre(!isSpecialQuery((JSON.parse(body) as { query?: unknown }).query));
            const r = await post(d.surface, body, false);
            const what = `${d.name} ${body.slice(0, 300)}`;
            expect(r.status, `${what}: ${r.text.slice(0, 300)}`).toBeLessThan(500);
            if (r.status < 400) return;
            // A __proto__ or constructor member is refused by Fastify's JSON parser before the
            // dialect is known: the 2025 form then (rest.test.ts says the same).
            const parsed = JSON.parse(body) as unknown;
            const form =
              d.surface.path === '/ask' && /"(__proto__|constructor)"/.test(body)
                ? undefined
                : d.surface.path === '/ask'
                  ? isRecord(parsed) && isV05Body(parsed)
                    ? 'v05'
                    : 'nlweb'
                  : d.surface.form;
            const ok =
              form === undefined
                ? isNlwebError(r.body) || isV05Error(r.body)
                : inForm(form, r.body, r.status);
            expect(ok, `${what}: ${r.status} ${r.text.slice(0, 300)}`).toBe(true);
          },
        ),
        { seed: SEED, numRuns: 60 },
      );
    });
  }

  it('v0.55: prefer.streaming or meta.version {"toString":1} (a 500 before) and prefer.streaming {} are 400s', async () => {
    const v055 = DIALECTS[1]!;
    for (const [body, parameter] of [
      ['{"query":{"text":"westerns"},"prefer":{"streaming":{"toString":1}}}', 'prefer.streaming'],
      ['{"query":{"text":"westerns"},"prefer":{"streaming":{}}}', 'prefer.streaming'],
      ['{"query":{"text":"westerns"},"prefer":{"streaming":{"valueOf":1}}}', 'prefer.streaming'],
      ['{"query":{"text":"westerns"},"prefer":{},"meta":{"version":{"toString":1}}}', 'meta.version'],
      ['{"query":{"text":"westerns"},"prefer":{},"meta":{"version":{}}}', 'meta.version'],
    ] as const) {
      const r = await post(v055.surface, body, false);
      expect(r.status, body).toBe(400);
      expect(r.body, body).toMatchObject({ message_type: 'error', code: 'bad_request', parameter });
    }
    // The scalars a client sends still work.
    for (const streaming of ['false', 'true', '0', '1']) {
      const r = await post(
        v055.surface,
        `{"query":{"text":"westerns"},"prefer":{"streaming":${streaming}},"meta":{"version":0.55}}`,
        false,
      );
      expect(r.status, streaming).toBe(200);
    }
  });
});
