import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPageWorld, type PageWorld } from '../pages/page-world';
import { Kvm } from '@nats-io/kv';
import type { Bus } from '@askbus/bus';
import { createMessageFactory } from '@askbus/contracts';
import type { Message } from '@askbus/contracts';
import { asTask, clientFor, sendRequest, userMessage } from '../a2a/testing';
import { WESTERNS } from '../pages/page-router';
import type { PageRouter } from '../pages/page-router';
import { sseEvents } from '../pages/fake-pages';
import {
  CONVERSATIONS_BUCKET,
  ConversationStore,
  ConversationTurns,
  MAX_TURNS,
  memoryKv,
  natsKv,
  userTurn,
} from './index';
import type { ConversationKv } from './index';

// One durable store for every surface's conversations: NLWeb's `conversation_id` on /ask, the
// chat API (chat-api.test.ts) and A2A's `contextId`. The earlier questions feed `prev`; an
// explicit `prev` wins.

let world: PageWorld;
let gatewayBus: Bus;
let router: PageRouter;
let base: string;

beforeAll(async () => {
  world = await startPageWorld();
  ({ gatewayBus, router, base } = world);
});

afterAll(async () => {
  await world?.stop();
});

const answer = (query: string): Message[] => {
  const msg = createMessageFactory('c', 'q');
  return [
    msg({ message_type: 'begin-nlweb-response', query }),
    msg({ message_type: 'summary_chunk', content: 'chunk' }),
    msg({ message_type: 'result', content: WESTERNS }),
    msg({ message_type: 'end-nlweb-response' }),
  ];
};

describe('ConversationStore', () => {
  for (const [name, make] of [
    ['in memory', async () => new ConversationStore(memoryKv())],
    [
      'on JetStream KV',
      async () => new ConversationStore(natsKv(await new Kvm(gatewayBus.nc).create(`test_${Date.now()}`))),
    ],
  ] as const) {
    describe(name, () => {
      it('begin gives the questions before; finish keeps the answer (without its chunks)', async () => {
        const store = await make();
        const first = await store.begin('', 'c1', userTurn('westerns', ['movies'], 'list', 'u1'));
        expect(first.prev).toEqual([]);
        await first.finish(answer('westerns'));
        const second = await store.begin('', 'c1', userTurn('from the 80s', ['movies'], 'list', 'u1'));
        expect(second.prev).toEqual(['westerns']);
        const h = await store.history('', 'c1');
        expect(h?.meta).toMatchObject({ id: 'c1', title: 'westerns', next: 2, participants: ['u1'] });
        // The second turn is still running: only the first is there.
        expect(h?.turns.map((t) => t.user.query)).toEqual(['westerns']);
        expect(h?.turns[0]?.messages.map((m) => m.message_type)).toEqual([
          'begin-nlweb-response',
          'result',
          'end-nlweb-response',
        ]);
        expect(await store.queries('', 'c1')).toEqual(['westerns', 'from the 80s']);
      });

      it('concurrent turns each get their own number; scopes never see each other', async () => {
        const store = await make();
        const turns = await Promise.all(
          ['a', 'b', 'c', 'd', 'e'].map((q) => store.begin('alice', 'shared', userTurn(q, ['all'], 'list'))),
        );
        await Promise.all(turns.map((t, i) => t.finish(answer(String(i)))));
        const h = await store.history('alice', 'shared');
        expect(h?.turns.map((t) => t.seq)).toEqual([0, 1, 2, 3, 4]);
        expect(new Set(h?.turns.map((t) => t.user.query))).toEqual(new Set(['a', 'b', 'c', 'd', 'e']));
        expect(await store.history('bob', 'shared')).toBeUndefined();
        expect((await store.list('alice')).map((m) => m.id)).toEqual(['shared']);
        expect(await store.list('bob')).toEqual([]);
      });

      it('keeps the last MAX_TURNS turns and the last 10 questions', async () => {
        const store = await make();
        for (let i = 0; i < MAX_TURNS + 3; i++) {
          const t = await store.begin('', 'long', userTurn(`q${i}`, ['all'], 'list'));
          await t.finish([]);
        }
        const h = await store.history('', 'long');
        expect(h?.turns).toHaveLength(MAX_TURNS);
        expect(h?.turns[0]?.user.query).toBe('q3');
        expect(h?.meta.queries).toEqual(Array.from({ length: 10 }, (_, i) => `q${MAX_TURNS + 3 - 10 + i}`));
      });
    });
  }

  it('a turn too large for one KV value keeps its items, slimmed', async () => {
    const store = new ConversationStore(memoryKv());
    const big = WESTERNS.map((w) => ({
      ...w,
      schema_object: { ...w.schema_object, text: 'x'.repeat(200_000) },
    }));
    const t = await store.begin('', 'big', userTurn('q', ['all'], 'list'));
    await t.finish([createMessageFactory('', 'q')({ message_type: 'result', content: big })]);
    const h = await store.history('', 'big');
    const m = h?.turns[0]?.messages[0];
    expect(
      m?.message_type === 'result' && Array.isArray(m.content) ? m.content.map((i) => i.schema_object) : [],
    ).toEqual(WESTERNS.map((w) => w.schema_object));
  });
});

