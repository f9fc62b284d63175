import { describe, expect, it } from 'vitest';
import { AskRequest, type Message, type MessageBody, type ScoredItem } from '@askbus/contracts';
import { BusError } from '@askbus/bus';
import { createLlm, Llm, LocalAdapter } from '@askbus/llm';
import { LatencyAdapter } from '@askbus/llm/testing';
import { loadTools } from '@askbus/tools';
import { runAsk } from './ask-pipeline';
import { answerDeadline } from './deadline';
import {
  defaultSearchSettings,
  runSearch,
  UNRANKED,
  type SearchPorts,
  type SearchStats,
} from './search-pipeline';
import { candidate } from './testing';

/**
 * Ports whose rankers answer the batches in `fast` at once (score 90) and hold the others until
 * their call is aborted, as a model far slower than any deadline would; `aborted` counts those.
 */
function slowPorts(count: number, fast: Set<number>): SearchPorts & { aborted: number } {
  let batch = 0;
  const ports = {
    aborted: 0,
    retrieve: async () => Array.from({ length: count }, (_, i) => candidate(i)),
    score: async function* (_q: string, items: { url: string }[], signal: AbortSignal) {
      if (!fast.has(batch++)) {
        await new Promise<void>((_, reject) =>
          signal.addEventListener('abort', () => {
            ports.aborted++;
            reject(new BusError('cancelled', 'cancelled by the caller'));
          }),
        );
      }
      for (const it of items) yield [{ url: it.url, score: 90, description: 'fast' } satisfies ScoredItem];
    },
  };
  return ports;
}

const request = (over: Partial<AskRequest> = {}): AskRequest =>
  AskRequest.parse({ queryId: 'q', query: 'anything', site: ['t'], ...over });

async function collect<T, R>(gen: AsyncGenerator<T, R>): Promise<{ out: T[]; ret: R }> {
  const out: T[] = [];
  for (;;) {
    const step = await gen.next();
    if (step.done) return { out, ret: step.value };
    out.push(step.value);
  }
}

const texts = (out: MessageBody[]): string[] =>
  out.flatMap((m) => (m.message_type === 'status' ? [String(m.content)] : []));

describe('answerDeadline', () => {
  it('takes the sooner of the budget and the caller deadline less its reserve', () => {
    expect(answerDeadline(1_000, undefined, undefined)).toBeUndefined();
    expect(answerDeadline(1_000, undefined, 3_000)).toBe(4_000);
    // 60 s left: 1 s kept back; 5 s left: a tenth of it.
    expect(answerDeadline(0, 60_000, undefined)).toBe(59_000);
    expect(answerDeadline(0, 5_000, undefined)).toBe(4_500);
    expect(answerDeadline(0, 5_000, 2_000)).toBe(2_000);
  });
});

