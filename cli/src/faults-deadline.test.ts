import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Message, ResultItem } from '@askbus/contracts';
import { UNRANKED } from '@askbus/router';
import {
  readAskStream,
  spawnService,
  startDemoSystem,
  startSlowModel,
  type DemoSystem,
  type ServiceProcess,
  type SlowModel,
} from './testing';

// A model far slower than the query's deadline: the ranker is its own OS process using the real
// OpenAI-compatible provider against a real HTTP server that takes 10 minutes per answer, except
// for the calls a test lets through at once. The router (in this process, as `askbus up` runs
// it) has a time budget per query of DEADLINE_MS (ASKBUS_QUERY_DEADLINE_MS).

const DEADLINE_MS = 3_000;
/**
 * The query must end by the deadline plus this slack: room for retrieval, the last messages and
 * a loaded 2-core machine. It is far below the model's 10 minutes and the 60 s ask timeout, so
 * only the deadline can have ended the query.
 */
const SLACK_MS = 7_000;
const SLOW_MS = 600_000;

let system: DemoSystem;
let model: SlowModel;
let ranker: ServiceProcess | undefined;

beforeAll(async () => {
  vi.stubEnv('ASKBUS_QUERY_DEADLINE_MS', String(DEADLINE_MS));
  system = await startDemoSystem({ rankers: 0 });
  model = await startSlowModel(() => SLOW_MS);
  ranker = await spawnService('ranker', system.natsUrl, {
    ASKBUS_LLM_PROVIDER: 'openai',
    ASKBUS_LLM_BASE_URL: model.baseURL,
    ASKBUS_LLM_API_KEY: 'test',
  });
}, 60_000);

afterAll(async () => {
  await ranker?.kill();
  await system?.stop();
  await model?.close();
  vi.unstubAllEnvs();
});

const results = (msgs: Message[]): ResultItem[] =>
  msgs.flatMap((m) => (m.message_type === 'result' && Array.isArray(m.content) ? m.content : []));
const statuses = (msgs: Message[]): string[] =>
  msgs.flatMap((m) => (m.message_type === 'status' ? [m.content] : []));

async function askWesterns(): Promise<{ msgs: Message[]; tookMs: number }> {
  const started = Date.now();
  const msgs = await readAskStream(
    // a question that many items satisfy: the retriever gives the ranker its 50 candidates
    `${system.running.url}/ask?query=dramas&site=movies&tool=search`,
  );
  return { msgs, tookMs: Date.now() - started };
}

/** Every model call that reached the server and got no answer was closed by the ranker. */
async function expectOutstandingCallsAborted(): Promise<void> {
  const until = Date.now() + 10_000;
  while (model.open > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  expect(model.open).toBe(0);
  expect(model.abandoned).toBeGreaterThan(0);
  expect(model.abandoned).toBe(model.received - model.answered);
}

describe('a model slower than the query deadline', () => {
  it('ends the query by the deadline with the items scored so far, and aborts the calls still out', async () => {
    model.reset();
    model.delayOf = (n) => (n < 4 ? 0 : SLOW_MS);
    const { msgs, tookMs } = await askWesterns();
    console.log(
      `ended after ${tookMs} ms (deadline ${DEADLINE_MS} ms); model calls: ${model.received} received, ` +
        `${model.answered} answered, ${model.abandoned} abandoned`,
    );

    expect(tookMs).toBeLessThan(DEADLINE_MS + SLACK_MS);
    const kept = results(msgs);
    expect(kept).toHaveLength(4);
    expect(kept.every((r) => r.score === 90)).toBe(true);
    expect(statuses(msgs).join(' ')).toMatch(
      /Ranking is incomplete: it was stopped at the query's deadline; 46 of 50 items were not ranked/,
    );
    expect(msgs.some((m) => m.message_type === 'error')).toBe(false);
    expect(msgs.at(-1)).toMatchObject({ message_type: 'end-nlweb-response' });
    expect(msgs.at(-1)).not.toHaveProperty('error');
    await expectOutstandingCallsAborted();
  }, 30_000);

  it('with nothing scored, answers in retrieval order labelled unranked, on time', async () => {
    model.reset();
    model.delayOf = () => SLOW_MS;
    const { msgs, tookMs } = await askWesterns();
    console.log(`ended after ${tookMs} ms with nothing scored; ${model.abandoned} model calls abandoned`);

    expect(tookMs).toBeLessThan(DEADLINE_MS + SLACK_MS);
    const unranked = results(msgs);
    expect(unranked).toHaveLength(10); // max_results
    expect(unranked.every((r) => r.score === 0 && r.description === UNRANKED)).toBe(true);
    expect(new Set(unranked.map((r) => r.url)).size).toBe(10);
    expect(unranked.every((r) => (r.schema_object.genre as string[]).includes('Drama'))).toBe(true);
    expect(statuses(msgs)[0]).toMatch(/no item was scored: these 10 of 50 candidates are unranked/);
    expect(msgs.at(-1)).toMatchObject({ message_type: 'end-nlweb-response' });
    expect(model.answered).toBe(0);
    await expectOutstandingCallsAborted();
  }, 30_000);
});
