import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { ClientOptions } from 'ws';
import { Registry } from 'prom-client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { TaskState } from '@a2a-js/sdk';
import { mcpWorld } from './mcp/testing';
import type { McpWorld } from './mcp/testing';
import { asTask, clientFor, sendRequest, userMessage } from './a2a/testing';
import { parseSse } from './testing';

// The access layer against real gateways on a real NATS (fake router, retriever and search):
// keys on every surface, refusals in each protocol's form, per-client rate limits, stream caps.

const ALICE = 'alice-key-0123456789';
const BOB = 'bob-key-9876543210';
const KEYS = [
  { client: 'alice', key: ALICE },
  { client: 'bob', key: BOB },
];

let world: McpWorld;
/** Keys, no limits; its log lines are kept in `logLines`. */
let keyed: { base: string; ws: string };
const logLines: string[] = [];

beforeAll(async () => {
  world = await mcpWorld();
  keyed = await world.gateway({
    auth: { keys: KEYS },
    metrics: new Registry(),
    logger: { level: 'info', stream: { write: (line: string) => void logLines.push(line) } },
  });
});

afterAll(async () => {
  await world?.stop();
});

const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });
const apiKey = (key: string): Record<string, string> => ({ 'x-api-key': key });

interface Call {
  method?: 'GET' | 'POST';
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
}

async function call(base: string, c: Call, auth: Record<string, string> = {}) {
  const res = await fetch(`${base}${c.path}`, {
    method: c.method ?? 'GET',
    headers: {
      ...(c.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...c.headers,
      ...auth,
    },
    ...(c.body !== undefined ? { body: JSON.stringify(c.body) } : {}),
  });
  const text = await res.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Opens a socket; resolves to it, or to the HTTP status, headers and body of a refused handshake. */
function openWs(
  url: string,
  opts: ClientOptions = {},
): Promise<WebSocket | { status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, ['mcp'], opts);
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    ws.once('error', reject);
  });
}

const v05Ask = { query: { text: 'space movies' }, return_response: { streaming: false } };
const v05Who = { query: 'fast cars', streaming: false };

/** Every REST call of the gateway, with the form its refusal takes. */
const REST_CALLS: (Call & { form: 'rest' | 'v05' })[] = [
  { path: '/ask?query=space+movies&streaming=false', form: 'rest' },
  { path: '/ask?query=space+movies', headers: { accept: 'text/event-stream' }, form: 'rest' },
  { method: 'POST', path: '/ask', body: { query: 'space movies', streaming: false }, form: 'rest' },
  { method: 'POST', path: '/ask', body: v05Ask, form: 'v05' },
  { path: '/sites', form: 'rest' },
  { path: '/who?query=cars', form: 'rest' },
  { method: 'POST', path: '/who', body: v05Who, form: 'v05' },
  { path: '/metrics', form: 'rest' },
];