describe('ConversationTurns', () => {
  const request = {
    queryId: 'q1',
    query: 'from the 80s',
    site: ['movies'],
    prev: [],
    mode: 'list' as const,
    conversationId: 'c1',
    maxResults: 10,
    minScore: 51,
  };

  it('a store that fails never fails the question: it runs with the fallback prev, and is reported', async () => {
    const broken: ConversationKv = {
      ...memoryKv(),
      durable: true,
      get: () => Promise.reject(new Error('KV down')),
    };
    const warnings: string[] = [];
    const turns = new ConversationTurns(Promise.resolve(new ConversationStore(broken)), (err, msg) =>
      warnings.push(`${msg}: ${(err as Error).message}`),
    );
    const turn = await turns.start('', request, { fallbackPrev: ['westerns'] });
    expect(turn.request.prev).toEqual(['westerns']);
    turn.add(answer('x')[0]!);
    await turn.end();
    expect(warnings).toEqual([
      'conversation store unavailable; the question runs without its history: KV down',
    ]);
  });

  it('a store kept in memory (no JetStream) says so once', async () => {
    const warnings: string[] = [];
    const store = new ConversationStore(memoryKv(), new Error('no JetStream'));
    const turns = new ConversationTurns(Promise.resolve(store), (_e, msg) => warnings.push(msg));
    await turns.start('', request);
    expect(warnings).toEqual(['no JetStream KV: conversations are kept in this process only']);
  });
});

describe('/ask conversation_id', () => {
  const ask = async (qs: string) => sseEvents(await (await fetch(`${base}/ask?${qs}`)).text());

  it('a follow-up gets the earlier questions as prev; an explicit prev wins', async () => {
    await ask('query=westerns&site=movies&conversation_id=ask-1');
    await ask('query=from+the+80s&site=movies&conversation_id=ask-1');
    expect(router.calls.at(-1)).toMatchObject({ query: 'from the 80s', prev: ['westerns'] });
    await ask('query=with+Hackman&site=movies&conversation_id=ask-1&prev=%5B%22something+else%22%5D');
    expect(router.calls.at(-1)?.prev).toEqual(['something else']);
    await ask('query=no+conversation&site=movies');
    expect(router.calls.at(-1)?.prev).toEqual([]);
  });

  it("the conversation is kept in the JetStream KV bucket the gateway's NATS user may use", async () => {
    const kv = await new Kvm(gatewayBus.nc).open(CONVERSATIONS_BUCKET);
    const keys: string[] = [];
    for await (const k of await kv.keys()) keys.push(k);
    expect(keys).toContain(`m.k.k${Buffer.from('ask-1').toString('base64url')}`);
  });

  it('protocol 0.5 meta.conversation_id joins the same store', async () => {
    const post = (text: string) =>
      fetch(`${base}/ask`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query: { text, site: 'movies' },
          return_response: { streaming: false },
          meta: { conversation_id: 'v05-1' },
        }),
      }).then((r) => r.text());
    await post('westerns');
    await post('from the 80s');
    expect(router.calls.at(-1)).toMatchObject({ query: 'from the 80s', prev: ['westerns'] });
  });
});

describe('A2A contextId (official @a2a-js/sdk client)', () => {
  it('a new task in the same contextId continues the conversation without prev', async () => {
    const client = await clientFor(base, 'JSONRPC');
    const first = asTask(await client.sendMessage(sendRequest(userMessage('westerns'))));
    const second = asTask(
      await client.sendMessage(
        sendRequest(userMessage('only the ones from the 80s', { contextId: first.contextId })),
      ),
    );
    expect(second.id).not.toBe(first.id);
    expect(router.calls.at(-1)).toMatchObject({
      query: 'only the ones from the 80s',
      prev: ['westerns'],
      conversationId: first.contextId,
    });
  });

  it('a conversation begun on /ask continues over A2A with the same id (one store)', async () => {
    await fetch(`${base}/ask?query=westerns&site=movies&conversation_id=shared-ctx-1`).then((r) => r.text());
    const client = await clientFor(base, 'HTTP+JSON');
    await client.sendMessage(sendRequest(userMessage('and from the 80s', { contextId: 'shared-ctx-1' })));
    expect(router.calls.at(-1)).toMatchObject({ query: 'and from the 80s', prev: ['westerns'] });
  });
});
