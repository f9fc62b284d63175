import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { itemFromPrompt, localRankAnswers, readRankingPrompt } from './ranking';
import { hasLocalAnswer, localTaskAnswer, readTaskPrompt } from './tasks';
import { LlmError } from './errors';
import type { AdapterRequest, LlmAdapter, Usage } from './types';

/** What the next request does instead of answering normally (tests queue these). */
export type FakeFault =
  | { kind: 'status'; status: number }
  | { kind: 'malformed' }
  /** Answers this text as the model's content, whatever was asked. */
  | { kind: 'answer'; text: string }
  | { kind: 'hang' }
  | { kind: 'delay'; ms: number };

export interface FakeLlmOptions {
  /** Injected latency before each answer, in ms. */
  latencyMs?: number;
  /** Pause between streamed chunks, in ms. */
  chunkMs?: number;
  port?: number;
}

export interface FakeLlm {
  url: string;
  /** The base URL an OpenAI client wants (…/v1). */
  baseURL: string;
  latencyMs: number;
  /** Requests received (every POST to /v1/chat/completions). */
  readonly requests: number;
  /** The last user prompts received (up to 200), oldest first. */
  readonly prompts: string[];
  /** Most requests in flight at once. */
  readonly maxConcurrent: number;
  /** Requests of each kind of answer. */
  readonly byKind: Record<string, number>;
  /** Faults for the next requests, first in first out. */
  fail(...faults: FakeFault[]): void;
  /** A fault for every request after the queued ones (a model that is down), until cleared. */
  failAll(fault: FakeFault | undefined): void;
  reset(): void;
  close(): Promise<void>;
}

interface ChatBody {
  model?: string;
  /** Anthropic's Messages API puts the system prompt here. */
  system?: string;
  stream?: boolean;
  messages?: { role: string; content: unknown }[];
  response_format?: { type?: string; json_schema?: { name?: string } };
  stream_options?: { include_usage?: boolean };
}

/**
 * An OpenAI-compatible chat-completions server for tests and benchmarks only, on 127.0.0.1.
 * Its ranking answers are computed by the local scorer from the items in the prompt
 * (`<question>` and `<item index="n">` marks), so benchmark results mean something; other
 * prompts with items get a short answer citing them as [n]. Streams as OpenAI does (SSE).
 */