describe('keys on every surface', () => {
  it('leaves the probes, the chat page, the public card and CORS preflights open', async () => {
    for (const path of ['/health', '/ready', '/', '/chat/app.js', '/chat/style.css']) {
      expect([path, (await call(keyed.base, { path })).status]).toEqual([path, 200]);
    }
    const card = await call(keyed.base, {
      path: '/.well-known/agent-card.json',
      headers: { 'a2a-version': '1.0' },
    });
    expect(card.status).toBe(200);
    // The card declares the bearer scheme (A2A v1.0) and the extended card behind it.
    expect(card.json).toMatchObject({
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
      securityRequirements: [{ schemes: { bearer: {} } }],
      capabilities: { extendedAgentCard: true },
    });
    for (const path of ['/ask', '/mcp', '/a2a']) {
      const pre = await fetch(`${keyed.base}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin: 'http://localhost:5173',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, x-api-key, content-type',
        },
      });
      expect([path, pre.status]).toEqual([path, 204]);
      expect(pre.headers.get('access-control-allow-headers')).toMatch(/authorization/i);
    }
  });

  it('REST /ask (every dialect), /sites, /who and /metrics: 401 without or with a wrong key, answers with either header', async () => {
    for (const c of REST_CALLS) {
      const label = `${c.method ?? 'GET'} ${c.path} ${c.form}`;
      const none = await call(keyed.base, c);
      expect([label, none.status]).toEqual([label, 401]);
      expect(none.headers.get('www-authenticate')).toBe('Bearer realm="askbus"');
      if (c.form === 'rest') {
        expect(none.json).toMatchObject({ message_type: 'error', code: 'unauthorized', status: 401 });
      } else {
        expect(none.json).toMatchObject({
          _meta: { version: '0.5', error: { code: 'UNAUTHORIZED' } },
          content: [{ type: 'text' }],
        });
      }
      const wrong = await call(keyed.base, c, bearer('not-a-valid-key-000'));
      expect([label, wrong.status]).toEqual([label, 401]);
      expect(wrong.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
      // The key must be the whole header value: a prefix of a valid key is not one.
      expect((await call(keyed.base, c, apiKey(ALICE.slice(0, -1)))).status).toBe(401);

      for (const auth of [bearer(ALICE), apiKey(BOB)]) {
        const ok = await call(keyed.base, c, auth);
        expect([label, Object.keys(auth)[0], ok.status]).toEqual([label, Object.keys(auth)[0], 200]);
      }
    }
    // The SSE answer really streams the answer once admitted.
    const sse = await call(keyed.base, REST_CALLS[1]!, bearer(ALICE));
    expect(parseSse(sse.text).map((e) => (e.data as { message_type: string }).message_type)).toContain(
      'end-nlweb-response',
    );
    // Paths that are not open are not told apart from real ones before the key is checked.
    expect((await call(keyed.base, { path: '/no/such/thing' })).status).toBe(401);
    expect((await call(keyed.base, { path: '/no/such/thing' }, bearer(ALICE))).status).toBe(404);
  });

  it('puts the client name, never the key, on the request log line', async () => {
    await call(keyed.base, { path: '/sites?log-probe=1' }, apiKey(BOB));
    const done = logLines
      .map((l) => JSON.parse(l) as { msg?: string; client?: string; reqId?: string })
      .filter((l) => l.msg === 'request completed' && l.client === 'bob');
    expect(done.length).toBeGreaterThan(0);
    expect(logLines.join('\n')).not.toContain(BOB);
    expect(logLines.join('\n')).not.toContain(ALICE);
  });

  it('MCP /mcp: 401 with a JSON-RPC error; the key (either header) opens it', async () => {
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const c: Call = {
      method: 'POST',
      path: '/mcp',
      body: list,
      headers: { accept: 'application/json' },
    };
    const none = await call(keyed.base, c);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(none.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32001 } });
    expect((await call(keyed.base, c, bearer('not-a-valid-key-000'))).status).toBe(401);
    for (const auth of [bearer(ALICE), apiKey(ALICE)]) {
      const ok = await call(keyed.base, c, auth);
      expect(ok.status).toBe(200);
      expect((ok.json?.result as { tools: unknown[] }).tools.length).toBeGreaterThan(0);
    }
  });

  it('MCP /mcp/ws: refused with 401 before the upgrade; the key opens it', async () => {
    const none = await openWs(keyed.ws);
    expect(none).toMatchObject({ status: 401 });
    expect(JSON.parse((none as { body: string }).body)).toMatchObject({ error: { code: -32001 } });
    expect(await openWs(keyed.ws, { headers: bearer('not-a-valid-key-000') })).toMatchObject({ status: 401 });
    for (const headers of [bearer(ALICE), apiKey(BOB)]) {
      const ws = await openWs(keyed.ws, { headers });
      expect(ws).toBeInstanceOf(WebSocket);
      (ws as WebSocket).close();
    }
  });

  it('MCP /mcp/ws from a browser: a ticket bought with the key opens it; the URL never holds the key', async () => {
    expect((await call(keyed.base, { method: 'POST', path: '/mcp/ws-ticket' })).status).toBe(401);
    const res = await call(keyed.base, { method: 'POST', path: '/mcp/ws-ticket' }, bearer(ALICE));
    expect(res.status).toBe(200);
    const { ticket, url, expires_in } = res.json as { ticket: string; url: string; expires_in: number };
    expect(expires_in).toBeGreaterThan(0);
    expect(url).not.toContain(ALICE);
    expect(ticket).not.toContain(ALICE);
    const ws = await openWs(`${keyed.ws}?ticket=${encodeURIComponent(ticket)}`);
    expect(ws).toBeInstanceOf(WebSocket);
    (ws as WebSocket).close();
    // A forged or altered ticket, or one for another surface, is refused before the upgrade.
    const [body, sig] = ticket.split('.');
    const forged = Buffer.from(JSON.stringify({ c: 'mallory', s: 'mcp', e: 9e9, n: 'x' })).toString(
      'base64url',
    );
    for (const bad of [`${forged}.${sig}`, `${body}.${sig!.slice(1)}x`, 'nonsense']) {
      expect(await openWs(`${keyed.ws}?ticket=${encodeURIComponent(bad)}`)).toMatchObject({ status: 401 });
    }
  });

  it('A2A JSON-RPC, HTTP+JSON and the extended card: 401 in their forms; the key opens them', async () => {
    const getTask = { jsonrpc: '2.0', id: 7, method: 'GetTask', params: { id: 'no-such-task' } };
    const rpc: Call = { method: 'POST', path: '/a2a', body: getTask, headers: { 'a2a-version': '1.0' } };
    const none = await call(keyed.base, rpc);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(none.json).toMatchObject({
      jsonrpc: '2.0',
      error: { code: -32000, data: [{ reason: 'UNAUTHENTICATED' }] },
    });
    expect((await call(keyed.base, rpc, bearer('not-a-valid-key-000'))).status).toBe(401);
    // Past the layer the SDK answers: TaskNotFound for a task that does not exist.
    for (const auth of [bearer(ALICE), apiKey(BOB)]) {
      expect((await call(keyed.base, rpc, auth)).json).toMatchObject({ id: 7, error: { code: -32001 } });
    }

    const rest: Call = { path: '/a2a/rest/tasks/no-such-task', headers: { 'a2a-version': '1.0' } };
    const restNone = await call(keyed.base, rest);
    expect(restNone.status).toBe(401);
    expect(restNone.headers.get('content-type')).toMatch(/^application\/a2a\+json/);
    expect(restNone.json).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
    expect((await call(keyed.base, rest, apiKey(ALICE))).status).toBe(404);

    const extended: Call = { path: '/a2a/rest/extendedAgentCard', headers: { 'a2a-version': '1.0' } };
    expect((await call(keyed.base, extended)).status).toBe(401);
    const card = await call(keyed.base, extended, bearer(ALICE));
    expect(card.status).toBe(200);
    expect(card.json).toMatchObject({ name: 'askbus' });
  });

  it('the MCP SDK client works with a key and is refused without one', async () => {
    const connect = async (headers: Record<string, string>): Promise<Client> => {
      const client = new Client({ name: 'access-test', version: '1' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${keyed.base}/mcp`), { requestInit: { headers } }),
      );
      return client;
    };
    await expect(connect({})).rejects.toThrow(/401|Unauthorized/i);
    const client = await connect(bearer(ALICE));
    try {
      const sites = await client.callTool({ name: 'list_sites', arguments: {} });
      expect(sites.isError).toBeFalsy();
      expect(JSON.stringify(sites.structuredContent)).toContain('movies');
    } finally {
      await client.close();
    }
  });

  it('the A2A SDK client works with a key (a fetch that adds it) and is refused without one', async () => {
    const withKey: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set('x-api-key', BOB);
      return fetch(input, { ...init, headers });
    };
    for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
      const anonymous = await clientFor(keyed.base, binding);
      await expect(anonymous.sendMessage(sendRequest(userMessage('space movies')))).rejects.toThrow();
      const client = await clientFor(keyed.base, binding, withKey);
      const task = asTask(await client.sendMessage(sendRequest(userMessage('space movies'))));
      expect([binding, task.status?.state]).toEqual([binding, TaskState.TASK_STATE_COMPLETED]);
    }
  });
});

