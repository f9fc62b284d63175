import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Message, ResultItem } from '@askbus/contracts';
import {
  readAskStream,
  spawnService,
  startDemoSystem,
  startSlowModel,
  type DemoSystem,
  type ServiceProcess,
  type SlowModel,
} from './testing';

// Faults of one service process: a tool service or the only ranker is SIGKILLed while it is in
// the middle of an answer. The rest of the system runs in this process (as `askbus up` runs
// it) on a nats-server of its own; the victims are real OS processes whose model is a real HTTP
// server that answers as slowly as each test needs.

/** The router notices a silent tool or ranker after this long (their heartbeats come every 2 s). */
const INACTIVITY_MS = 5_000;
/**
 * How long after the kill the query may take to end: the inactivity limit plus a wide margin
 * for a loaded 2-core machine. It still proves the point: without the fix or the limit, the
 * query would wait for the 60 s ask timeout or end without the error.
 */
const END_WITHIN_MS = INACTIVITY_MS + 15_000;

let system: DemoSystem;
let toolModel: SlowModel;
let rankModel: SlowModel;
let compare: ServiceProcess | undefined;
let ranker: ServiceProcess | undefined;

beforeAll(async () => {
  vi.stubEnv('ASKBUS_ROUTER_INACTIVITY_MS', String(INACTIVITY_MS));
  // No ranker in this process: the only one is the process the ranker test kills.
  system = await startDemoSystem({ rankers: 0 });
  // The compare tool of this process goes too: the only one is the process the tool test kills.
  await system.running.buses.find((b) => b.service === 'tool-compare')!.drain(1_000);
  // The compare tool's model never answers in time; the ranker's answers its first 3 calls at once.
  toolModel = await startSlowModel(() => 600_000);
  rankModel = await startSlowModel((n) => (n < 3 ? 0 : 600_000));
  const llm = (model: SlowModel) => ({
    ASKBUS_LLM_PROVIDER: 'openai',
    ASKBUS_LLM_BASE_URL: model.baseURL,
    ASKBUS_LLM_API_KEY: 'test',
  });
  [compare, ranker] = await Promise.all([
    spawnService('tool-compare', system.natsUrl, llm(toolModel)),
    spawnService('ranker', system.natsUrl, llm(rankModel)),
  ]);
}, 60_000);

afterAll(async () => {
  await compare?.kill();
  await ranker?.kill();
  await system?.stop();
  await toolModel?.close();
  await rankModel?.close();
  vi.unstubAllEnvs();
});

const results = (msgs: Message[]): ResultItem[] =>
  msgs.flatMap((m) => (m.message_type === 'result' && Array.isArray(m.content) ? m.content : []));

describe('a service process killed mid-query', () => {
  it('a tool service: the query still ends, promptly, with an error naming the tool', async () => {
    let killedAt = 0;
    const started = Date.now();
    const msgs = await readAskStream(
      `${system.running.url}/ask?query=compare+Pale+Rider+and+Unforgiven&site=movies&tool=compare`,
      (m) => {
        // Mid-answer: it said what it looks for and is waiting on its model.
        if (m.message_type === 'intermediate_message' && !killedAt) {
          void waitFor(() => toolModel.received > 0).then(() => {
            killedAt = Date.now();
            return compare!.kill();
          });
        }
      },
    );
    const endedAfterKill = Date.now() - killedAt;
    console.log(
      `tool killed ${killedAt - started} ms in; the query ended ${endedAfterKill} ms after the kill`,
    );

    expect(killedAt).toBeGreaterThan(0);
    expect(endedAfterKill).toBeLessThan(END_WITHIN_MS);
    const error = msgs.find((m) => m.message_type === 'error');
    expect(error).toMatchObject({
      code: 'timeout',
      error: expect.stringMatching(
        /^The compare tool failed mid-answer: tool\.v1\.compare\.run sent nothing/,
      ),
    });
    expect(msgs.at(-1)).toMatchObject({ message_type: 'end-nlweb-response', error: true });
    expect(msgs.some((m) => m.message_type === 'compare_items')).toBe(false);
  }, 60_000);

  it('the only ranker: the query ends, keeps the scored results and says ranking was incomplete', async () => {
    let killedAt = 0;
    const msgs = await readAskStream(
      // a question many items satisfy, so the ranker has 50 candidates to score
      `${system.running.url}/ask?query=dramas&site=movies&tool=search`,
      (_m, all) => {
        // Mid-ranking: the 3 quick scores arrived (score 90 is sent at once), 47 are in the works.
        if (!killedAt && results(all).length >= 3) {
          killedAt = Date.now();
          void ranker!.kill();
        }
      },
    );
    const endedAfterKill = Date.now() - killedAt;
    console.log(`the query ended ${endedAfterKill} ms after the ranker was killed`);

    expect(killedAt).toBeGreaterThan(0);
    expect(endedAfterKill).toBeLessThan(END_WITHIN_MS);
    const kept = results(msgs);
    expect(kept).toHaveLength(3);
    expect(kept.every((r) => r.score === 90 && r.description === 'scored by the slow test model')).toBe(true);
    const status = msgs.find((m) => m.message_type === 'status');
    expect(status).toMatchObject({
      content: expect.stringMatching(
        /^Ranking is incomplete: \d+ of \d+ ranking calls failed; 47 of 50 items/,
      ),
    });
    expect(msgs.some((m) => m.message_type === 'error')).toBe(false);
    expect(msgs.at(-1)).toMatchObject({ message_type: 'end-nlweb-response' });
  }, 60_000);
});

async function waitFor(check: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