export async function startFakeLlm(opts: FakeLlmOptions = {}): Promise<FakeLlm> {
  const faults: FakeFault[] = [];
  let standing: FakeFault | undefined;
  const hanging = new Set<ServerResponse>();
  let requests = 0;
  let inFlight = 0;
  let maxConcurrent = 0;
  const byKind: Record<string, number> = {};
  const prompts: string[] = [];

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: String(err), type: 'server_error' } }));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const anthropic = req.url?.startsWith('/v1/messages') ?? false;
    if (req.method !== 'POST' || !(anthropic || req.url?.startsWith('/v1/chat/completions'))) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    requests++;
    inFlight++;
    maxConcurrent = Math.max(maxConcurrent, inFlight);
    res.on('close', () => inFlight--);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatBody;
    const lastUser = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
    prompts.push(String(lastUser?.content ?? ''));
    if (prompts.length > 200) prompts.shift();
    const fault = faults.shift() ?? standing;
    if (fault?.kind === 'hang') {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
      return;
    }
    await wait(fake.latencyMs + (fault?.kind === 'delay' ? fault.ms : 0));
    if (res.destroyed) return;
    if (fault?.kind === 'status') {
      res.writeHead(fault.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `injected ${fault.status}`, type: 'server_error' } }));
      return;
    }
    const { kind, text } =
      fault?.kind === 'malformed'
        ? { kind: 'malformed', text: 'Sure! {"score": ' }
        : fault?.kind === 'answer'
          ? { kind: 'scripted', text: fault.text }
          : answer(body);
    byKind[kind] = (byKind[kind] ?? 0) + 1;
    const tokensIn = (body.messages ?? []).reduce((n, m) => n + String(m.content).split(/\s+/).length, 0);
    const usage = { prompt_tokens: tokensIn, completion_tokens: text.split(/\s+/).length, total_tokens: 0 };
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    if (anthropic) {
      anthropicAnswer(res, body, text, usage);
      return;
    }
    const id = `chatcmpl-fake-${requests}`;
    const created = Math.floor(Date.now() / 1000);
    const model = body.model ?? 'fake';
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created,
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
          usage,
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (choices: unknown[], extra: Record<string, unknown> = {}): void => {
      res.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices, ...extra })}\n\n`,
      );
    };
    send([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
    for (const piece of text.match(/\S+\s*/g) ?? []) {
      if (res.destroyed) return;
      send([{ index: 0, delta: { content: piece }, finish_reason: null }]);
      if (opts.chunkMs) await wait(opts.chunkMs);
    }
    send([{ index: 0, delta: {}, finish_reason: 'stop' }]);
    if (body.stream_options?.include_usage) send([], { usage });
    res.end('data: [DONE]\n\n');
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const fake: FakeLlm = {
    url,
    baseURL: `${url}/v1`,
    latencyMs: opts.latencyMs ?? 0,
    get requests() {
      return requests;
    },
    get maxConcurrent() {
      return maxConcurrent;
    },
    byKind,
    prompts,
    fail: (...f) => void faults.push(...f),
    failAll: (f) => void (standing = f),
    reset: () => {
      standing = undefined;
      requests = 0;
      maxConcurrent = inFlight;
      faults.length = 0;
      prompts.length = 0;
      for (const k of Object.keys(byKind)) delete byKind[k];
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  return fake;
}

/** The answer a model would give: computed ranking JSON, or a short text citing the items. */
function answer(body: ChatBody): { kind: string; text: string } {
  const user = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
  const prompt = typeof user?.content === 'string' ? user.content : JSON.stringify(user?.content ?? '');
  // Routing and tool prompts carry their task (<task>{json}</task>): answer as the local provider
  // does. A tool's task is answered when its definition was imported in this process (the tool's
  // own module, or its task module: bench/fake-llm-server.ts imports them all).
  const task = readTaskPrompt(prompt);
  if (task && hasLocalAnswer(task.kind))
    return { kind: task.kind, text: JSON.stringify(localTaskAnswer(task)) };
  const read = readRankingPrompt(prompt);
  const wantsJson =
    Boolean(body.response_format) ||
    /valid JSON/i.test(JSON.stringify([body.system ?? '', body.messages ?? []]));
  if (!read || read.items.length === 0) {
    return wantsJson
      ? { kind: 'json', text: '{}' }
      : { kind: 'text', text: 'I have no items to answer from.' };
  }
  const items = read.items.map((i) => itemFromPrompt(i.json));
  if (wantsJson) {
    const answers = localRankAnswers(read.query, items);
    const system = (body.messages ?? []).filter((m) => m.role === 'system');
    const batch = /"results"/.test(JSON.stringify([body.response_format ?? null, body.system ?? '', system]));
    if (batch) {
      return {
        kind: 'rank_batch',
        text: JSON.stringify({ results: answers.map((a, i) => ({ index: read.items[i]!.index, ...a })) }),
      };
    }
    return { kind: 'rank', text: JSON.stringify(answers[0]) };
  }
  // Cite as [n]: the items' own numbers when they start at 1, else their position from 1.
  const offset = read.items.some((i) => i.index === 0) ? 1 : 0;
  const ref = (i: number): string => `[${read.items[i]!.index + offset}]`;
  const cited = items.slice(0, 3).map((it, i) => `${it.name} ${ref(i)}`);
  return {
    kind: 'text',
    text: `For "${read.query}", the best matches are ${cited.join(', ')}. ${items[0]!.name} fits best ${ref(0)}.`,
  };
}

function wait(ms: number): Promise<void> {
  return ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();
}

/** The same answer in Anthropic's Messages API shape (non-streaming, or its SSE events). */
function anthropicAnswer(
  res: ServerResponse,
  body: ChatBody,
  text: string,
  usage: { prompt_tokens: number; completion_tokens: number },
): void {
  const message = {
    id: `msg_fake_${Date.now()}`,
    type: 'message',
    role: 'assistant',
    model: body.model ?? 'fake',
    stop_reason: 'end_turn',
    stop_sequence: null,
  };
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        ...message,
        content: [{ type: 'text', text }],
        usage: { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens },
      }),
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (event: string, data: Record<string, unknown>): void => {
    res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  };
  send('message_start', {
    message: {
      ...message,
      stop_reason: null,
      content: [],
      usage: { input_tokens: usage.prompt_tokens, output_tokens: 0 },
    },
  });
  send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
  for (const piece of text.match(/\S+\s*/g) ?? []) {
    send('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } });
  }
  send('content_block_stop', { index: 0 });
  send('message_delta', {
    delta: { stop_reason: 'end_turn', stop_sequence: null },
    usage: { output_tokens: usage.completion_tokens },
  });
  send('message_stop', {});
  res.end();
}

/**
 * Another adapter behind an injected latency per call (tests, eval, benchmarks), honouring the
 * call's AbortSignal: a cancelled call stops waiting at once and is counted as cancelled.
 */
export class LatencyAdapter implements LlmAdapter {
  readonly name: string;
  started = 0;
  finished = 0;
  cancelled = 0;
  constructor(
    private readonly inner: LlmAdapter,
    private readonly latencyMs: (req: AdapterRequest) => number,
  ) {
    this.name = inner.name;
  }

  private wait(req: AdapterRequest): Promise<void> {
    this.started++;
    const ms = this.latencyMs(req);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        req.signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = (): void => {
        clearTimeout(t);
        this.cancelled++;
        reject(new LlmError('cancelled', 'cancelled'));
      };
      if (req.signal.aborted) onAbort();
      else req.signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  async complete(req: AdapterRequest): Promise<{ text: string; usage?: Usage }> {
    await this.wait(req);
    this.finished++;
    return this.inner.complete(req);
  }

  async *stream(req: AdapterRequest): AsyncIterable<{ delta?: string; usage?: Usage }> {
    await this.wait(req);
    this.finished++;
    yield* this.inner.stream(req);
  }
}

/** A latency from 0.5× to 1.5× `ms`, fixed by the prompt's text (so runs repeat exactly). */
export function jitteredLatency(ms: number): (req: AdapterRequest) => number {
  return (req) => {
    let h = 2166136261;
    for (const c of JSON.stringify(req.task ?? req.messages)) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
    return Math.round(ms * (0.5 + ((h >>> 0) % 1000) / 1000));
  };
}