describe('runSearch past its rank deadline', () => {
  const settings = { ...defaultSearchSettings, rankBatchSize: 2, collateMs: 5 };

  it('answers with the items scored by then, cancels the calls still running and says so', async () => {
    const ports = slowPorts(6, new Set([0]));
    const stats: SearchStats = { retrieved: 0, scored: 0, failedBatches: 0, sent: 0 };
    const started = Date.now();
    const { out, ret } = await collect(
      runSearch(
        request(),
        ports,
        new AbortController().signal,
        { ...settings, rankDeadline: Date.now() + 150 },
        stats,
      ),
    );
    // Generous: the deadline is 150 ms away; only a hang would take seconds.
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(ret.map((r) => r.url)).toEqual([candidate(0).url, candidate(1).url]);
    expect(ports.aborted).toBe(2);
    expect(stats).toMatchObject({ deadlinePassed: true, failedBatches: 0, missingItems: 4 });
    expect(texts(out).join(' ')).toMatch(/stopped at the query's deadline; 4 of 6 items were not ranked/);
  });

  it('sends the candidates in retrieval order, labelled unranked, when nothing was scored', async () => {
    const ports = slowPorts(6, new Set());
    const stats: SearchStats = { retrieved: 0, scored: 0, failedBatches: 0, sent: 0 };
    const { out, ret } = await collect(
      runSearch(
        request({ maxResults: 4 }),
        ports,
        new AbortController().signal,
        { ...settings, rankDeadline: Date.now() + 100 },
        stats,
      ),
    );
    expect(ret.map((r) => r.url)).toEqual([0, 1, 2, 3].map((n) => candidate(n).url));
    expect(ret.every((r) => r.score === 0 && r.description === UNRANKED)).toBe(true);
    expect(ports.aborted).toBe(3);
    expect(stats).toMatchObject({ deadlinePassed: true, unranked: 4 });
    const status = out.findIndex((m) => m.message_type === 'status');
    const result = out.findIndex((m) => m.message_type === 'result');
    expect(status).toBeGreaterThanOrEqual(0);
    expect(status).toBeLessThan(result); // the label comes before the items
    expect(texts(out)[0]).toMatch(/no item was scored.*unranked, in retrieval order/);
  });

  it('is not cut short when every item was scored before the deadline', async () => {
    const ports = slowPorts(4, new Set([0, 1]));
    const { out, ret } = await collect(
      runSearch(request(), ports, new AbortController().signal, {
        ...settings,
        rankDeadline: Date.now() + 5_000,
      }),
    );
    expect(ret).toHaveLength(4);
    expect(texts(out)).toEqual([]);
  });
});

describe('a tool that fails', () => {
  const routing = (runTool: () => AsyncIterable<Message>) => ({
    llm: createLlm({ provider: 'local' }),
    tools: loadTools(),
    siteTypes: async () => ['Movie'],
    runTool,
  });
  const ports = slowPorts(2, new Set([0]));
  const settings = { ...defaultSearchSettings, collateMs: 5 };

  async function ask(runTool: () => AsyncIterable<Message>): Promise<Message[]> {
    const { out } = await collect(
      runAsk(
        request({ tool: 'compare', query: 'compare a and b', site: ['movies'] }),
        ports,
        new AbortController().signal,
        settings,
        undefined,
        undefined,
        routing(runTool),
      ),
    );
    return out;
  }

  it('mid-answer ends the query with an error naming the tool', async () => {
    const out = await ask(async function* () {
      yield {
        message_type: 'intermediate_message',
        content: 'Looking for a and b',
        message_id: 'x',
        sender_type: 'assistant',
        timestamp: '',
        conversation_id: '',
      };
      throw new BusError('timeout', 'tool.v1.compare.run sent nothing for 5000 ms');
    });
    expect(out.map((m) => m.message_type)).toEqual([
      'begin-nlweb-response',
      'intermediate_message',
      'error',
      'end-nlweb-response',
    ]);
    expect(out[2]).toMatchObject({
      code: 'timeout',
      error: expect.stringMatching(/^The compare tool failed mid-answer: .*sent nothing/),
    });
    expect(out[3]).toMatchObject({ error: true });
  });

  it('before its answer began is searched around, as NLWeb falls back to ranking', async () => {
    // eslint-disable-next-line require-yield
    const out = await ask(async function* () {
      throw new BusError('no_responders', 'no service answers tool.v1.compare.run');
    });
    expect(out.some((m) => m.message_type === 'error')).toBe(false);
    expect(out.find((m) => m.message_type === 'status')).toMatchObject({
      content: expect.stringMatching(/compare tool failed.*searching instead/),
    });
    expect(out.some((m) => m.message_type === 'result')).toBe(true);
    expect(out.at(-1)).toMatchObject({ message_type: 'end-nlweb-response' });
  });
});

describe('prepare steps with a model slower than the deadline', () => {
  it('take their defaults at the deadline, and the query answers with the FastTrack results', async () => {
    // Every routing call takes a minute unless its signal aborts it first.
    const slow = new LatencyAdapter(new LocalAdapter(), () => 60_000);
    const ports = slowPorts(2, new Set([0]));
    const started = Date.now();
    const { out } = await collect(
      runAsk(
        request({ query: 'westerns', site: ['movies'] }),
        ports,
        new AbortController().signal,
        { ...defaultSearchSettings, collateMs: 5 },
        undefined,
        undefined,
        {
          llm: new Llm(slow),
          tools: loadTools(),
          siteTypes: async () => ['Movie'],
          runTool: () => {
            throw new Error('no tool runs here');
          },
          deadline: Date.now() + 200,
        },
      ),
    );
    // Generous: the deadline is 200 ms away, the model a minute.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(slow.cancelled).toBe(slow.started);
    expect(slow.started).toBeGreaterThan(0);
    expect(
      out.flatMap((m) => (m.message_type === 'result' && Array.isArray(m.content) ? m.content : [])),
    ).toHaveLength(2);
    expect(out.at(-1)).toMatchObject({ message_type: 'end-nlweb-response' });
  });
});