describe('the legacy per-surface tokens', () => {
  it('ASKBUS_MCP_TOKEN / mcpAuthToken opens MCP only, next to the general keys', async () => {
    const { base } = await world.gateway({ auth: { keys: [KEYS[0]!] }, mcpAuthToken: 'legacy-mcp-token' });
    const list: Call = {
      method: 'POST',
      path: '/mcp',
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      headers: { accept: 'application/json' },
    };
    expect((await call(base, list, bearer('legacy-mcp-token'))).status).toBe(200);
    expect((await call(base, list, bearer(ALICE))).status).toBe(200);
    expect((await call(base, { path: '/sites' }, bearer('legacy-mcp-token'))).status).toBe(401);
    expect((await call(base, { path: '/sites' }, bearer(ALICE))).status).toBe(200);
  });

  it('with only an MCP token, REST stays open and A2A declares no scheme', async () => {
    const { base } = await world.gateway({ mcpAuthToken: 'legacy-mcp-token' });
    expect((await call(base, { path: '/sites' })).status).toBe(200);
    const card = await call(base, {
      path: '/.well-known/agent-card.json',
      headers: { 'a2a-version': '1.0' },
    });
    expect(card.json).not.toHaveProperty('securitySchemes');
    const list: Call = {
      method: 'POST',
      path: '/mcp',
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    };
    expect((await call(base, list)).status).toBe(401);
  });
});

