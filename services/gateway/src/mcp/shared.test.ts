/**
 * Sessions shared by two gateways on one NATS (in one process here; cli/src/two-gateways.test.ts
 * runs them as processes): a session made on one gateway elicits on the other, with the
 * client's capabilities as it declared them, and the client's answer reaches the gateway that
 * asked even when it is sent to the other one.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mcpWorld, type McpWorld } from './testing';

let world: McpWorld;
let A: string;
let B: string;
const PROTOCOL = '2025-06-18';

beforeAll(async () => {
  world = await mcpWorld();
  [{ base: A }, { base: B }] = await Promise.all([world.gateway(), world.gateway()]);
});

afterAll(async () => {
  await world?.stop();
});

const post = (base: string, body: unknown, sid?: string): Promise<Response> =>
  fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': PROTOCOL,
      ...(sid ? { 'mcp-session-id': sid } : {}),
    },
    body: JSON.stringify(body),
  });

/** Reads SSE events off a response as they come. */
function events(res: Response): { next(): Promise<Record<string, unknown>> } {
  const reader = res.body!.getReader();
  let buffer = '';
  const queue: Record<string, unknown>[] = [];
  return {
    async next() {
      while (queue.length === 0) {
        const { value, done } = await reader.read();
        if (done) throw new Error('the stream ended');
        buffer += new TextDecoder().decode(value);
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block
            .split('\n')
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trim())
            .join('\n');
          if (data) queue.push(JSON.parse(data) as Record<string, unknown>);
        }
      }
      return queue.shift()!;
    },
  };
}

it('elicits on the gateway that did not make the session, and takes the answer sent to the other', async () => {
  const init = await post(A, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: {
      protocolVersion: PROTOCOL,
      capabilities: { elicitation: {} },
      clientInfo: { name: 't', version: '1' },
    },
  });
  await init.text();
  const sid = init.headers.get('mcp-session-id')!;
  expect((await post(A, { jsonrpc: '2.0', method: 'notifications/initialized' }, sid)).status).toBe(202);

  // The question runs on B, which restores the session: it knows the client can elicit.
  const call = await post(
    B,
    { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'ask', arguments: { query: 'vague' } } },
    sid,
  );
  expect(call.status).toBe(200);
  const stream = events(call);
  let request: Record<string, unknown>;
  do request = await stream.next();
  while (request.method !== 'elicitation/create');
  expect((request.params as { message: string }).message).toBe('Which city are you in?');

  // The answer goes to A; B's server gets it and runs it as the next turn.
  const answer = await post(
    A,
    { jsonrpc: '2.0', id: request.id, result: { action: 'accept', content: { answer: 'Paris' } } },
    sid,
  );
  expect(answer.status).toBe(202);
  let result: Record<string, unknown>;
  do result = await stream.next();
  while (result.id !== 5);
  expect((result.result as { structuredContent: { query: string } }).structuredContent.query).toBe('Paris');
});

it('the SDK transport still keeps its SSE streams where the gateway ends relayed ones', () => {
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  expect((transport as unknown as { _streamMapping: unknown })._streamMapping).toBeInstanceOf(Map);
});
