import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { LoggingMessageNotification, Progress } from '@modelcontextprotocol/sdk/types.js';
import WebSocket from 'ws';
import { callAfter, mcpWorld } from './testing';
import type { McpWorld } from './testing';

// Node 20 has no global WebSocket; the SDK's client transport uses it. ws speaks the same API.
const g = globalThis as { WebSocket?: unknown };
g.WebSocket ??= WebSocket;

let world: McpWorld;
let base: string;
let wsUrl: string;
const clients: Client[] = [];

beforeAll(async () => {
  world = await mcpWorld();
  ({ base, ws: wsUrl } = await world.gateway());
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await world?.stop();
});

type Kind = 'http' | 'ws';

async function connect(kind: Kind, opts: { elicitation?: boolean } = {}): Promise<Client> {
  const client = new Client(
    { name: 'askbus-test', version: '1.0.0' },
    { capabilities: opts.elicitation ? { elicitation: {} } : {} },
  );
  const transport: Transport =
    kind === 'http'
      ? new StreamableHTTPClientTransport(new URL(`${base}/mcp`))
      : new WebSocketClientTransport(new URL(wsUrl));
  await client.connect(transport);
  clients.push(client);
  return client;
}

interface AskOut {
  query_id: string;
  query: string;
  results: { name: string; url: string }[];
  summary?: string;
  ask_user?: string;
  notes: string[];
}

interface DetailsOut {
  query_id: string;
  query: string;
  site: string[];
  item?: { name: string; details: string; url: string; site: string; details_requested?: string };
  notes: string[];
  errors: string[];
}

interface CompareOut {
  query: string;
  comparison?: {
    comparison: string;
    item1: { name: string };
    item2: { name: string };
    table?: { field: string; item1: string; item2: string }[];
  };
  notes: string[];
}

const textOf = (r: Record<string, unknown>): string =>
  ((r.content ?? []) as { type: string; text?: string }[]).map((c) => c.text ?? '').join('\n');

