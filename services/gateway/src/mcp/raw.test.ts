import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { ClientOptions } from 'ws';
import { callAfter, mcpWorld } from './testing';
import type { McpWorld } from './testing';

// Raw HTTP and WebSocket frames: bad input, NLWeb's plain JSON-RPC POST, versions, sessions,
// resumability, Origin, auth, sub-protocols, keep-alive and cancellation.
let world: McpWorld;
let base: string;
let wsUrl: string;

beforeAll(async () => {
  world = await mcpWorld();
  ({ base, ws: wsUrl } = await world.gateway({ mcp: { allowedOrigins: ['https://agent.example'] } }));
});

afterAll(async () => {
  await world?.stop();
});

/** SSE events' data as JSON; priming events (empty data) are dropped. */
function parseSse(text: string): { data: unknown }[] {
  return text.split('\n\n').flatMap((block) => {
    const data = block
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trim())
      .join('\n');
    return data ? [{ data: JSON.parse(data) as unknown }] : [];
  });
}

const JSON_ONLY = { 'content-type': 'application/json', accept: 'application/json' };
const STREAMABLE = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

interface Rpc {
  jsonrpc: '2.0';
  id?: number | string | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

const init = (id: number, protocolVersion = '2025-06-18') => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

function post(body: unknown, headers: Record<string, string> = JSON_ONLY, url = base): Promise<Response> {
  return fetch(`${url}/mcp`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function rpc(body: unknown, headers: Record<string, string> = JSON_ONLY): Promise<Rpc> {
  const res = await post(body, headers);
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  return (await res.json()) as Rpc;
}

/** Opens a session over Streamable HTTP; returns its id. */
async function session(protocolVersion = '2025-06-18'): Promise<string> {
  const res = await post(init(1, protocolVersion), STREAMABLE);
  expect(res.status).toBe(200);
  const sid = res.headers.get('mcp-session-id');
  expect(sid).toBeTruthy();
  await res.text();
  const sessionHeaders = { ...STREAMABLE, 'mcp-session-id': sid!, 'mcp-protocol-version': protocolVersion };
  const ack = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sessionHeaders);
  expect(ack.status).toBe(202);
  return sid!;
}

describe('JSON-RPC over HTTP POST', () => {
  it('malformed JSON gets -32700', async () => {
    const res = await post('{"jsonrpc": "2.0", "id": 1, "method": ', JSON_ONLY);
    expect(res.status).toBe(400);
    const body = (await res.json()) as Rpc;
    expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
  });

  it('an empty body gets -32600', async () => {
    const res = await post('', JSON_ONLY);
    expect(res.status).toBe(400);
    expect(((await res.json()) as Rpc).error?.code).toBe(-32600);
  });

  it("NLWeb's plain POST: initialize 2024-11-05 answered as one JSON body, no session", async () => {
    const res = await post(init(1, '2024-11-05'));
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    const body = (await res.json()) as Rpc;
    expect(body.result).toMatchObject({
      protocolVersion: '2024-11-05',
      serverInfo: { name: 'askbus' },
      capabilities: { tools: {} },
    });
  });

  it.each(['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'])(
    'negotiates protocol version %s',
    async (v) => {
      expect((await rpc(init(7, v))).result?.protocolVersion).toBe(v);
      const res = await post(init(8, v), STREAMABLE);
      expect(res.headers.get('content-type')).toBe('text/event-stream');
      const events = parseSse(await res.text());
      expect(events.map((e) => (e.data as Rpc).result?.protocolVersion)).toContain(v);
    },
  );

  it('an unknown protocol version gets the latest one', async () => {
    expect((await rpc(init(9, '1999-01-01'))).result?.protocolVersion).toBe('2025-11-25');
  });

  it('tools/list and tools/call without a session, also without an Accept header', async () => {
    const list = await rpc({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect((list.result?.tools as { name: string }[]).map((t) => t.name)).toEqual([
      'ask',
      'list_sites',
      'who',
      'details',
      'compare',
    ]);
    const call = await rpc(
      {
        jsonrpc: '2.0',
        id: 'a',
        method: 'tools/call',
        params: { name: 'ask', arguments: { query: 'plain' } },
      },
      { 'content-type': 'application/json' },
    );
    expect(call.id).toBe('a');
    expect((call.result?.structuredContent as { results: unknown[] }).results).toHaveLength(3);
  });

  it('unknown methods get -32601, bad params -32602', async () => {
    expect((await rpc({ jsonrpc: '2.0', id: 3, method: 'no/such' })).error?.code).toBe(-32601);
    expect((await rpc({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: {} })).error?.code).toBe(-32602);
    expect(
      (await rpc({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'ask' } })).error,
    ).toMatchObject({
      code: -32602,
      message: expect.stringContaining('query'),
    });
    const level = await rpc({ jsonrpc: '2.0', id: 6, method: 'logging/setLevel', params: { level: 'loud' } });
    expect(level.error?.code).toBe(-32602);
  });

  it('notifications (NLWeb sends "initialized") get 202 and no body', async () => {
    const res = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(res.status).toBe(202);
  });

  it('a plain-POST client that hangs up cancels its query', async () => {
    const from = world.router.calls.length;
    const abort = new AbortController();
    const pending = fetch(`${base}/mcp`, {
      method: 'POST',
      headers: JSON_ONLY,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'ask', arguments: { query: 'slow' } },
      }),
      signal: abort.signal,
    });
    await expect.poll(() => callAfter(world.router, from, 'slow'), { timeout: 3_000 }).toBeDefined();
    abort.abort();
    await expect(pending).rejects.toThrow();
    await expect
      .poll(() => world.router.aborted, { timeout: 3_000 })
      .toContain(callAfter(world.router, from, 'slow'));
  });
});

