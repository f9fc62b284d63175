/**
 * Bounded JSON on every surface (body-limits.ts, json-nesting.ts): the nesting scanner against
 * JSON.parse's own idea of depth, each surface's refusal of a too-deep and a too-large body in
 * its protocol's error form, and /health answering while bursts of 10 MB `[[[…]]]` bodies hit
 * every surface at once. Real NATS, real HTTP, real WebSockets.
 */
import { request as httpRequest } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import WebSocket from 'ws';
import { BODY_LIMITS } from './body-limits';
import { JsonNestingScanner, jsonNestingExceeds } from './json-nesting';
import { SEED, startWorld } from './hardening/world';
import type { World } from './hardening/world';

const DEPTH = BODY_LIMITS.jsonDepth;
const deepArray = (n: number): string => '['.repeat(n) + ']'.repeat(n);

/** How deep a parsed JSON value nests: `[]` and `{}` are 1, a scalar 0. */
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

describe('the nesting scanner', () => {
  it('counts brackets outside strings only, escapes included, across any split', () => {
    expect(jsonNestingExceeds('{"a":"[[[[[[","b":"\\"[[["}', 1)).toBe(false);
    expect(jsonNestingExceeds('{"a":[{"b":[]}]}', 3)).toBe(true);
    expect(jsonNestingExceeds('{"a":[{"b":[]}]}', 4)).toBe(false);
    expect(jsonNestingExceeds('"\\\\"[[', 1)).toBe(true); // the string ends after an escaped backslash
    expect(jsonNestingExceeds(Buffer.from('["é[",["😀"]]'), 1)).toBe(true);
    const s = new JsonNestingScanner(2);
    expect(s.push('["\\')).toBe(true);
    expect(s.push('"[",')).toBe(true); // still inside the string: the escaped quote did not close it
    expect(s.push('[[')).toBe(false);
    expect(s.push('')).toBe(false); // once exceeded, for good
  });

  it('property: a JSON text exceeds a depth exactly when its value nests deeper, whatever the pieces', () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 10 }),
        fc.integer({ min: 0, max: 12 }),
        fc.array(fc.nat(), { maxLength: 5 }),
        (value, max, cuts) => {
          const text = JSON.stringify(value);
          const bytes = Buffer.from(text);
          const expected = depthOf(value) > max;
          expect(jsonNestingExceeds(text, max)).toBe(expected);
          const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          const scanner = new JsonNestingScanner(max);
          let ok = true;
          let at = 0;
          for (const p of [...points, bytes.length]) {
            ok = scanner.push(bytes.subarray(at, p)) && ok;
            at = p;
          }
          expect(!ok).toBe(expected);
        },
      ),
      { seed: SEED, numRuns: 500 },
    );
  });

  it('measure: scanning is linear and far cheaper than JSON.parse', () => {
    const levels = 4_800_000; // 9.6 MB, the body of the report (JSON.parse: ~1 µs a level)
    const deep = Buffer.from(deepArray(levels));
    const flat = Buffer.from(
      JSON.stringify(Array.from({ length: 200_000 }, (_, i) => ({ i, s: `item ${i}` }))),
    );
    const time = (f: () => void): number => {
      const t = performance.now();
      f();
      return performance.now() - t;
    };
    const refuse = time(() => expect(jsonNestingExceeds(deep, DEPTH)).toBe(true));
    const scanFlat = time(() => expect(jsonNestingExceeds(flat, DEPTH)).toBe(false));
    const scanDeepWhole = time(() => expect(jsonNestingExceeds(deep, levels)).toBe(false));
    const parseFlat = time(() => JSON.parse(flat.toString('utf8')));
    const parseDeep = time(() => JSON.parse(deep.toString('utf8')));
    console.log(
      `scan: refuse 9.6 MB [[[…]]] ${refuse.toFixed(2)} ms; whole 9.6 MB deep ${scanDeepWhole.toFixed(0)} ms; ` +
        `${(flat.length / 1e6).toFixed(1)} MB flat ${scanFlat.toFixed(0)} ms | JSON.parse: flat ${parseFlat.toFixed(0)} ms, ` +
        `9.6 MB deep ${parseDeep.toFixed(0)} ms`,
    );
    // The refusal stops at the first bytes past the limit; no timing is asserted beyond that.
    expect(refuse).toBeLessThan(parseDeep);
  });
});

