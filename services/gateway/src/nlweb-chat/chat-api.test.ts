import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPageWorld, type PageWorld } from '../pages/page-world';
import { buildGateway } from '../index';
import WebSocket from 'ws';
import type { Bus } from '@askbus/bus';
import type { testNats } from '@askbus/bus/testing';
import { testBus } from '@askbus/bus/testing';
import { NovPage, NovSocket, novMessage, novSseAsk, sseEvents } from '../pages/fake-pages';
import type { PageRouter } from '../pages/page-router';

// NLWeb's conversation API as its Nov 2025 page uses it (xrettle/NLWeb 0646d07, tracking
// nlweb-ai/NLWeb main: static/chat-interface-unified.js, static/chat-ui-common.js), against
// the real gateway over real WebSocket and SSE, on a real NATS (JetStream KV for the
// conversations) with a fake router that answers in the real router's order.
//
// What the page expects, from its code:
// - It opens `ws://<host>/chat/ws` on load (no parameters unless logged in) and ignores the
//   envelopes `connected`, `message_ack`, participant lists; with `?mode=sse` it opens an
//   EventSource on `/chat/sse?message=<the same message as JSON>` per question instead.
// - A question is `{type: "message", message_type: "user", message_id, conversation_id (the
//   page's own, Date.now()), content: {query, site, mode, prev_queries}, timestamp,
//   sender_info: {id, name}}`; the page shows it itself (the server must not echo it back).
// - The answer: `begin-nlweb-response` … `end-nlweb-response`; `result` with a list of items,
//   `summary` with `content`, `nlws` with `answer`/`items`, `item_details`; at the end it sorts the
//   results, and with no result/nlws/summary it replaces what it showed by "No answers were found".
// - `{type: "join", conversation_id}` (a shared link, `?conversation=`) replays the stored
//   conversation, then `{type: "end-conversation-history"}`; `conversation_created` sets its id.

let world: PageWorld;
let nats: Awaited<ReturnType<typeof testNats>>;
let gatewayBus: Bus;
let router: PageRouter;
let base: string;
const sockets: NovSocket[] = [];

beforeAll(async () => {
  world = await startPageWorld();
  ({ nats, gatewayBus, router, base } = world);
});

afterAll(async () => {
  for (const s of sockets) s.close();
  await world?.stop();
});

async function socket(at = base): Promise<NovSocket> {
  const s = await NovSocket.open(at);
  sockets.push(s);
  return s;
}

let convs = 0;
/** A conversation id as the page makes one: Date.now() as text. */
const newConversation = (): string => String(1_733_000_000_000 + convs++);

