import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Message } from '@askbus/contracts';
import { startFakeLlm, type FakeLlm } from '@askbus/llm/testing';
import { readAskStream, startDemoSystem, type DemoSystem } from './testing';

// A model that begins the summary / answer and then stalls for ever, behind the real
// OpenAI-compatible provider of every service of `askbus up` (ASKBUS_LLM_*): streamed calls (the
// summary and the answer) get a few deltas at once and then nothing, other calls (ranking, the
// prepare steps) are passed on to the fake model, which answers them at once. The router's time
// budget per query is DEADLINE_MS (ASKBUS_QUERY_DEADLINE_MS): at it the summary / answer is cut.

const DEADLINE_MS = 3_000;
/**
 * The query must end by the deadline plus this slack: room for the last messages on a loaded
 * 2-core machine. Far below the stalled model's "for ever" and the 60 s ask timeout, so only the
 * deadline can have ended the query.
 */
const SLACK_MS = 7_000;
const DELTAS = ['Pale Rider [1] ', 'is a western ', 'with Clint'];

interface StallingModel {
  baseURL: string;
  /** Streamed calls received, and those the client closed before they ended. */
  readonly streamed: number;
  readonly abandoned: number;
  reset(): void;
  close(): Promise<void>;
}

async function startStallingModel(fake: FakeLlm): Promise<StallingModel> {
  let streamed = 0;
  let abandoned = 0;
  const server: Server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks);
      if (!(JSON.parse(body.toString('utf8')) as { stream?: boolean }).stream) {
        const answer = await fetch(`${fake.baseURL}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(await answer.text());
        return;
      }
      streamed++;
      res.on('close', () => abandoned++);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const send = (delta: Record<string, string>): void => {
        const chunk = { id: 'c', object: 'chat.completion.chunk', created: 0, model: 'stall' };
        res.write(
          `data: ${JSON.stringify({ ...chunk, choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`,
        );
      };
      send({ role: 'assistant', content: '' });
      for (const d of DELTAS) send({ content: d });
      // …and nothing more: the answer never ends.
    })().catch(() => res.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    get streamed() {
      return streamed;
    },
    get abandoned() {
      return abandoned;
    },
    reset: () => {
      streamed = abandoned = 0;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

let fake: FakeLlm;
let model: StallingModel;
let system: DemoSystem;

beforeAll(async () => {
  fake = await startFakeLlm();
  model = await startStallingModel(fake);
  vi.stubEnv('ASKBUS_QUERY_DEADLINE_MS', String(DEADLINE_MS));
  vi.stubEnv('ASKBUS_LLM_PROVIDER', 'openai');
  vi.stubEnv('ASKBUS_LLM_BASE_URL', model.baseURL);
  vi.stubEnv('ASKBUS_LLM_API_KEY', 'test');
  system = await startDemoSystem();
}, 60_000);

afterAll(async () => {
  await system?.stop();
  await model?.close();
  await fake?.close();
  vi.unstubAllEnvs();
});

async function askWesterns(mode: 'summarize' | 'generate'): Promise<{ msgs: Message[]; tookMs: number }> {
  const started = Date.now();
  const msgs = await readAskStream(
    `${system.running.url}/ask?query=westerns+with+clint+eastwood&site=movies&tool=search&generate_mode=${mode}`,
  );
  return { msgs, tookMs: Date.now() - started };
}

const contents = (msgs: Message[], type: string): string[] =>
  msgs.flatMap((m) => (m.message_type === type ? [(m as { content: string }).content] : []));

/** The stalled model call was closed by the router: aborted, not left running. */
async function expectStreamedCallAborted(): Promise<void> {
  const until = Date.now() + 10_000;
  while (model.abandoned < model.streamed && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  expect(model.streamed).toBe(1);
  expect(model.abandoned).toBe(1);
}

describe('a model that stalls while writing the summary or answer', () => {
  it('summarize: the query ends at the deadline with the summary so far, marked as cut', async () => {
    model.reset();
    const { msgs, tookMs } = await askWesterns('summarize');
    console.log(`summarize ended after ${tookMs} ms (deadline ${DEADLINE_MS} ms)`);

    expect(tookMs).toBeLessThan(DEADLINE_MS + SLACK_MS);
    expect(msgs.some((m) => m.message_type === 'result' && Array.isArray(m.content))).toBe(true);
    expect(contents(msgs, 'summary_chunk')).toEqual(DELTAS);
    expect(msgs).toContainEqual(
      expect.objectContaining({
        message_type: 'result',
        '@type': 'Summary',
        content: DELTAS.join('').trim(),
      }),
    );
    expect(contents(msgs, 'status').join(' ')).toMatch(/summary was cut at the query's deadline/);
    expect(msgs.some((m) => m.message_type === 'error')).toBe(false);
    expect(msgs.at(-1)).toMatchObject({ message_type: 'end-nlweb-response' });
    expect(msgs.at(-1)).not.toHaveProperty('error');
    await expectStreamedCallAborted();
  }, 30_000);

  it('generate: the query ends at the deadline with the nlws answer so far, marked as cut', async () => {
    model.reset();
    const { msgs, tookMs } = await askWesterns('generate');
    console.log(`generate ended after ${tookMs} ms (deadline ${DEADLINE_MS} ms)`);

    expect(tookMs).toBeLessThan(DEADLINE_MS + SLACK_MS);
    expect(contents(msgs, 'nlws_chunk')).toEqual(DELTAS);
    const nlws = msgs.find((m) => m.message_type === 'nlws') as
      { answer: string; items: { name: string }[] } | undefined;
    expect(nlws?.answer).toBe(DELTAS.join('').trim());
    expect(nlws?.items.length).toBeGreaterThan(0);
    expect(contents(msgs, 'status').join(' ')).toMatch(/answer was cut at the query's deadline/);
    expect(msgs.some((m) => m.message_type === 'error')).toBe(false);
    expect(msgs.at(-1)).toMatchObject({ message_type: 'end-nlweb-response' });
    expect(msgs.at(-1)).not.toHaveProperty('error');
    await expectStreamedCallAborted();
  }, 30_000);
});