describe('per-client rate limits', () => {
  const PER_MINUTE = 3;
  let limited: { base: string; ws: string };
  beforeAll(async () => {
    limited = await world.gateway({ auth: { keys: KEYS, ratePerMinute: PER_MINUTE } });
  });

  it('the N+1th request of a client in the window gets 429 with Retry-After, in each protocol form; another client still passes', async () => {
    // The window is a minute; a loaded machine still makes these few calls well within it.
    for (let i = 1; i <= PER_MINUTE; i++) {
      const ok = await call(limited.base, { path: '/sites' }, bearer(ALICE));
      expect(ok.status).toBe(200);
      expect(ok.headers.get('ratelimit-limit')).toBe(String(PER_MINUTE));
      expect(ok.headers.get('ratelimit-remaining')).toBe(String(PER_MINUTE - i));
    }
    // The client is the key's owner, whichever header carries it.
    const over = await call(limited.base, { path: '/sites' }, apiKey(ALICE));
    expect(over.status).toBe(429);
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(over.headers.get('ratelimit-remaining')).toBe('0');
    expect(over.json).toMatchObject({ message_type: 'error', code: 'rate_limited', status: 429 });

    const v05 = await call(limited.base, { method: 'POST', path: '/ask', body: v05Ask }, bearer(ALICE));
    expect(v05.status).toBe(429);
    expect(v05.json).toMatchObject({
      _meta: { error: { code: 'RATE_LIMITED' } },
      content: [{ type: 'text' }],
    });
    const mcp = await call(
      limited.base,
      { method: 'POST', path: '/mcp', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } },
      bearer(ALICE),
    );
    expect(mcp.status).toBe(429);
    expect(mcp.json).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    expect(mcp.headers.get('retry-after')).toBeTruthy();
    const a2a = await call(
      limited.base,
      {
        method: 'POST',
        path: '/a2a',
        body: { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } },
      },
      bearer(ALICE),
    );
    expect(a2a.status).toBe(429);
    expect(a2a.json).toMatchObject({ error: { code: -32000, data: [{ reason: 'RATE_LIMITED' }] } });
    const a2aRest = await call(limited.base, { path: '/a2a/rest/tasks/x' }, bearer(ALICE));
    expect(a2aRest.status).toBe(429);
    expect(a2aRest.json).toMatchObject({ error: { code: 429, status: 'RESOURCE_EXHAUSTED' } });
    // A WebSocket upgrade counts too, and is refused before upgrading.
    const ws = await openWs(limited.ws, { headers: bearer(ALICE) });
    expect(ws).toMatchObject({ status: 429 });
    expect(Number((ws as { headers: Record<string, unknown> }).headers['retry-after'])).toBeGreaterThan(0);

    // Bob has a window of his own.
    const bob = await call(limited.base, { path: '/sites' }, bearer(BOB));
    expect(bob.status).toBe(200);
    expect(bob.headers.get('ratelimit-remaining')).toBe(String(PER_MINUTE - 1));
    // Open surfaces are not counted.
    expect((await call(limited.base, { path: '/health' }, bearer(ALICE))).status).toBe(200);
  });

  it('requests without a valid key count against their IP, which slows down key guessing', async () => {
    const statuses: number[] = [];
    for (let i = 0; i <= PER_MINUTE; i++) {
      statuses.push((await call(limited.base, { path: '/sites' }, bearer(`guess-${i}-xxxxxxxx`))).status);
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
  });

  it('behind a trusted proxy the limit applies per client address it forwards', async () => {
    const { base } = await world.gateway({ auth: { ratePerMinute: 2 }, trustProxy: ['127.0.0.1'] });
    const from = (ip: string) => ({ 'x-forwarded-for': ip });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await call(base, { path: '/who?query=cars' }, from('203.0.113.7'))).status);
    // Another client behind the same ingress keeps its own limit.
    statuses.push((await call(base, { path: '/who?query=cars' }, from('198.51.100.9'))).status);
    expect(statuses).toEqual([200, 200, 429, 200]);
  });

  it('without keys the limit applies per IP', async () => {
    const { base } = await world.gateway({ auth: { ratePerMinute: 2 } });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await call(base, { path: '/who?query=cars' })).status);
    expect(statuses).toEqual([200, 200, 429]);
  });
});

describe('concurrent streams per client', () => {
  it('a client at its cap gets 429 until one of its streams ends; other clients pass', async () => {
    const { base } = await world.gateway({ auth: { keys: KEYS, maxStreamsPerClient: 1 } });
    // `slow`: the fake router sends one result, then waits until the client hangs up.
    const hangUp = new AbortController();
    const slow = await fetch(`${base}/ask?query=slow`, {
      headers: { ...bearer(ALICE), accept: 'text/event-stream' },
      signal: hangUp.signal,
    });
    expect(slow.status).toBe(200);
    const reader = slow.body!.getReader();
    let got = '';
    while (!got.includes('"result"')) got += new TextDecoder().decode((await reader.read()).value);

    const second = await call(base, { path: '/sites' }, bearer(ALICE));
    expect(second.status).toBe(429);
    expect(second.json).toMatchObject({ code: 'too_many_streams' });
    expect((await call(base, { path: '/sites' }, bearer(BOB))).status).toBe(200);

    hangUp.abort();
    await expect
      .poll(async () => (await call(base, { path: '/sites' }, bearer(ALICE))).status, { timeout: 5_000 })
      .toBe(200);
  });
});