/** A request over real HTTP, without fetch's checks (chunked or sized bodies, early answers). */
function send(
  base: string,
  opts: {
    method?: string;
    path: string;
    body?: Buffer | string;
    headers?: Record<string, string>;
    chunked?: boolean;
  },
): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const body = opts.body === undefined ? undefined : Buffer.from(opts.body);
    const req = httpRequest(`${base}${opts.path}`, {
      method: opts.method ?? 'POST',
      headers: {
        'content-type': 'application/json',
        ...(body
          ? opts.chunked
            ? { 'transfer-encoding': 'chunked' }
            : { 'content-length': String(body.length) }
          : {}),
        ...opts.headers,
      },
      agent: false,
    });
    req.on('response', (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          type: String(res.headers['content-type'] ?? ''),
          body: Buffer.concat(parts).toString('utf8'),
        }),
      );
    });
    // The server may answer and close before the whole body is written: the answer counts.
    req.on('error', (err) => setTimeout(() => reject(err), 1_000));
    if (body) {
      const step = 256 * 1024;
      for (let at = 0; at < body.length; at += step) req.write(body.subarray(at, at + step));
    }
    req.end();
  });
}

const json = (text: string): Record<string, unknown> => JSON.parse(text) as Record<string, unknown>;

describe('every surface refuses too-deep and too-large JSON in its own error form', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({}, true);
  });
  afterAll(async () => {
    await world?.stop();
  });

  const tooDeep = deepArray(DEPTH + 1);
  const tooLarge = (n = BODY_LIMITS.restBytes + 1024): string =>
    JSON.stringify({ query: 'x', pad: 'y'.repeat(n) });

  it('REST /ask: NLWeb errors, a 0.5 body gets a 0.5 Failure; form fields and query parameters too', async () => {
    const base = world.base;
    let r = await send(base, { path: '/ask', body: `{"query":"x","prev":${tooDeep}}` });
    expect(r.status).toBe(400);
    expect(json(r.body)).toMatchObject({ message_type: 'error', code: 'bad_request', parameter: 'body' });
    expect(json(r.body).error).toMatch(/deeper than 64 levels/);

    r = await send(base, { path: '/ask', body: `{"query":{"text":"x"},"return_response":{"x":${tooDeep}}}` });
    expect(r.status).toBe(400);
    expect(json(r.body)).toMatchObject({ _meta: { error: { code: 'INVALID_REQUEST' } } });

    r = await send(base, { path: '/ask', body: tooLarge() });
    expect(r.status).toBe(413);
    expect(json(r.body)).toMatchObject({ message_type: 'error', parameter: 'body' });
    expect(json(r.body).error).toMatch(/larger than 1 MiB/);

    r = await send(base, {
      path: '/ask',
      body: `query=x&prev=${encodeURIComponent(tooDeep)}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(r.status).toBe(400);
    expect(json(r.body).error).toMatch(/form field prev nests JSON deeper/);

    r = await send(base, { method: 'GET', path: `/ask?query=x&prev=${encodeURIComponent(tooDeep)}` });
    expect(r.status).toBe(400);
    expect(json(r.body).error).toMatch(/query parameter prev nests JSON deeper/);

    // Just at the limit is no refusal for depth (the dialect then judges the value).
    r = await send(base, { path: '/ask', body: `{"query":"x","pad":${deepArray(DEPTH - 1)}}` });
    expect(r.body).not.toMatch(/deeper than/);
  });

  it('POST /who: a 0.5 Failure', async () => {
    const r = await send(world.base, { path: '/who', body: `{"query":{"text":${tooDeep}}}` });
    expect(r.status).toBe(400);
    expect(json(r.body)).toMatchObject({
      _meta: { error: { code: 'INVALID_REQUEST', message: expect.stringMatching(/deeper/) } },
    });
  });

  it('MCP /mcp POST and /mcp/ws frames: JSON-RPC errors', async () => {
    let r = await send(world.base, { path: '/mcp', body: tooDeep });
    expect(r.status).toBe(400);
    expect(json(r.body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    r = await send(world.base, { path: '/mcp', body: tooLarge(BODY_LIMITS.mcpBytes) });
    expect(r.status).toBe(413);
    expect(json(r.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });

    const ws = new WebSocket(`${world.base.replace('http', 'ws')}/mcp/ws`, 'mcp');
    const frames: Record<string, unknown>[] = [];
    await new Promise<void>((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const got = new Promise<void>((resolve) =>
      ws.on('message', (d: Buffer) => {
        frames.push(json(d.toString('utf8')));
        if (frames.length === 2) resolve();
      }),
    );
    ws.send(deepArray(200_000));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'after', method: 'ping' }));
    await got;
    expect(frames[0]).toMatchObject({ id: null, error: { code: -32600 } });
    expect(String((frames[0]!.error as { message: string }).message)).toMatch(/deeper than 64/);
    expect(frames[1]).toEqual({ jsonrpc: '2.0', id: 'after', result: {} });
    ws.terminate();
  });

  it('A2A /a2a (JSON-RPC) and /a2a/rest (google.rpc.Status); the limit is 1 MiB', async () => {
    let r = await send(world.base, {
      path: '/a2a',
      body: `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":${tooDeep}}`,
    });
    expect(r.status).toBe(400);
    expect(json(r.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
    r = await send(world.base, { path: '/a2a', body: tooLarge(BODY_LIMITS.a2aBytes) });
    expect(r.status).toBe(413);
    expect(json(r.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });

    const v1 = { 'a2a-version': '1.0' };
    r = await send(world.base, { path: '/a2a/rest/message:send', body: tooDeep, headers: v1 });
    expect(r.status).toBe(400);
    expect(r.type).toMatch(/^application\/a2a\+json/);
    expect(json(r.body)).toMatchObject({
      error: { code: 400, status: expect.any(String), message: expect.stringMatching(/deeper/) },
    });
    r = await send(world.base, {
      path: '/a2a/rest/message:send',
      body: tooLarge(BODY_LIMITS.a2aBytes),
      headers: v1,
    });
    expect(r.status).toBe(413);
    expect(json(r.body)).toMatchObject({ error: { code: 413 } });
  });

  it('A2A GETs with a body (3 MB, 100 000 deep) are 400s, not 500s; the binding keeps answering', async () => {
    const v1 = { 'a2a-version': '1.0' };
    for (const body of ['x'.repeat(3_000_000), deepArray(100_000)]) {
      for (const chunked of [false, true]) {
        const r = await send(world.base, {
          method: 'GET',
          path: '/a2a/rest/v1/tasks',
          body,
          headers: v1,
          chunked,
        });
        expect(r.status, `${body.length} bytes, chunked ${chunked}`).toBe(400);
        expect(json(r.body)).toMatchObject({ error: { code: 400, message: 'a GET request takes no body' } });
      }
    }
    const after = await send(world.base, { method: 'GET', path: '/a2a/rest/v1/tasks', headers: v1 });
    expect(after.status).toBeLessThan(500);
  });

  it('the chat API: /chat/ws frames and /chat/sse?message=', async () => {
    const r = await send(world.base, {
      method: 'GET',
      path: `/chat/sse?message=${encodeURIComponent(tooDeep)}`,
    });
    expect(r.status).toBe(400);
    const ws = new WebSocket(`${world.base.replace('http', 'ws')}/chat/ws`);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const frame = new Promise<Record<string, unknown>>((resolve) =>
      ws.on('message', (d: Buffer) => {
        const f = json(d.toString('utf8'));
        if (f.type === 'error') resolve(f);
      }),
    );
    ws.send(deepArray(400_000));
    expect(await frame).toMatchObject({
      type: 'error',
      error: 'invalid_json',
      message: expect.stringMatching(/deeper/),
    });
    ws.terminate();
  });
});

