import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AskRequest, type Message, type MessageBody, type ResultItem } from '@askbus/contracts';
import { createLlm, loadPrompts } from '@askbus/llm';
import { runAsk } from './ask-pipeline';
import { postRanking, type AnswerModel } from './post-ranking';
import { defaultSearchSettings, type SearchPorts } from './search-pipeline';

// The query's deadline bounds retrieval and the summary / answer too. The model is the real
// OpenAI-compatible client against a real HTTP server that streams a few deltas at once and then
// stalls for ever, as a model that is far too slow would.

/** The deadline of each query, from its start. */
const DEADLINE_MS = 800;
/** Room past the deadline for a loaded 2-core machine; far below the stalled model's "for ever". */
const SLACK_MS = 2_500;

interface StallingModel {
  model: AnswerModel;
  /** Deltas streamed before the stall. */
  deltas: string[];
  readonly received: number;
  /** Requests whose connection the client closed before the answer ended. */
  readonly abandoned: number;
  close(): Promise<void>;
}

async function startStallingModel(): Promise<StallingModel> {
  let received = 0;
  let abandoned = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    received++;
    res.on('close', () => abandoned++);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (delta: Record<string, string>): void => {
      const chunk = { id: 'c', object: 'chat.completion.chunk', created: 0, model: 'stall' };
      res.write(
        `data: ${JSON.stringify({ ...chunk, choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`,
      );
    };
    send({ role: 'assistant', content: '' });
    for (const d of stalling.deltas) send({ content: d });
    // …and nothing more: the answer never ends.
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const stalling: StallingModel = {
    model: {
      llm: createLlm({ provider: 'openai', baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'test' }),
      prompts: loadPrompts(),
    },
    deltas: [],
    get received() {
      return received;
    },
    get abandoned() {
      return abandoned;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  return stalling;
}

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
const results = [result(1, 95), result(2, 80), result(3, 70)];
const request = (mode: 'summarize' | 'generate') =>
  AskRequest.parse({ queryId: 'q', query: 'good movies', site: ['movies'], mode });

let stalling: StallingModel;
beforeAll(async () => {
  stalling = await startStallingModel();
});
afterAll(async () => {
  await stalling?.close();
});
beforeEach(() => {
  stalling.deltas = ['Movie 1 [1] ', 'is the ', 'best'];
});

async function timed<T>(gen: AsyncIterable<T>): Promise<{ msgs: T[]; tookMs: number }> {
  const started = Date.now();
  const msgs: T[] = [];
  for await (const m of gen) msgs.push(m);
  return { msgs, tookMs: Date.now() - started };
}

/** The model's HTTP request was closed by the client (the call was aborted, not left running). */
async function expectModelCallAborted(): Promise<void> {
  const until = Date.now() + 5_000;
  while (stalling.abandoned < stalling.received && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(stalling.abandoned).toBe(stalling.received);
}

describe('a summary or answer still being written at the deadline', () => {
  it('summarize: keeps the deltas, closes the Summary with them, says it was cut, aborts the model call', async () => {
    const before = stalling.received;
    const { msgs, tookMs } = await timed(
      postRanking(request('summarize'), results, stalling.model, undefined, Date.now() + DEADLINE_MS),
    );
    expect(stalling.received).toBe(before + 1);
    expect(tookMs).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(tookMs).toBeLessThan(DEADLINE_MS + SLACK_MS);
    expect(
      msgs.filter((m) => m.message_type === 'summary_chunk').map((m) => (m as { content: string }).content),
    ).toEqual(stalling.deltas);
    expect(msgs.at(-2)).toEqual({
      message_type: 'result',
      '@type': 'Summary',
      content: 'Movie 1 [1] is the best',
    });
    expect(msgs.at(-1)).toMatchObject({
      message_type: 'status',
      content: expect.stringMatching(/summary was cut at the query's deadline/),
    });
    await expectModelCallAborted();
  });

  it('generate: closes the nlws answer with the text so far and the items it cites', async () => {
    const { msgs, tookMs } = await timed(
      postRanking(request('generate'), results, stalling.model, undefined, Date.now() + DEADLINE_MS),
    );
    expect(tookMs).toBeLessThan(DEADLINE_MS + SLACK_MS);
    expect(msgs.filter((m) => m.message_type === 'nlws_chunk')).toHaveLength(3);
    const nlws = msgs.at(-2) as { message_type: string; answer: string; items: ResultItem[] };
    expect(nlws).toMatchObject({ message_type: 'nlws', answer: 'Movie 1 [1] is the best' });
    expect(nlws.items.map((i) => i.name)).toEqual(['Movie 1']);
    expect(msgs.at(-1)).toMatchObject({
      message_type: 'status',
      content: expect.stringMatching(/answer was cut at the query's deadline/),
    });
    await expectModelCallAborted();
  });

  it('with nothing written by the deadline, says so and sends no empty answer', async () => {
    stalling.deltas = [];
    const { msgs, tookMs } = await timed(
      postRanking(request('summarize'), results, stalling.model, undefined, Date.now() + DEADLINE_MS),
    );
    expect(tookMs).toBeLessThan(DEADLINE_MS + SLACK_MS);
    expect(msgs.map((m) => m.message_type)).toEqual(['status']);
    expect(msgs[0]).toMatchObject({
      content: expect.stringMatching(/summary was not written: the query's deadline/),
    });
    await expectModelCallAborted();
  });

  it("a cancel of the query itself is not a cut: it ends the stream with the cancel's error", async () => {
    const cancel = new AbortController();
    setTimeout(() => cancel.abort(new Error('the client hung up')), 300);
    const gen = postRanking(
      request('summarize'),
      results,
      stalling.model,
      cancel.signal,
      Date.now() + 60_000,
    );
    await expect(timed(gen)).rejects.toThrow();
    await expectModelCallAborted();
  });

  it('runAsk: the cut answer is followed by end-nlweb-response without an error, on time', async () => {
    const ports: SearchPorts = {
      retrieve: async () =>
        results.map(({ score: _s, description: _d, ...item }) => ({ ...item, retrievalScore: 1 })),
      score: async function* (_q, items) {
        for (const it of items) yield [{ url: it.url, score: 90, description: 'good' }];
      },
    };
    const settings = { ...defaultSearchSettings, rankDeadline: Date.now() + DEADLINE_MS };
    const { msgs, tookMs } = await timed<Message>(
      runAsk(request('summarize'), ports, new AbortController().signal, settings, undefined, stalling.model),
    );
    expect(tookMs).toBeLessThan(DEADLINE_MS + SLACK_MS);
    const types = msgs.map((m) => m.message_type);
    expect(types).toContain('summary_chunk');
    expect(types.slice(-3)).toEqual(['result', 'status', 'end-nlweb-response']);
    expect(msgs.at(-1)).not.toHaveProperty('error');
    expect(types).not.toContain('error');
  });
});

describe('retrieval still running at the deadline', () => {
  const neverAnswers = (seen: AbortSignal[], honoursAbort: boolean): SearchPorts => ({
    retrieve: (_req, signal) => {
      seen.push(signal);
      return new Promise((_, reject) => {
        if (honoursAbort)
          signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
      });
    },
    score: async function* () {
      yield* [];
    },
  });

  for (const honoursAbort of [true, false]) {
    it(`ends the query with a clear error on time (a port that ${honoursAbort ? 'honours' : 'ignores'} the abort)`, async () => {
      const seen: AbortSignal[] = [];
      const settings = { ...defaultSearchSettings, rankDeadline: Date.now() + DEADLINE_MS };
      const { msgs, tookMs } = await timed<MessageBody>(
        runAsk(
          request('summarize'),
          neverAnswers(seen, honoursAbort),
          new AbortController().signal,
          settings,
        ),
      );
      expect(tookMs).toBeLessThan(DEADLINE_MS + SLACK_MS);
      expect(msgs.map((m) => m.message_type)).toEqual([
        'begin-nlweb-response',
        'error',
        'end-nlweb-response',
      ]);
      expect(msgs[1]).toMatchObject({
        code: 'deadline_exceeded',
        error: expect.stringMatching(
          /Retrieval did not finish before the query's deadline.*nothing to answer from/,
        ),
      });
      expect(msgs[2]).toMatchObject({ error: true });
      // The retrieval call itself was told to stop (over NATS the bus then cancels it).
      expect(seen[0]?.aborted).toBe(true);
    });
  }
});
