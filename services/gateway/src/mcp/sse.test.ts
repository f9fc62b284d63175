import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import { mcpWorld } from './testing';
import type { McpWorld } from './testing';

// MCP's 2024-11-05 HTTP+SSE transport with the SDK's own SSEClientTransport (what older MCP
// clients use): GET /mcp/sse, then POSTs to the endpoint it announces.
let world: McpWorld;
let base: string;
let keyedBase: string;
const clients: Client[] = [];

beforeAll(async () => {
  world = await mcpWorld();
  ({ base } = await world.gateway({ mcp: { sseKeepAliveMs: 100 } }));
  ({ base: keyedBase } = await world.gateway({
    auth: { keys: [{ client: 'alice', key: 'key-of-alice-123' }] },
  }));
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await world?.stop();
});

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'askbus-sse-test', version: '1.0.0' });
  await client.connect(
    new SSEClientTransport(new URL(`${url}/mcp/sse`), {
      requestInit: { headers },
      eventSourceInit: {
        fetch: (u, init) => fetch(u, { ...init, headers: { ...init?.headers, ...headers } }),
      },
    }),
  );
  clients.push(client);
  return client;
}

describe('MCP over HTTP+SSE (2024-11-05) with the SDK client', () => {
  it('initializes, lists the tools and calls them; answers come back on the stream', async () => {
    const client = await connect(base);
    expect(client.getServerVersion()?.name).toBe('askbus');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['ask', 'list_sites', 'who']));
    const from = world.router.calls.length;
    const logs: LoggingMessageNotification['params'][] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
    const res = await client.callTool({
      name: 'ask',
      arguments: { query: 'space movies', site: ['movies'] },
    });
    expect(res.isError).toBeFalsy();
    expect((res.structuredContent as { results: { name: string }[] }).results.map((r) => r.name)).toEqual([
      'Item 0',
      'Item 1',
      'Item 2',
    ]);
    expect(world.router.calls.slice(from).map((c) => c.req.query)).toEqual(['space movies']);
    const sites = await client.callTool({ name: 'list_sites', arguments: {} });
    expect(sites.structuredContent).toMatchObject({ sites: [{ name: 'movies' }, { name: 'cars' }] });
  });

  it('keeps sessions apart, and a POST to an unknown session is a 404', async () => {
    const [a, b] = await Promise.all([connect(base), connect(base)]);
    const [ra, rb] = await Promise.all([
      a.callTool({ name: 'ask', arguments: { query: 'first' } }),
      b.callTool({ name: 'ask', arguments: { query: 'second' } }),
    ]);
    expect((ra.structuredContent as { query: string }).query).toBe('first');
    expect((rb.structuredContent as { query: string }).query).toBe('second');
    const stray = await fetch(`${base}/mcp/messages?sessionId=no-such-session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(stray.status).toBe(404);
    expect(await stray.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32001 } });
  });

  it('announces the endpoint first, and keeps the stream alive', async () => {
    const ctl = new AbortController();
    const res = await fetch(`${base}/mcp/sse`, {
      headers: { accept: 'text/event-stream' },
      signal: ctl.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes(': keepalive')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    ctl.abort();
    expect(text).toMatch(/^event: endpoint\ndata: \/mcp\/messages\?sessionId=[0-9a-f-]{36}\n\n/);
  });

  it('takes the API key like every MCP transport', async () => {
    const refused = await fetch(`${keyedBase}/mcp/sse`, { headers: { accept: 'text/event-stream' } });
    expect(refused.status).toBe(401);
    const client = await connect(keyedBase, { authorization: 'Bearer key-of-alice-123' });
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });
});