/**
 * The clients of a burst, in a worker thread: building and writing 24 × 10 MB must not run on
 * the gateway's event loop, which is what /health measures. Every other request goes chunked.
 */
const BURST_CLIENT = `
const { workerData, parentPort } = require('node:worker_threads');
const http = require('node:http');
const { base, bodyBytes, count } = workerData;
const surfaces = [
  ['/a2a', {}],
  ['/a2a/rest/message:send', { 'a2a-version': '1.0' }],
  ['/mcp', { accept: 'application/json, text/event-stream' }],
  ['/ask', {}],
  ['/who', {}],
  ['/ask', { 'content-type': 'text/plain' }],
];
const body = Buffer.from('['.repeat(bodyBytes / 2) + ']'.repeat(bodyBytes / 2));
const one = (i) => new Promise((resolve) => {
  const [path, extra] = surfaces[i % surfaces.length];
  const framing = i % 2 ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(body.length) };
  const req = http.request(base + path, {
    method: 'POST', agent: false, headers: { 'content-type': 'application/json', ...framing, ...extra },
  });
  req.on('response', (res) => {
    const parts = [];
    res.on('data', (c) => parts.push(c));
    res.on('end', () => resolve({ path, status: res.statusCode, body: Buffer.concat(parts).toString() }));
  });
  req.on('error', (err) => setTimeout(() => resolve({ path, status: 0, body: String(err) }), 1000));
  for (let at = 0; at < body.length; at += 262144) req.write(body.subarray(at, at + 262144));
  req.end();
});
Promise.all(Array.from({ length: count }, (_, i) => one(i))).then((r) => parentPort.postMessage(r));
`;

