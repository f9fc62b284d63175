/**
 * Two gateway processes on one NATS, as replicas behind an ingress with no sticky sessions: an
 * MCP session made on one is served by the other, and only for the key that made it; a stream
 * cut on one resumes on the other with what it missed and what came after; a legacy-SSE POST
 * reaching the other gateway is answered on the first one's stream; a rate limit and a stream
 * cap count the requests of both. Every service, the gateways too, is its own NATS user with
 * only the permissions its declaration gives.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnService, startDemoSystem, type DemoSystem, type ServiceProcess } from './testing';

const ALICE = 'alice-key-0123456789';
const BOB = 'bob-key-9876543210';
const CAROL = 'carol-key-5555555555';
const DAVE = 'dave-key-7777777777';
const RATE_PER_MINUTE = 30;
const MAX_STREAMS = 3;
const PROTOCOL = '2025-11-25';

let system: DemoSystem;
const gateways: ServiceProcess[] = [];
let A: string;
let B: string;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      s.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function gateway(): Promise<string> {
  const port = await freePort();
  const password = system.natsPasswords?.gateway;
  if (!password) throw new Error('the system runs without NATS users');
  gateways.push(
    await spawnService('gateway', system.natsUrl, {
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ASKBUS_API_KEYS: `alice:${ALICE},bob:${BOB},carol:${CAROL},dave:${DAVE}`,
      ASKBUS_RATE_LIMIT_PER_MINUTE: String(RATE_PER_MINUTE),
      ASKBUS_MAX_STREAMS_PER_CLIENT: String(MAX_STREAMS),
      // As in a deployment: the gateway's own NATS user, with only the permissions it declares.
      NATS_USER: 'gateway',
      NATS_PASSWORD: password,
    }),
  );
  return `http://127.0.0.1:${port}`;
}

beforeAll(async () => {
  // Each ranking call waits 400 ms, so an answer takes long enough to cut its stream.
  system = await startDemoSystem({ rankers: 1, rankDelayMs: 400 }, { natsPermissions: true });
  [A, B] = await Promise.all([gateway(), gateway()]);
}, 180_000);

afterAll(async () => {
  await Promise.all(gateways.map((g) => g.kill()));
  await system?.stop();
});

const auth = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });
const STREAMABLE = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

interface SseEvent {
  id?: string;
  data?: Record<string, unknown>;
}

function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((b) => b.trim())
    .map((block) => {
      const e: SseEvent = {};
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('id:')) e.id = line.slice(3).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trim());
      }
      const text = data.join('\n');
      if (text) e.data = JSON.parse(text) as Record<string, unknown>;
      return e;
    });
}

async function rpc(base: string, key: string, sid: string | undefined, body: unknown): Promise<Response> {
  return fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      ...STREAMABLE,
      ...auth(key),
      'mcp-protocol-version': PROTOCOL,
      ...(sid ? { 'mcp-session-id': sid } : {}),
    },
    body: JSON.stringify(body),
  });
}

async function initialize(base: string, key: string): Promise<string> {
  const res = await rpc(base, key, undefined, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: {
      protocolVersion: PROTOCOL,
      capabilities: { elicitation: {} },
      clientInfo: { name: 'two-gateways', version: '1.0.0' },
    },
  });
  expect(res.status).toBe(200);
  await res.text();
  const sid = res.headers.get('mcp-session-id');
  expect(sid).toBeTruthy();
  const ack = await rpc(base, key, sid!, { jsonrpc: '2.0', method: 'notifications/initialized' });
  expect(ack.status).toBe(202);
  return sid!;
}

describe('an MCP session on either gateway', () => {
  it('is made on one gateway and served by the other, for its own key only', async () => {
    const sid = await initialize(A, ALICE);
    const list = await rpc(B, ALICE, sid, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(list.status).toBe(200);
    const answer = parseSse(await list.text()).find((e) => e.data?.id === 1);
    const tools = (answer?.data?.result as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(tools).toContain('ask');

    // Another client's key does not open it, on either gateway, and cannot end it.
    for (const base of [A, B]) {
      const other = await rpc(base, BOB, sid, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
      expect(other.status).toBe(404);
      const del = await fetch(`${base}/mcp`, {
        method: 'DELETE',
        headers: { ...auth(BOB), 'mcp-session-id': sid, 'mcp-protocol-version': PROTOCOL },
      });
      expect(del.status).toBe(404);
    }

    // Ended on B, it is gone on A too.
    const del = await fetch(`${B}/mcp`, {
      method: 'DELETE',
      headers: { ...auth(ALICE), 'mcp-session-id': sid, 'mcp-protocol-version': PROTOCOL },
    });
    expect(del.status).toBe(200);
    await expect
      .poll(async () => (await rpc(A, ALICE, sid, { jsonrpc: '2.0', id: 3, method: 'tools/list' })).status, {
        timeout: 5_000,
      })
      .toBe(404);
  }, 60_000);

  it('resumes on the second gateway a stream cut on the first, to the end of its answer', async () => {
    const sid = await initialize(A, ALICE);
    const cut = new AbortController();
    const call = await fetch(`${A}/mcp`, {
      method: 'POST',
      signal: cut.signal,
      headers: { ...STREAMABLE, ...auth(ALICE), 'mcp-protocol-version': PROTOCOL, 'mcp-session-id': sid },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: {
          name: 'ask',
          arguments: { query: 'westerns with clint eastwood', site: 'movies' },
          _meta: { progressToken: 'p7' },
        },
      }),
    });
    expect(call.status).toBe(200);
    // Read up to the first event with an id (the priming event), then drop the connection.
    const reader = call.body!.getReader();
    let text = '';
    let first: SseEvent | undefined;
    while (!first) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
      first = parseSse(text.slice(0, text.lastIndexOf('\n\n') + 2)).find((e) => e.id);
    }
    expect(first?.id).toBeTruthy();
    const seenBeforeCut = parseSse(text.slice(0, text.lastIndexOf('\n\n') + 2)).filter((e) => e.data);
    cut.abort();

    const resumed = await fetch(`${B}/mcp`, {
      headers: {
        accept: 'text/event-stream',
        ...auth(ALICE),
        'mcp-session-id': sid,
        'mcp-protocol-version': PROTOCOL,
        'last-event-id': first!.id!,
      },
      signal: AbortSignal.timeout(30_000),
    });
    expect(resumed.status).toBe(200);
    // The stream ends by itself once the answer to request 7 has come.
    const events = parseSse(await resumed.text());
    const answer = events.find((e) => e.data?.id === 7);
    expect(answer?.data?.result).toBeDefined();
    expect(JSON.stringify(answer!.data!.result)).toMatch(/Eastwood|western/i);
    // Nothing twice: what the first gateway sent before the cut is not sent again.
    const ids = events.map((e) => e.id).filter(Boolean);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).not.toContain(first!.id);
    expect(seenBeforeCut.some((e) => e.data?.id === 7)).toBe(false);
  }, 60_000);

  it('relays a legacy-SSE POST that reaches the other gateway to the stream it belongs to', async () => {
    const abort = new AbortController();
    const stream = await fetch(`${A}/mcp/sse`, {
      headers: { accept: 'text/event-stream', ...auth(ALICE) },
      signal: abort.signal,
    });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let text = '';
    const until = async (pattern: RegExp): Promise<string> => {
      while (!pattern.test(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${pattern}: ${text}`);
        text += new TextDecoder().decode(value);
      }
      return text;
    };
    const endpoint = /event: endpoint\ndata: (\S+)/.exec(await until(/event: endpoint\ndata: \S+\n/))![1]!;
    const post = (base: string, key: string, body: unknown): Promise<Response> =>
      fetch(`${base}${endpoint}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth(key) },
        body: JSON.stringify(body),
      });
    const init = await post(B, ALICE, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2024-11-05',
        capabilities: {},
        clientInfo: { name: 'legacy', version: '1' },
      },
    });
    expect(init.status).toBe(202);
    await until(/"id":1/);
    expect((await post(B, BOB, { jsonrpc: '2.0', id: 2, method: 'tools/list' })).status).toBe(404);
    expect((await post(B, ALICE, { jsonrpc: '2.0', id: 3, method: 'tools/list' })).status).toBe(202);
    expect(await until(/"id":3/)).toMatch(/"name":"ask"/);
    abort.abort();
  }, 60_000);
});

describe('limits across gateways', () => {
  it('counts a client’s requests on both gateways against one rate limit', async () => {
    // Start with most of a minute window ahead, so the count is not reset halfway.
    const intoWindow = Date.now() % 60_000;
    if (intoWindow > 45_000) await new Promise((r) => setTimeout(r, 60_500 - intoWindow));
    const statuses: number[] = [];
    const remaining: number[] = [];
    for (let i = 0; i < RATE_PER_MINUTE + 2; i++) {
      const res = await fetch(`${i % 2 === 0 ? A : B}/sites`, { headers: auth(CAROL) });
      await res.text();
      statuses.push(res.status);
      remaining.push(Number(res.headers.get('ratelimit-remaining')));
    }
    expect(statuses.slice(0, RATE_PER_MINUTE).every((s) => s === 200)).toBe(true);
    expect(statuses.slice(RATE_PER_MINUTE)).toEqual([429, 429]);
    // Each answer's remaining count is the window's, whichever gateway gave it.
    expect(remaining.slice(0, RATE_PER_MINUTE)).toEqual(
      Array.from({ length: RATE_PER_MINUTE }, (_, i) => RATE_PER_MINUTE - 1 - i),
    );
    // Another client is not affected.
    expect((await fetch(`${B}/sites`, { headers: auth(BOB) })).status).toBe(200);
  }, 60_000);

  it('caps a client’s open streams on both gateways together', async () => {
    const hangUp = new AbortController();
    const open: Response[] = [];
    for (let i = 0; i < MAX_STREAMS; i++) {
      const res = await fetch(`${A}/ask?query=westerns&site=movies&streaming=true`, {
        headers: { ...auth(DAVE), accept: 'text/event-stream' },
        signal: hangUp.signal,
      });
      expect(res.status).toBe(200);
      open.push(res);
    }
    const refused = await fetch(`${B}/sites`, { headers: auth(DAVE) });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ code: 'too_many_streams' });
    hangUp.abort();
    await expect
      .poll(async () => (await fetch(`${B}/sites`, { headers: auth(DAVE) })).status, { timeout: 10_000 })
      .toBe(200);
  }, 60_000);
});