describe('Streamable HTTP sessions', () => {
  it('a session answers by id, refuses unknown ids, and ends with DELETE', async () => {
    const sid = await session();
    const h = { ...STREAMABLE, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    const res = await post(
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_sites', arguments: {} } },
      h,
    );
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const [event] = parseSse(await res.text());
    expect((event?.data as Rpc).result?.structuredContent).toMatchObject({
      sites: [{ name: 'movies' }, { name: 'cars' }],
    });

    expect(
      (await post({ jsonrpc: '2.0', id: 3, method: 'tools/list' }, { ...h, 'mcp-session-id': 'nope' }))
        .status,
    ).toBe(404);
    const badVersion = await post(
      { jsonrpc: '2.0', id: 3, method: 'tools/list' },
      { ...h, 'mcp-protocol-version': '1999-01-01' },
    );
    expect(badVersion.status).toBe(400);

    const del = await fetch(`${base}/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': sid } });
    expect(del.status).toBe(200);
    expect((await post({ jsonrpc: '2.0', id: 4, method: 'tools/list' }, h)).status).toBe(404);
  });

  it('ending a session (DELETE) cancels its running queries', async () => {
    const sid = await session();
    const h = { ...STREAMABLE, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    const from = world.router.calls.length;
    const call = { name: 'ask', arguments: { query: 'slow' } };
    const pending = post({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: call }, h).then((r) =>
      r.text(),
    );
    await expect.poll(() => callAfter(world.router, from, 'slow'), { timeout: 3_000 }).toBeDefined();
    const del = await fetch(`${base}/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': sid } });
    expect(del.status).toBe(200);
    await expect
      .poll(() => world.router.aborted, { timeout: 3_000 })
      .toContain(callAfter(world.router, from, 'slow'));
    await pending;
  });

  it('GET without a session is 405', async () => {
    const res = await fetch(`${base}/mcp`, { headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(405);
  });

  it('resumes a stream from Last-Event-ID (EventStore)', async () => {
    const sid = await session('2025-11-25');
    const h = { ...STREAMABLE, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
    const res = await post(
      {
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'ask', arguments: { query: 'resume me' } },
      },
      h,
    );
    const text = await res.text();
    const ids = [...text.matchAll(/^id: (.+)$/gm)].map((m) => m[1]!);
    expect(ids.length).toBeGreaterThanOrEqual(2);
    // Reconnect as if the stream broke right after the priming event.
    const abort = new AbortController();
    const replay = await fetch(`${base}/mcp`, {
      headers: {
        accept: 'text/event-stream',
        'mcp-session-id': sid,
        'mcp-protocol-version': '2025-11-25',
        'last-event-id': ids[0]!,
      },
      signal: abort.signal,
    });
    expect(replay.status).toBe(200);
    const reader = replay.body!.getReader();
    let got = '';
    while (!got.includes('"id":9')) {
      const { value, done } = await reader.read();
      if (done) break;
      got += new TextDecoder().decode(value);
    }
    abort.abort();
    const replayed = parseSse(got).map((e) => e.data as Rpc);
    expect(replayed.at(-1)).toMatchObject({ id: 9, result: { structuredContent: { query: 'resume me' } } });
  });
});

describe('Origin and auth', () => {
  it('takes the token from ASKBUS_MCP_TOKEN when no option is given', async () => {
    process.env.ASKBUS_MCP_TOKEN = 'from-env';
    try {
      const { base: url } = await world.gateway();
      const listed = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
      expect((await post(listed, JSON_ONLY, url)).status).toBe(401);
      expect((await post(listed, { ...JSON_ONLY, authorization: 'Bearer from-env' }, url)).status).toBe(200);
    } finally {
      delete process.env.ASKBUS_MCP_TOKEN;
    }
  });

  it('answers CORS preflights and exposes Mcp-Session-Id', async () => {
    const pre = await fetch(`${base}/mcp`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:5173',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, mcp-session-id',
      },
    });
    expect(pre.status).toBeLessThan(300);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    const res = await post(init(1), { ...STREAMABLE, origin: 'http://localhost:5173' });
    expect(res.headers.get('access-control-expose-headers')).toMatch(/Mcp-Session-Id/);
    await res.text();
  });

  it('refuses foreign Origins with 403, allows none, localhost and configured ones', async () => {
    const listed = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    expect((await post(listed, { ...JSON_ONLY, origin: 'https://evil.example' })).status).toBe(403);
    expect((await post(listed, { ...JSON_ONLY, origin: 'null' })).status).toBe(403);
    expect((await post(listed, { ...JSON_ONLY, origin: 'http://localhost:3000' })).status).toBe(200);
    expect((await post(listed, { ...JSON_ONLY, origin: 'https://agent.example' })).status).toBe(200);
    expect((await post(listed)).status).toBe(200);
    const ws = await open(wsUrl, ['mcp'], { headers: { origin: 'https://evil.example' } });
    expect(ws).toMatchObject({ status: 403 });
  });

  it('with a token: 401 without it, at the HTTP request and at the WebSocket handshake', async () => {
    const { base: url, ws } = await world.gateway({ mcpAuthToken: 's3cret' });
    const listed = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const none = await post(listed, JSON_ONLY, url);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await post(listed, { ...JSON_ONLY, authorization: 'Bearer wrong' }, url)).status).toBe(401);
    expect((await post(listed, { ...JSON_ONLY, authorization: 'Bearer s3cret' }, url)).status).toBe(200);

    expect(await open(ws, ['mcp'])).toMatchObject({ status: 401 });
    expect(await open(ws, ['mcp'], { headers: { authorization: 'Bearer nope' } })).toMatchObject({
      status: 401,
    });
    const ok = await open(ws, ['mcp'], { headers: { authorization: 'Bearer s3cret' } });
    expect(ok).toBeInstanceOf(WebSocket);
    (ok as WebSocket).close();
  });
});