function burstFromWorker(
  base: string,
  bodyBytes: number,
  count: number,
): Promise<{ path: string; status: number; body: string }[]> {
  const worker = new Worker(BURST_CLIENT, { eval: true, workerData: { base, bodyBytes, count } });
  return new Promise((resolve, reject) => {
    worker.once('message', (m: { path: string; status: number; body: string }[]) => {
      resolve(m);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

describe('a burst of 10 MB [[[…]]] bodies on every surface', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({}, true);
  });
  afterAll(async () => {
    await world?.stop();
  });

  /** Probes /health every 10 ms until `done` settles; the slowest answer and how many there were. */
  async function probeHealth(done: Promise<unknown>): Promise<{ maxMs: number; probes: number }> {
    let finished = false;
    void done.finally(() => (finished = true));
    let maxMs = 0;
    let probes = 0;
    while (!finished) {
      const t = performance.now();
      const r = await send(world.base, { method: 'GET', path: '/health' });
      expect(r.status).toBe(200);
      maxMs = Math.max(maxMs, performance.now() - t);
      probes++;
      await new Promise((r) => setTimeout(r, 10));
    }
    return { maxMs, probes };
  }

  async function burst(bodyBytes: number): Promise<void> {
    const started = performance.now();
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    const all = burstFromWorker(world.base, bodyBytes, 24);
    const [answers, health] = await Promise.all([all, probeHealth(all)]);
    loop.disable();
    const tookMs = performance.now() - started;
    // Over the size limit the gateway answers 413 and closes the connection (Fastify: the client
    // may send more); a Node client still writing then sees EPIPE or a reset, not the answer.
    const overLimit = bodyBytes > BODY_LIMITS.a2aBytes;
    const reset = answers.filter((a) => a.status === 0);
    for (const a of reset) expect(overLimit, `${a.path}: ${a.body}`).toBe(true);
    for (const a of reset) expect(a.body).toMatch(/EPIPE|ECONNRESET/);
    for (const a of answers.filter((x) => x.status !== 0)) {
      expect([400, 413], `${a.path}: ${a.body.slice(0, 200)}`).toContain(a.status);
      expect(() => JSON.parse(a.body) as unknown).not.toThrow();
    }
    console.log(
      `burst of 24 × ${(bodyBytes / 1e6).toFixed(1)} MB [[[…]]]: all refused in ${tookMs.toFixed(0)} ms ` +
        `(${answers.length - reset.length} answered 400/413, ${reset.length} saw the connection closed); ` +
        `/health answered ${health.probes}× meanwhile, slowest ${health.maxMs.toFixed(1)} ms; ` +
        `the gateway's event loop was held up at most ${(loop.max / 1e6).toFixed(1)} ms (p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms)`,
    );
    // The measured figure is printed above; the bound is loose so a busy 2-core machine passes.
    expect(health.maxMs).toBeLessThan(1_000);
  }

  it('10 MB bodies, sized and chunked: every one refused, /health keeps answering', async () => {
    // For comparison: how slow /health is on this machine with nothing else going on.
    const idle = await probeHealth(new Promise((r) => setTimeout(r, 500)));
    console.log(`idle gateway: /health answered ${idle.probes}×, slowest ${idle.maxMs.toFixed(1)} ms`);
    await burst(10_000_000);
  });

  it('bodies just under the size limits: refused by depth, never parsed', async () => {
    await burst(BODY_LIMITS.a2aBytes - 2);
  });
});