describe.each<Kind>(['http', 'ws'])('MCP over %s with the SDK client', (kind) => {
  let client: Client;
  beforeAll(async () => {
    client = await connect(kind);
  });

  it('initializes as askbus with tools and logging', () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'askbus' });
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, logging: {} });
  });

  it('lists ask, list_sites, who, details and compare with input and output schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['ask', 'list_sites', 'who', 'details', 'compare']);
    const ask = tools[0]!;
    expect(ask.inputSchema).toMatchObject({ type: 'object', required: ['query'] });
    expect(Object.keys(ask.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['query', 'site', 'mode', 'prev']),
    );
    expect(ask.outputSchema).toMatchObject({ type: 'object' });
    for (const t of tools) expect(t.outputSchema?.type).toBe('object');
  });

  it('ask runs contracts.ask and returns the ranked results, structured and as text', async () => {
    const from = world.router.calls.length;
    const r = await client.callTool({
      name: 'ask',
      arguments: { query: 'space movies', site: 'movies,cars', mode: 'summarize', prev: ['films'] },
    });
    expect(r.isError).toBeFalsy();
    const out = r.structuredContent as unknown as AskOut;
    expect(out.results.map((i) => i.name)).toEqual(['Item 0', 'Item 1', 'Item 2']);
    expect(out.summary).toBe('A summary.');
    expect(out.notes).toEqual(['Searching for space movies']);
    expect(textOf(r)).toContain('3 results for "space movies"');
    expect(textOf(r)).toContain('1. Item 0 (score 90, movies) https://movies.example/item/0');
    const call = world.router.calls.slice(from).find((c) => c.req.query === 'space movies');
    expect(call?.req).toMatchObject({ site: ['movies', 'cars'], mode: 'summarize', prev: ['films'] });
    expect(call?.queryId).toBe(out.query_id);
  });

  it('sends notifications/progress to a client with a progress token', async () => {
    const seen: Progress[] = [];
    const r = await client.callTool({ name: 'ask', arguments: { query: 'progress please' } }, undefined, {
      onprogress: (p) => seen.push(p),
    });
    expect(r.isError).toBeFalsy();
    expect(seen.map((p) => p.message)).toEqual([
      'Searching for progress please',
      '2 results',
      'summary',
      '3 results',
    ]);
    expect(seen.map((p) => p.progress)).toEqual([1, 2, 3, 4]);
  });

  it('logs through notifications/message at the level the client set', async () => {
    const logs: LoggingMessageNotification['params'][] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
    await client.callTool({ name: 'ask', arguments: { query: 'quiet' } });
    expect(logs.map((l) => l.level)).toEqual(['info']);
    await client.setLoggingLevel('debug');
    logs.length = 0;
    await client.callTool({ name: 'ask', arguments: { query: 'loud' } });
    expect(logs.map((l) => l.level)).toEqual(['debug', 'info', 'debug']);
    expect(logs[1]).toMatchObject({ logger: 'askbus', data: { text: 'Searching for loud' } });
    await client.setLoggingLevel('info');
  });

  it('list_sites and who answer from the retriever', async () => {
    const sites = await client.callTool({ name: 'list_sites', arguments: {} });
    expect(sites.structuredContent).toEqual({
      sites: [
        { name: 'movies', itemCount: 3, types: ['Movie'] },
        { name: 'cars', itemCount: 2, types: ['Car'] },
      ],
    });
    expect(textOf(sites)).toContain('- movies: 3 items (Movie)');
    // The fake retriever finds a Movie for "car" too; only the cars match it (who.ts ranking).
    const who = await client.callTool({ name: 'who', arguments: { query: 'car' } });
    expect(who.structuredContent).toEqual({
      query: 'car',
      sites: [
        {
          name: 'cars',
          score: expect.any(Number),
          matches: 2,
          hits: 2,
          item_count: 2,
          types: ['Car'],
          best: { name: 'Car 0', url: 'https://cars.example/item/0', score: expect.any(Number) },
        },
      ],
    });
    const [cars] = (who.structuredContent as { sites: { score: number }[] }).sites;
    expect(cars!.score).toBeGreaterThanOrEqual(60);
    expect(textOf(who)).toContain(`1. cars: score ${cars!.score}, 2 matching items (best: Car 0)`);
  });

  it('details and compare advertise their arguments and structured output', async () => {
    const { tools } = await client.listTools();
    const details = tools.find((t) => t.name === 'details')!;
    expect(Object.keys(details.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['item', 'query', 'site', 'details_requested']),
    );
    expect(details.outputSchema).toMatchObject({
      type: 'object',
      properties: { item: { type: 'object' }, notes: { type: 'array' } },
    });
    const compare = tools.find((t) => t.name === 'compare')!;
    expect(compare.inputSchema).toMatchObject({ type: 'object', required: ['item1', 'item2'] });
    expect(Object.keys(compare.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['item1', 'item2', 'site', 'details_requested']),
    );
    expect(compare.outputSchema).toMatchObject({
      type: 'object',
      properties: { comparison: { type: 'object' } },
    });
  });

  it('details sends tool=details with "tell me about X" and returns item_details', async () => {
    const from = world.router.calls.length;
    const r = await client.callTool({ name: 'details', arguments: { item: 'Pale Rider', site: 'movies' } });
    expect(r.isError).toBeFalsy();
    const out = r.structuredContent as unknown as DetailsOut;
    expect(out.query).toBe('tell me about Pale Rider');
    expect(out.item).toMatchObject({
      name: 'Pale Rider',
      url: 'https://movies.example/pale-rider',
      site: 'movies',
      score: 92,
      details_requested: 'everything',
      schema_object: { '@type': 'Movie', name: 'Pale Rider' },
    });
    expect(textOf(r)).toContain('Pale Rider (movies) https://movies.example/pale-rider');
    expect(textOf(r)).toContain("director: Pale Rider's director");
    const call = world.router.calls.slice(from).find((c) => c.req.tool === 'details');
    expect(call?.req).toMatchObject({ tool: 'details', query: 'tell me about Pale Rider', site: ['movies'] });
    expect(call?.queryId).toBe(out.query_id);
  });

  it('details: details_requested and a free query become the query text', async () => {
    const asked = await client.callTool({
      name: 'details',
      arguments: { item: 'Alien', details_requested: 'director' },
    });
    expect(asked.structuredContent).toMatchObject({
      query: 'what is the director of Alien',
      site: ['all'],
      item: { name: 'Alien', details_requested: 'director' },
    });
    expect(textOf(asked)).toContain('Details asked for: director');
    const free = await client.callTool({
      name: 'details',
      arguments: { query: 'tell me about Blade Runner', site: 'movies' },
    });
    expect(free.structuredContent).toMatchObject({
      query: 'tell me about Blade Runner',
      item: { name: 'Blade Runner' },
    });
  });

  it('details: an item not found has no item and says so', async () => {
    const r = await client.callTool({ name: 'details', arguments: { item: 'nothing at all' } });
    expect(r.isError).toBeFalsy();
    const out = r.structuredContent as unknown as DetailsOut;
    expect(out.item).toBeUndefined();
    expect(out.notes).toEqual(['Could not find any items matching "nothing at all".']);
    expect(textOf(r)).toContain('No item found for "tell me about nothing at all"');
  });

  it('compare sends tool=compare with "compare X and Y" and returns compare_items', async () => {
    const from = world.router.calls.length;
    const progress: Progress[] = [];
    const r = await client.callTool(
      { name: 'compare', arguments: { item1: 'Alien', item2: 'Blade Runner', site: ['movies'] } },
      undefined,
      { onprogress: (p) => progress.push(p) },
    );
    expect(r.isError).toBeFalsy();
    const out = r.structuredContent as unknown as CompareOut;
    expect(out.query).toBe('compare Alien and Blade Runner');
    expect(out.comparison).toMatchObject({
      comparison: 'Alien and Blade Runner are both from 1979.',
      verdict: 'Alien wins.',
      item1: { name: 'Alien', url: 'https://movies.example/alien', site: 'movies' },
      item2: { name: 'Blade Runner', site: 'movies' },
    });
    expect(out.comparison?.table).toHaveLength(2);
    expect(out.notes).toEqual(['Looking for Alien and Blade Runner']);
    expect(progress.map((p) => p.message)).toEqual(['Looking for Alien and Blade Runner', 'compare_items']);
    const text = textOf(r);
    expect(text).toContain('Alien and Blade Runner are both from 1979.');
    expect(text).toContain('Verdict: Alien wins.');
    expect(text).toContain("| director | Alien's director | Blade Runner's director |");
    const call = world.router.calls.slice(from).find((c) => c.req.tool === 'compare');
    expect(call?.req).toMatchObject({ query: 'compare Alien and Blade Runner', site: ['movies'] });
  });

  it('compare: a known aspect is asked for, names with "and" go second, unknown aspects are noted', async () => {
    const aspect = await client.callTool({
      name: 'compare',
      arguments: { item1: 'Alien', item2: 'Heat', details_requested: 'budget' },
    });
    expect(aspect.structuredContent).toMatchObject({ query: 'compare Alien and Heat in terms of budget' });
    const swapped = await client.callTool({
      name: 'compare',
      arguments: { item1: 'Harold and Maude', item2: 'Heat', details_requested: 'vibes' },
    });
    const out = swapped.structuredContent as unknown as CompareOut;
    expect(out.query).toBe('compare Heat and Harold and Maude');
    expect(out.comparison?.item1.name).toBe('Harold and Maude');
    expect(out.comparison?.item2.name).toBe('Heat');
    expect(out.comparison?.table?.[0]).toMatchObject({ item1: "Harold and Maude's director" });
    expect(out.notes[0]).toMatch(/details_requested "vibes" is not one the compare tool reads/);
  });

  it('compare: an item not found gives no comparison and the reason', async () => {
    const r = await client.callTool({ name: 'compare', arguments: { item1: 'Alien', item2: 'nothing' } });
    expect(r.isError).toBeFalsy();
    const out = r.structuredContent as unknown as CompareOut;
    expect(out.comparison).toBeUndefined();
    expect(out.notes).toEqual(['Could not find nothing to compare.']);
  });

  it('details and compare answer bad arguments with -32602', async () => {
    const bad = async (name: string, args: Record<string, unknown>, text: string): Promise<void> => {
      const err = await client.callTool({ name, arguments: args }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(McpError);
      expect(err).toMatchObject({ code: -32602 });
      expect((err as Error).message).toContain(text);
    };
    await bad('details', { site: 'movies' }, 'give either item or query');
    await bad('details', { item: 'Alien', query: 'tell me about Alien' }, 'give either item or query');
    await bad('details', { query: 'who directed Alien', details_requested: 'year' }, 'details_requested');
    await bad('details', { item: 'Alien', site: 'bad site/name' }, 'site');
    await bad('compare', { item1: 'Alien' }, 'item2');
    await bad('compare', { item1: 'Alien', item2: 42 }, 'item2');
    await bad('compare', { item1: 'Tom and Jerry', item2: 'Salt or Pepper' }, 'tell them apart');
  });

  it('cancelling details cancels its query in the router', async () => {
    const from = world.router.calls.length;
    const abort = new AbortController();
    const pending = client.callTool({ name: 'details', arguments: { item: 'slow' } }, undefined, {
      signal: abort.signal,
    });
    const q = 'tell me about slow';
    await expect.poll(() => callAfter(world.router, from, q), { timeout: 3_000 }).toBeDefined();
    abort.abort('the user gave up');
    await expect(pending).rejects.toThrow();
    await expect
      .poll(() => world.router.aborted, { timeout: 3_000 })
      .toContain(callAfter(world.router, from, q));
  });

  it('a failing router gives isError with the reason', async () => {
    const r = await client.callTool({ name: 'ask', arguments: { query: 'fail' } });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe('The search for "fail" failed: the fake router broke');
  });

  it('answers bad tool calls with -32602', async () => {
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    const err = await client
      .callTool({ name: 'ask', arguments: { site: 'movies' } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect(err).toMatchObject({ code: -32602 });
    expect((err as Error).message).toContain('query');
    await expect(
      client.callTool({ name: 'ask', arguments: { query: 'x', site: 'bad site/name' } }),
    ).rejects.toMatchObject({ code: -32602 });
  });

  it('returns the router question as text when the client cannot elicit', async () => {
    const r = await client.callTool({ name: 'ask', arguments: { query: 'vague' } });
    expect(r.isError).toBeFalsy();
    expect(textOf(r)).toBe('Which city are you in?');
    expect(r.structuredContent).toMatchObject({ ask_user: 'Which city are you in?', results: [] });
  });

  it('asks the user with elicitation/create and runs their answer as the next turn', async () => {
    const eliciting = await connect(kind, { elicitation: true });
    const asked: string[] = [];
    eliciting.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params.message);
      return { action: 'accept', content: { answer: 'Paris' } };
    });
    const from = world.router.calls.length;
    const r = await eliciting.callTool({ name: 'ask', arguments: { query: 'vague' } });
    expect(asked).toEqual(['Which city are you in?']);
    const out = r.structuredContent as unknown as AskOut;
    expect(out.query).toBe('Paris');
    expect(out.results).toHaveLength(3);
    expect(out.ask_user).toBeUndefined();
    const next = world.router.calls.slice(from).find((c) => c.req.query === 'Paris');
    expect(next?.req.prev).toEqual(['vague']);
  });

  it('a declined elicitation returns the question', async () => {
    const declining = await connect(kind, { elicitation: true });
    declining.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'decline' }));
    const r = await declining.callTool({ name: 'ask', arguments: { query: 'vague' } });
    expect(textOf(r)).toBe('Which city are you in?');
  });

  it('notifications/cancelled cancels the query in the router', async () => {
    const from = world.router.calls.length;
    const before = world.routerBus.stats.cancelled;
    const abort = new AbortController();
    const pending = client.callTool({ name: 'ask', arguments: { query: 'slow' } }, undefined, {
      signal: abort.signal,
    });
    await expect.poll(() => callAfter(world.router, from, 'slow'), { timeout: 3_000 }).toBeDefined();
    abort.abort('the user gave up');
    await expect(pending).rejects.toThrow();
    const queryId = callAfter(world.router, from, 'slow')!;
    await expect.poll(() => world.router.aborted, { timeout: 3_000 }).toContain(queryId);
    await expect.poll(() => world.routerBus.stats.cancelled, { timeout: 3_000 }).toBeGreaterThan(before);
    // The session still works.
    expect((await client.callTool({ name: 'list_sites', arguments: {} })).isError).toBeFalsy();
  });
});

