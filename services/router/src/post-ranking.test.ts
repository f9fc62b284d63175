import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AskRequest, Message, type MessageBody, type ResultItem } from '@askbus/contracts';
import { createLlm, loadPrompts } from '@askbus/llm';
import { startFakeLlm, type FakeLlm } from '@askbus/llm/testing';
import { citedItems, postRanking, type AnswerModel } from './post-ranking';
import { runAsk } from './ask-pipeline';
import type { SearchPorts } from './search-pipeline';

const result = (n: number, score: number): ResultItem => ({
  '@type': 'Item',
  url: `https://movies.example/${n}`,
  name: `Movie ${n}`,
  site: 'movies',
  siteUrl: 'movies',
  score,
  description: `description ${n}`,
  schema_object: { '@type': 'Movie', name: `Movie ${n}` },
});
const results = [result(1, 95), result(2, 80), result(3, 70), result(4, 40)];
const request = (mode: 'summarize' | 'generate' | 'list') =>
  AskRequest.parse({ queryId: 'q', query: 'good movies', site: ['movies'], mode });

async function collect(gen: AsyncIterable<MessageBody>): Promise<MessageBody[]> {
  const out: MessageBody[] = [];
  for await (const m of gen) out.push(m);
  return out;
}
const text = (msgs: MessageBody[], type: string): string =>
  msgs
    .filter((m) => m.message_type === type)
    .map((m) => (m as { content: string }).content)
    .join('');

describe('summarize and generate with the local model', () => {
  it('streams summary chunks, then the whole Summary citing the top results', async () => {
    const msgs = await collect(postRanking(request('summarize'), results));
    const chunks = msgs.filter((m) => m.message_type === 'summary_chunk');
    expect(chunks.length).toBeGreaterThan(3);
    const summary = msgs.at(-1) as { message_type: string; '@type': string; content: string };
    expect(summary).toMatchObject({ message_type: 'result', '@type': 'Summary' });
    expect(summary.content).toBe(text(msgs, 'summary_chunk').trim());
    expect(summary.content).toContain('Movie 1 [1]');
    expect(summary.content).not.toContain('Movie 4');
  });

  it('streams an nlws answer and sends it whole with the items it cites', async () => {
    const msgs = await collect(postRanking(request('generate'), results));
    const nlws = msgs.at(-1) as { message_type: string; answer: string; items: ResultItem[] };
    expect(nlws.message_type).toBe('nlws');
    expect(nlws.answer).toBe(text(msgs, 'nlws_chunk').trim());
    // score 40 is below generate's threshold (55): never offered to the model
    expect(nlws.items.map((i) => i.name)).toEqual(['Movie 1', 'Movie 2', 'Movie 3']);
  });

  it('sends nothing more in list mode', async () => {
    expect(await collect(postRanking(request('list'), results))).toEqual([]);
  });

  it('keeps cited items in citation order', () => {
    expect(
      citedItems('B [2] then A [1] and B again [2], [9] is nothing', results).map((r) => r.name),
    ).toEqual(['Movie 2', 'Movie 1']);
    expect(citedItems('no citations', results.slice(0, 2))).toHaveLength(2);
  });
});

describe('summarize and generate with an OpenAI-compatible model over HTTP', () => {
  let fake: FakeLlm;
  let model: AnswerModel;
  beforeAll(async () => {
    fake = await startFakeLlm({ latencyMs: 10, chunkMs: 2 });
    model = {
      llm: createLlm({ provider: 'openai', baseURL: fake.baseURL, apiKey: 'x', maxRetries: 0 }),
      prompts: loadPrompts(),
    };
  });
  afterAll(async () => fake?.close());

  it('streams the model answer as it is written and cites what the model cited', async () => {
    const msgs = await collect(postRanking(request('generate'), results, model));
    expect(fake.prompts.at(-1)).toContain('Answer the user');
    const chunks = msgs.filter((m) => m.message_type === 'nlws_chunk');
    expect(chunks.length).toBeGreaterThan(5);
    const nlws = msgs.at(-1) as { answer: string; items: ResultItem[] };
    expect(nlws.answer).toContain('Movie 1 [1]');
    expect(nlws.items.map((i) => i.name)).toEqual(['Movie 1', 'Movie 2', 'Movie 3']);
  });

  it('writes it with the local composer when the model fails, says so, and the query ends well', async () => {
    fake.fail({ kind: 'status', status: 400 });
    const ports: SearchPorts = {
      retrieve: async () => results.map((r) => ({ ...r, '@type': 'Movie', retrievalScore: r.score })),
      score: async function* (_q, items) {
        for (const it of items) yield [{ url: it.url, score: 90, description: 'd' }];
      },
    };
    const msgs: Message[] = [];
    for await (const m of runAsk(
      request('summarize'),
      ports,
      new AbortController().signal,
      undefined,
      undefined,
      model,
    )) {
      msgs.push(m);
    }
    for (const m of msgs) expect(Message.safeParse(m).success).toBe(true);
    expect(
      msgs.some(
        (m) =>
          m.message_type === 'status' &&
          /summary was written from the items by the local composer: the model refused the request/.test(
            m.content,
          ),
      ),
    ).toBe(true);
    const summary = msgs.find((m) => m.message_type === 'result' && '@type' in m && m['@type'] === 'Summary');
    expect(summary).toMatchObject({ content: expect.stringContaining('Movie 1 [1]') as string });
    expect(msgs.at(-1)).toMatchObject({ message_type: 'end-nlweb-response' });
    expect(msgs.at(-1)).not.toHaveProperty('error');
  });
});