describe('/chat/ws as the Nov 2025 page uses it', () => {
  it('says connected, acks the question, answers begin … end in the page conversation, never echoes it', async () => {
    const s = await socket();
    const id = newConversation();
    const q = novMessage(id, 'westerns', { site: 'movies' });
    const answer = await s.ask(q);
    const frames = s.received();
    expect(frames[0]).toMatchObject({ type: 'connected', participant_id: expect.stringMatching(/^anon_/) });
    expect(frames[1]).toEqual({ type: 'message_ack', message_id: q.message_id });
    expect(frames.filter((f) => f.message_type === 'user')).toEqual([]);
    expect(answer.frames.map((f) => f.message_type)).toEqual([
      'begin-nlweb-response',
      'result',
      'result',
      'end-nlweb-response',
    ]);
    expect(answer.frames.every((f) => f.conversation_id === id)).toBe(true);
    expect(answer.items).toEqual(['Unforgiven', 'Pale Rider', 'High Plains Drifter']);
    expect(router.calls.at(-1)).toMatchObject({
      query: 'westerns',
      site: ['movies'],
      mode: 'list',
      conversationId: id,
    });
  });

  it('list on cars, summarize, generate: each renders, nothing twice', async () => {
    const s = await socket();
    const cars = await s.ask(novMessage(newConversation(), 'fuel efficient cars', { site: 'cars' }));
    expect(cars.items).toEqual(['Honda Civic', 'Toyota Corolla']);
    const summary = await s.ask(
      novMessage(newConversation(), 'westerns', { site: 'movies', mode: 'summarize' }),
    );
    expect(summary.texts).toEqual(['Unforgiven is the best match.']);
    expect(summary.items).toEqual(['Unforgiven', 'Pale Rider', 'High Plains Drifter']);
    expect(summary.frames.map((f) => f.message_type)).not.toContain('summary_chunk');
    const generated = await s.ask(
      novMessage(newConversation(), 'westerns', { site: 'movies', mode: 'generate' }),
    );
    expect(generated.texts).toEqual(['Try Unforgiven [1] or Pale Rider [2].']);
    // The cited items, once: the ranked results are held back when the answer comes.
    expect(generated.items).toEqual(['Unforgiven', 'Pale Rider']);
  });

  it('the clarifying question stays on screen (the page wipes ask_user text at the end)', async () => {
    const s = await socket();
    const a = await s.ask(novMessage(newConversation(), 'vague', { site: 'movies' }));
    expect(a.texts).toEqual(['What kind of movie are you looking for?']);
    expect(a.frames.find((f) => f.message_type === 'nlws')).toMatchObject({ ask_user: true, items: [] });
  });

  it('details, compare, irrelevant site, no results and a failure show what they should', async () => {
    const s = await socket();
    expect((await s.ask(novMessage(newConversation(), 'tell me about Pale Rider'))).items).toEqual([
      'Pale Rider',
    ]);
    const compare = await s.ask(novMessage(newConversation(), 'compare Unforgiven and Pale Rider'));
    expect(compare.texts).toEqual(['Unforgiven is darker than Pale Rider.', 'Unforgiven wins.']);
    expect(compare.items).toEqual(['Unforgiven', 'Pale Rider']);
    expect((await s.ask(novMessage(newConversation(), 'irrelevant'))).texts).toEqual([
      'This site has movies, not recipes.',
    ]);
    expect((await s.ask(novMessage(newConversation(), 'nothing'))).texts).toEqual([
      'No answers were found for your query.',
    ]);
    const failed = await s.ask(novMessage(newConversation(), 'fail'));
    expect(failed.texts).toEqual(['the fake router broke']);
    expect(failed.frames.at(-1)?.message_type).toBe('end-nlweb-response');
  });

  it('a follow-up needs no prev_queries: the earlier questions come from the store; sent ones win', async () => {
    const s = await socket();
    const id = newConversation();
    await s.ask(novMessage(id, 'westerns', { site: 'movies' }));
    await s.ask(novMessage(id, 'only the ones from the 80s', { site: 'movies' }));
    expect(router.calls.at(-1)).toMatchObject({ query: 'only the ones from the 80s', prev: ['westerns'] });
    await s.ask(novMessage(id, 'and the 90s', { site: 'movies', prevQueries: ['something else'] }));
    expect(router.calls.at(-1)?.prev).toEqual(['something else']);
    await s.ask(novMessage(id, 'with Gene Hackman', { site: 'movies' }));
    expect(router.calls.at(-1)?.prev).toEqual(['westerns', 'only the ones from the 80s', 'and the 90s']);
  });

  it('a message without a conversation id gets one (conversation_created)', async () => {
    const s = await socket();
    const q = novMessage('', 'westerns');
    await s.ask(q);
    const created = s.received().find((f) => f.type === 'conversation_created');
    expect(created?.conversation_id).toMatch(/^conv_[0-9a-f]{32}$/);
    expect(s.page.conversationId).toBe(created?.conversation_id);
    expect(router.calls.at(-1)?.conversationId).toBe(created?.conversation_id);
  });

  it('join replays the conversation (questions, answers), then end-conversation-history', async () => {
    const id = newConversation();
    const a = await socket();
    await a.ask(novMessage(id, 'westerns', { site: 'movies', userId: 'alice' }));
    await a.ask(novMessage(id, 'vague', { site: 'movies', userId: 'alice' }));
    const b = await socket();
    b.send({ type: 'join', conversation_id: id });
    await b.until((fs) => fs.some((f) => f.type === 'end-conversation-history'));
    expect(b.page.questions).toEqual(['westerns', 'vague']);
    expect(b.page.answers.map((x) => x.items)).toEqual([
      ['Unforgiven', 'Pale Rider', 'High Plains Drifter'],
      [],
    ]);
    expect(b.page.answers[1]?.texts).toEqual(['What kind of movie are you looking for?']);
    const end = b.received().find((f) => f.type === 'end-conversation-history')!;
    expect(end).toMatchObject({ conversation_id: id, message_count: 2 + 4 + 3 });
    // Joining as alice skips her own questions, as NLWeb does.
    const c = await socket();
    c.send({ type: 'join', conversation_id: id, user_id: 'alice' });
    await c.until((fs) => fs.some((f) => f.type === 'end-conversation-history'));
    expect(c.page.questions).toEqual([]);
    expect(c.page.answers).toHaveLength(2);
  });

  it('participants of a conversation see each other’s questions and the answers', async () => {
    const id = newConversation();
    const a = await socket();
    const b = await socket();
    b.send({ type: 'join', conversation_id: id });
    await b.until((fs) => fs.some((f) => f.type === 'end-conversation-history'));
    await a.ask(novMessage(id, 'westerns', { site: 'movies', userId: 'alice' }));
    await b.until((fs) => fs.some((f) => f.message_type === 'end-nlweb-response'));
    expect(b.page.questions).toEqual(['westerns']);
    expect(b.page.answers[0]?.items).toEqual(['Unforgiven', 'Pale Rider', 'High Plains Drifter']);
    b.send({ type: 'leave', conversation_id: id });
    b.send({ type: 'ping' });
    await b.until((fs) => fs.some((f) => f.type === 'pong'));
    await a.ask(novMessage(id, 'more', { site: 'movies', userId: 'alice' }));
    expect(b.page.questions).toEqual(['westerns']);
  });

  it('sites_request, ping, and errors in the protocol’s own form', async () => {
    const s = await socket();
    s.send({ type: 'sites_request' });
    s.send({ type: 'ping' });
    s.ws.send('{not json');
    s.send({ type: 'dance' });
    s.send({ type: 'message', conversation_id: 'x', content: { site: 'movies' } });
    s.send({ type: 'message', conversation_id: 'x', content: { query: 'q', site: 'no such site!' } });
    await s.until(
      (fs) =>
        fs.filter((f) => f.type === 'error').length === 4 && fs.some((f) => f.type === 'sites_response'),
    );
    const f = s.received();
    expect(f.find((x) => x.type === 'sites_response')).toEqual({
      type: 'sites_response',
      sites: ['movies', 'cars'],
    });
    expect(f.some((x) => x.type === 'pong')).toBe(true);
    expect(f.filter((x) => x.type === 'error')).toEqual([
      { type: 'error', error: 'invalid_json', message: 'Invalid JSON format', code: 400 },
      expect.objectContaining({ error: 'unknown_type', message: expect.stringContaining('"dance"') }),
      expect.objectContaining({
        error: 'invalid_message',
        message: expect.stringContaining('query is required'),
      }),
      expect.objectContaining({ error: 'invalid_message', message: expect.stringContaining('site') }),
    ]);
    // The socket still works after bad frames.
    expect((await s.ask(novMessage(newConversation(), 'westerns'))).items).toHaveLength(3);
  });

  it('a frame over the size limit closes that socket (1009); the gateway goes on', async () => {
    const s = await socket();
    const closed = new Promise<number>((resolve) => s.ws.once('close', (code) => resolve(code)));
    s.ws.send(JSON.stringify({ type: 'ping', pad: 'x'.repeat(1_100_000) }));
    expect(await closed).toBe(1009);
    expect((await (await socket()).ask(novMessage(newConversation(), 'westerns'))).items).toHaveLength(3);
  });

  it('closing the socket cancels its running question', async () => {
    const s = await socket();
    s.send(novMessage(newConversation(), 'hang'));
    await s.until((fs) => fs.some((f) => f.message_type === 'begin-nlweb-response'));
    const queryId = router.calls.at(-1)!.queryId;
    s.close();
    await expect.poll(() => router.aborted).toContain(queryId);
  });

  it('a plain GET /chat/ws is told to upgrade; an unknown WebSocket path is refused', async () => {
    const res = await fetch(`${base}/chat/ws`);
    expect(res.status).toBe(426);
    expect(await res.json()).toMatchObject({ type: 'error', error: 'upgrade_required' });
    const refused = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${base.replace('http', 'ws')}/chat/nowhere`);
      ws.on('unexpected-response', (_req, r) => resolve(r.statusCode ?? 0));
      ws.on('error', () => resolve(-1));
    });
    expect(refused).toBe(404);
  });
});

describe('/chat/sse as the Nov 2025 page uses it (?mode=sse)', () => {
  it('acks, answers begin … end, and ends the stream; results render', async () => {
    const id = newConversation();
    const q = novMessage(id, 'westerns', { site: 'movies' });
    const res = await fetch(`${base}/chat/sse?${new URLSearchParams({ message: JSON.stringify(q) })}`);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = sseEvents(await res.text());
    expect(events[0]).toEqual({ type: 'message_ack', message_id: q.message_id });
    expect(events.slice(1).map((e) => e.message_type)).toEqual([
      'begin-nlweb-response',
      'result',
      'result',
      'end-nlweb-response',
    ]);
    const page = new NovPage();
    const answer = await novSseAsk(base, novMessage(id, 'fuel efficient cars', { site: 'cars' }), page);
    expect(answer.items).toEqual(['Honda Civic', 'Toyota Corolla']);
    expect(router.calls.at(-1)?.prev).toEqual(['westerns']);
    // The page treats the end of every SSE stream as an error once end-nlweb-response closed
    // its answer (NLWeb's own server ends it the same way): a 5 s "Failed to get response".
    expect(answer.error).toBe('Failed to get response. Please try again.');
  });

  it('summarize, generate and the clarifying question', async () => {
    const s = await novSseAsk(
      base,
      novMessage(newConversation(), 'westerns', { site: 'movies', mode: 'summarize' }),
    );
    expect(s.texts).toEqual(['Unforgiven is the best match.']);
    const g = await novSseAsk(
      base,
      novMessage(newConversation(), 'westerns', { site: 'movies', mode: 'generate' }),
    );
    expect(g.items).toEqual(['Unforgiven', 'Pale Rider']);
    const v = await novSseAsk(base, novMessage(newConversation(), 'vague'));
    expect(v.texts).toEqual(['What kind of movie are you looking for?']);
  });

  it('bad input is a 400 in the chat API form', async () => {
    const missing = await fetch(`${base}/chat/sse`);
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ type: 'error', error: 'invalid_message' });
    const broken = await fetch(`${base}/chat/sse?message=%7Bnope`);
    expect(await broken.json()).toMatchObject({ type: 'error', error: 'invalid_json' });
    const noQuery = await fetch(
      `${base}/chat/sse?${new URLSearchParams({ message: JSON.stringify({ content: {} }) })}`,
    );
    expect(noQuery.status).toBe(400);
  });
});

describe('conversation endpoints and durability', () => {
  it('GET /chat/conversations/:id gives the conversation; GET /chat/my-conversations lists by participant', async () => {
    const id = newConversation();
    const s = await socket();
    await s.ask(novMessage(id, 'westerns', { site: 'movies', userId: 'carol' }));
    const conv = (await (await fetch(`${base}/chat/conversations/${id}`)).json()) as Record<string, unknown>;
    expect(conv).toMatchObject({
      id,
      title: 'westerns',
      sites: ['movies'],
      mode: 'list',
      participant_count: 1,
    });
    expect((conv.messages as { message_type: string }[]).map((m) => m.message_type)).toEqual([
      'user',
      'begin-nlweb-response',
      'result',
      'result',
      'end-nlweb-response',
    ]);
    expect((await fetch(`${base}/chat/conversations/nope`)).status).toBe(404);
    const mine = (await (await fetch(`${base}/chat/my-conversations?user_id=carol`)).json()) as {
      conversations: { conversation_id: string }[];
    };
    expect(mine.conversations.map((c) => c.conversation_id)).toEqual([id]);
    expect((await fetch(`${base}/chat/my-conversations`)).status).toBe(400);
  });

  it('a conversation survives the gateway: another gateway on the same NATS replays it and continues it', async () => {
    const id = newConversation();
    const s = await socket();
    await s.ask(novMessage(id, 'westerns', { site: 'movies' }));
    const otherBus = await testBus(nats.url, 'gateway-2');
    const other = await buildGateway(otherBus, { askTimeoutMs: 5_000 });
    try {
      const otherBase = await other.listen({ port: 0, host: '127.0.0.1' });
      const t = await socket(otherBase);
      t.send({ type: 'join', conversation_id: id });
      await t.until((fs) => fs.some((f) => f.type === 'end-conversation-history'));
      expect(t.page.questions).toEqual(['westerns']);
      await t.ask(novMessage(id, 'from the 80s', { site: 'movies' }));
      expect(router.calls.at(-1)?.prev).toEqual(['westerns']);
      t.close();
    } finally {
      await other.close();
      await otherBus.drain();
    }
  });
});

describe('with API keys', () => {
  it('the chat API needs a key; each client sees only its own conversations', async () => {
    const keyed = await buildGateway(gatewayBus, {
      askTimeoutMs: 5_000,
      auth: {
        keys: [
          { client: 'alice', key: 'key-of-alice' },
          { client: 'bob', key: 'key-of-bob' },
        ],
      },
    });
    try {
      const at = await keyed.listen({ port: 0, host: '127.0.0.1' });
      const wsUrl = `${at.replace('http', 'ws')}/chat/ws`;
      const status = await new Promise<number>((resolve) => {
        const ws = new WebSocket(wsUrl);
        ws.on('unexpected-response', (_req, r) => resolve(r.statusCode ?? 0));
        ws.on('open', () => resolve(101));
      });
      expect(status).toBe(401);
      expect((await fetch(`${at}/chat/sse?message=x`)).status).toBe(401);
      expect((await fetch(`${at}/chat/app.js`)).status).toBe(200); // the page's files stay open

      const id = newConversation();
      const ws = new WebSocket(wsUrl, { headers: { authorization: 'Bearer key-of-alice' } });
      const ended = new Promise<void>((resolve) =>
        ws.on('message', (d) => {
          if ((JSON.parse(d.toString()) as { message_type?: string }).message_type === 'end-nlweb-response')
            resolve();
        }),
      );
      await new Promise((r) => ws.once('open', r));
      ws.send(JSON.stringify(novMessage(id, 'westerns')));
      await ended;
      ws.close();
      const as = (key: string) => fetch(`${at}/chat/conversations/${id}`, { headers: { 'x-api-key': key } });
      expect((await as('key-of-alice')).status).toBe(200);
      expect((await as('key-of-bob')).status).toBe(404);
      const list = (await (
        await fetch(`${at}/chat/my-conversations`, { headers: { 'x-api-key': 'key-of-alice' } })
      ).json()) as {
        conversations: { conversation_id: string }[];
      };
      expect(list.conversations.map((c) => c.conversation_id)).toContain(id);
    } finally {
      await keyed.close();
    }
  });
});
