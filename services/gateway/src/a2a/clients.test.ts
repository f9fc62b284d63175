import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { AgentCard, TaskState } from '@a2a-js/sdk';
import type { StreamResponse, Task } from '@a2a-js/sdk';
import {
  LegacyJsonRpcTransport,
  LegacyRestTransport,
  isLegacyAgentCard,
} from '@a2a-js/sdk/compat/v0_3/client';
import { mcpWorld } from '../mcp/testing';
import type { McpWorld } from '../mcp/testing';
import { asTask, clientFor, collect, sendRequest, userMessage } from './testing';

// The official clients of @a2a-js/sdk against the gateway: v1.0's ClientFactory, and v0.3's
// transports (the compat layer) over both bindings; and the agent card a client gets without
// asking for a version, checked against A2A v1.0's own JSON Schema of the AgentCard
// (a2a/spec/agent-card-v1.0.schema.json, from the proto of v1.0.0; its $comment says how).
let world: McpWorld;
let base: string;
let keyedBase: string;

const CARD_SCHEMA = JSON.parse(
  readFileSync(new URL('./spec/agent-card-v1.0.schema.json', import.meta.url), 'utf8'),
) as object;
const validateCard = new Ajv2020({ allErrors: true, strict: false }).compile(CARD_SCHEMA);
const cardViolations = (card: unknown): string[] =>
  validateCard(card) ? [] : (validateCard.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`);

beforeAll(async () => {
  world = await mcpWorld();
  ({ base } = await world.gateway());
  ({ base: keyedBase } = await world.gateway({
    auth: { keys: [{ client: 'alice', key: 'key-of-alice-123' }] },
  }));
});

afterAll(async () => {
  await world?.stop();
});

const getCard = async (url: string, headers: Record<string, string> = {}): Promise<Record<string, unknown>> =>
  (await (await fetch(`${url}/.well-known/agent-card.json`, { headers })).json()) as Record<string, unknown>;

const textOf = (t: Task): string =>
  [...(t.status?.message?.parts ?? []), ...t.artifacts.flatMap((a) => a.parts)]
    .map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
    .join(' ');

describe('the agent card without A2A-Version', () => {
  it('is a v1.0 AgentCard by the v1.0 schema, with or without auth', async () => {
    for (const url of [base, keyedBase]) {
      const card = await getCard(url);
      expect(cardViolations(card)).toEqual([]);
      expect(card.supportedInterfaces).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ url: `${url}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }),
          expect.objectContaining({
            url: `${url}/a2a/rest`,
            protocolBinding: 'HTTP+JSON',
            protocolVersion: '0.3',
          }),
        ]),
      );
    }
    expect(await getCard(base, { 'A2A-Version': '1.0' })).toEqual(await getCard(base));
  });

  it('the schema is strict: the v0.3 card (asked for with A2A-Version: 0.3) is not a v1.0 card', async () => {
    const old = await getCard(base, { 'A2A-Version': '0.3' });
    expect(old).toMatchObject({ protocolVersion: '0.3', url: `${base}/a2a` });
    expect(cardViolations(old)).not.toEqual([]);
  });

  it("is read as a v1.0 card by the SDK's v0.3 compat layer, which finds its 0.3 interfaces there", async () => {
    const raw = await getCard(base);
    expect(isLegacyAgentCard(raw)).toBe(false);
    const card = AgentCard.fromJSON(raw);
    expect(
      card.supportedInterfaces.filter((i) => i.protocolVersion === '0.3').map((i) => i.protocolBinding),
    ).toEqual(['JSONRPC', 'HTTP+JSON']);
  });
});

describe('the v1.0 client (ClientFactory from the card)', () => {
  it.each(['JSONRPC', 'HTTP+JSON'] as const)(
    '%s: SendMessage and SendStreamingMessage complete',
    async (binding) => {
      const client = await clientFor(base, binding);
      const task = asTask(await client.sendMessage(sendRequest(userMessage('space movies'))));
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const events = await collect(client.sendMessageStream(sendRequest(userMessage('space movies'))));
      expect(events.at(-1)?.payload?.$case).toBe('statusUpdate');
    },
  );
});

describe('the v0.3 clients (the compat transports, endpoints from the card)', () => {
  const endpoint = async (binding: 'JSONRPC' | 'HTTP+JSON'): Promise<string> => {
    const card = AgentCard.fromJSON(await getCard(base));
    const iface = card.supportedInterfaces.find(
      (i) => i.protocolVersion === '0.3' && i.protocolBinding === binding,
    );
    if (!iface) throw new Error(`no 0.3 ${binding} interface in the card`);
    return iface.url;
  };
  const transports = {
    JSONRPC: async () => new LegacyJsonRpcTransport({ endpoint: await endpoint('JSONRPC') }),
    'HTTP+JSON': async () => new LegacyRestTransport({ endpoint: await endpoint('HTTP+JSON') }),
  };

  it.each(['JSONRPC', 'HTTP+JSON'] as const)('%s: message:send answers the task', async (binding) => {
    const transport = await transports[binding]();
    const from = world.router.calls.length;
    const result = await transport.sendMessage(sendRequest(userMessage('westerns from the v0.3 client')));
    const task = asTask(result as Task);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(world.router.calls.slice(from).map((c) => c.req.query)).toEqual(['westerns from the v0.3 client']);
    expect(textOf(task)).not.toBe('');
  });

  it.each(['JSONRPC', 'HTTP+JSON'] as const)('%s: message:stream streams to the end', async (binding) => {
    const transport = await transports[binding]();
    const events: StreamResponse[] = [];
    for await (const e of transport.sendMessageStream(sendRequest(userMessage('space movies'))))
      events.push(e);
    expect(events.length).toBeGreaterThan(1);
    const last = events.at(-1)!;
    expect(last.payload?.$case).toBe('statusUpdate');
    if (last.payload?.$case === 'statusUpdate')
      expect(last.payload.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });
});