describe('MCP over WebSocket: one socket, many calls', () => {
  it('multiplexes concurrent tool calls by id', async () => {
    const client = await connect('ws');
    const queries = ['one', 'two', 'three', 'four'];
    const answers = await Promise.all(
      queries.map((q) => client.callTool({ name: 'ask', arguments: { query: q } })),
    );
    expect(answers.map((a) => (a.structuredContent as unknown as AskOut).query)).toEqual(queries);
  });

  it('a closed socket cancels its running queries', async () => {
    const client = await connect('ws');
    const from = world.router.calls.length;
    const pending = client.callTool({ name: 'ask', arguments: { query: 'slow' } }).catch((e: unknown) => e);
    await expect.poll(() => callAfter(world.router, from, 'slow'), { timeout: 3_000 }).toBeDefined();
    await client.close();
    const queryId = callAfter(world.router, from, 'slow')!;
    await expect.poll(() => world.router.aborted, { timeout: 3_000 }).toContain(queryId);
    expect(await pending).toBeInstanceOf(Error);
  });
});

describe('MCP call time limit', () => {
  it('returns isError with a helpful text and cancels the query', async () => {
    const { base: url } = await world.gateway({ mcp: { callTimeoutMs: 300 } });
    const client = new Client({ name: 't', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
    clients.push(client);
    const from = world.router.calls.length;
    const r = await client.callTool({ name: 'ask', arguments: { query: 'hang' } });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/did not finish within 0\.3 s and was stopped\. .*narrower/);
    const queryId = callAfter(world.router, from, 'hang')!;
    await expect.poll(() => world.router.aborted, { timeout: 3_000 }).toContain(queryId);
  });
});