/** Opens a socket; resolves to it, or to the HTTP status of a refused handshake. */
function open(
  url: string,
  protocols?: string[],
  opts: ClientOptions = {},
): Promise<WebSocket | { status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols, opts);
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.once('error', reject);
  });
}

function nextFrame(ws: WebSocket): Promise<Rpc> {
  return new Promise((resolve) => ws.once('message', (data) => resolve(JSON.parse(String(data)) as Rpc)));
}

async function socket(protocols = ['mcp']): Promise<WebSocket> {
  const ws = await open(wsUrl, protocols);
  if (!(ws instanceof WebSocket)) throw new Error(`refused: ${ws.status}`);
  return ws;
}

describe('WebSocket at /mcp/ws', () => {
  it('negotiates the sub-protocol and echoes it', async () => {
    for (const [offer, chosen] of [
      [['mcp'], 'mcp'],
      [['mcp-v1'], 'mcp-v1'],
      [['chat', 'mcp-v1', 'mcp'], 'mcp-v1'],
    ] as const) {
      const ws = await socket([...offer]);
      expect(ws.protocol).toBe(chosen);
      ws.close();
    }
    const plain = await open(wsUrl);
    expect(plain).toBeInstanceOf(WebSocket);
    (plain as WebSocket).close();
  });

  it('refuses a handshake that offers only unknown sub-protocols', async () => {
    const refused = await open(wsUrl, ['graphql-ws', 'chat']);
    expect(refused).toMatchObject({ status: 400 });
    expect((refused as { body: string }).body).toContain('mcp, mcp-v1');
  });

  it('refuses upgrades on other paths', async () => {
    expect(await open(wsUrl.replace('/mcp/ws', '/nope'), ['mcp'])).toMatchObject({ status: 404 });
  });

  it('negotiates permessage-deflate', async () => {
    const ws = await socket();
    expect(ws.extensions).toContain('permessage-deflate');
    ws.close();
  });

  it('answers malformed frames with -32700, unknown methods with -32601', async () => {
    const ws = await socket();
    ws.send('{not json');
    expect((await nextFrame(ws)).error?.code).toBe(-32700);
    ws.send(JSON.stringify({ hello: 'world' }));
    expect((await nextFrame(ws)).error?.code).toBe(-32600);
    ws.send(JSON.stringify(init(1, '2024-11-05')));
    expect((await nextFrame(ws)).result?.protocolVersion).toBe('2024-11-05');
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'no/such' }));
    expect(await nextFrame(ws)).toMatchObject({ id: 2, error: { code: -32601 } });
    ws.close();
  });

  it('notifications/cancelled stops the query in the router and sends no answer', async () => {
    const ws = await socket();
    ws.send(JSON.stringify(init(1)));
    await nextFrame(ws);
    const frames: Rpc[] = [];
    ws.on('message', (d) => frames.push(JSON.parse(String(d)) as Rpc));
    const from = world.router.calls.length;
    ws.send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'ask', arguments: { query: 'slow' } },
      }),
    );
    await expect.poll(() => callAfter(world.router, from, 'slow'), { timeout: 3_000 }).toBeDefined();
    ws.send(
      JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 7, reason: 'enough' },
      }),
    );
    await expect
      .poll(() => world.router.aborted, { timeout: 3_000 })
      .toContain(callAfter(world.router, from, 'slow'));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'ping' }));
    await expect.poll(() => frames.some((f) => f.id === 8), { timeout: 2_000 }).toBe(true);
    expect(frames.some((f) => f.id === 7)).toBe(false);
    ws.close();
  });
});

describe('WebSocket keep-alive', () => {
  it('pings, and drops a client that stops answering pongs', async () => {
    const { ws: url } = await world.gateway({ mcp: { wsPingMs: 50 } });
    const live = (await open(url, ['mcp'])) as WebSocket;
    const pinged = new Promise<void>((resolve) => live.once('ping', () => resolve()));
    await pinged;
    const mute = (await open(url, ['mcp'], { autoPong: false })) as WebSocket;
    const closed = new Promise<number>((resolve) => mute.once('close', (code) => resolve(code)));
    expect(await closed).toBe(1006);
    expect(live.readyState).toBe(WebSocket.OPEN);
    live.close();
  });
});
