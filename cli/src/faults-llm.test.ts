import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Message, ResultItem } from '@askbus/contracts';
import { startFakeLlm, type FakeLlm, type FakeFault } from '@askbus/llm/testing';
import { readAskStream, startDemoSystem, type DemoSystem } from './testing';

// An LLM outage must degrade a query, never fail it. The whole system as `askbus up` runs it
// (gateway, router, two rankers, the tool services, the demo sites), every service with
// ASKBUS_LLM_PROVIDER=openai pointed at a real HTTP server that answers garbage, HTTP 500 or
// nothing at all: /ask must answer with results (scored by the local scorer) and no `error`.

let system: DemoSystem;
let fake: FakeLlm;

beforeAll(async () => {
  fake = await startFakeLlm();
  vi.stubEnv('ASKBUS_LLM_PROVIDER', 'openai');
  vi.stubEnv('ASKBUS_LLM_BASE_URL', fake.baseURL);
  vi.stubEnv('ASKBUS_LLM_API_KEY', 'test');
  // A hanging model is given up on after 2 s per attempt; circuits retry it after 1 s.
  vi.stubEnv('ASKBUS_LLM_TIMEOUT_MS', '2000');
  vi.stubEnv('ASKBUS_LLM_BREAKER_COOLDOWN_MS', '1000');
  system = await startDemoSystem();
}, 60_000);

afterAll(async () => {
  await system?.stop();
  await fake?.close();
  vi.unstubAllEnvs();
});

beforeEach(() => fake.reset());

const results = (msgs: Message[]): ResultItem[] =>
  msgs.flatMap((m) => (m.message_type === 'result' && Array.isArray(m.content) ? m.content : []));
const statuses = (msgs: Message[]): string[] =>
  msgs.flatMap((m) => (m.message_type === 'status' ? [m.content] : []));

async function askWesterns(extra = ''): Promise<Message[]> {
  return readAskStream(`${system.running.url}/ask?query=westerns+with+clint+eastwood&site=movies${extra}`);
}

/** The model is down from now on; waits out the cool-down so every circuit tries it again. */
async function modelDown(fault: FakeFault): Promise<void> {
  await new Promise((r) => setTimeout(r, 1_100));
  fake.reset();
  fake.failAll(fault);
}

function expectAnswered(msgs: Message[]): ResultItem[] {
  expect(msgs.filter((m) => m.message_type === 'error')).toEqual([]);
  expect(msgs.at(-1)).toMatchObject({ message_type: 'end-nlweb-response' });
  expect(msgs.at(-1)).not.toHaveProperty('error');
  const got = results(msgs);
  expect(got.length).toBeGreaterThan(0);
  expect(got.map((r) => r.name)).toEqual(expect.arrayContaining(['Pale Rider']));
  return got;
}

describe('/ask on the demo while the model fails', () => {
  it('uses the model while it answers well (the baseline)', async () => {
    const msgs = await askWesterns();
    expectAnswered(msgs);
    expect(fake.requests).toBeGreaterThan(0);
    expect(statuses(msgs).filter((s) => /local scorer/.test(s))).toEqual([]);
  });

  it('answers garbage: results with fallback scores, a status saying so, no error', async () => {
    await modelDown({ kind: 'malformed' });
    const msgs = await askWesterns();
    const got = expectAnswered(msgs);
    expect(got[0]!.score).toBeGreaterThan(50);
    expect(statuses(msgs)).toContainEqual(
      expect.stringMatching(
        /items were scored by the local scorer instead of the language model: .*malformed/,
      ),
    );
    console.log(`garbage model: ${fake.requests} model requests for one query, ${got.length} results`);
  });

  it('answers HTTP 500: results with fallback scores, a bounded number of model calls, no error', async () => {
    await modelDown({ kind: 'status', status: 500 });
    const msgs = await askWesterns('&generate_mode=summarize');
    expectAnswered(msgs);
    expect(statuses(msgs)).toContainEqual(expect.stringMatching(/items were scored by the local scorer/));
    expect(msgs.some((m) => m.message_type === 'result' && '@type' in m && m['@type'] === 'Summary')).toBe(
      true,
    );
    console.log(
      `HTTP 500 model: ${fake.requests} model requests for one query (it was 168 with 3 tries a call)`,
    );
    // Router + 2 rankers, each ≤ concurrency 16 + (5 failures - 1) + retry budget 4 before its
    // circuit opens; far fewer in practice.
    expect(fake.requests).toBeLessThanOrEqual(3 * 24);

    // The gateway's /metrics counts the fallbacks and shows the open circuits.
    const metrics = await (await fetch(`${system.running.url}/metrics`)).text();
    expect(metrics).toMatch(
      /^askbus_llm_fallbacks_total\{service="ranker",provider="openai",task="rank",reason="(unavailable|circuit_open)"\} [1-9]/m,
    );
    expect(metrics).toMatch(
      /^askbus_llm_fallbacks_total\{service="router",provider="openai",task="summarize",reason="(unavailable|circuit_open)"\} [1-9]/m,
    );
    expect(metrics).toMatch(
      /^askbus_llm_circuit_state\{service="ranker",provider="openai",model="gpt-4.1-mini",state="open"\} [12]$/m,
    );
  });

  it('hangs: the query still answers with fallback scores, as one JSON body too', async () => {
    await modelDown({ kind: 'hang' });
    const res = await fetch(
      `${system.running.url}/ask?query=westerns+with+clint+eastwood&site=movies&streaming=false`,
      { signal: AbortSignal.timeout(30_000) },
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as { results?: { name: string; score: number }[]; error?: unknown };
    expect(body.error).toBeUndefined();
    expect((body.results ?? []).map((r) => r.name)).toEqual(expect.arrayContaining(['Pale Rider']));
  }, 30_000);
});
