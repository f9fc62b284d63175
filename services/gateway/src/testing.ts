/** Test doubles for the gateway's tests: a fake router and retriever on a real bus, an SSE parser. */
import { BusError } from '@askbus/bus';
import type { Bus } from '@askbus/bus';
import { contracts, createMessageFactory } from '@askbus/contracts';
import type { AskRequest, ResultItem, SiteInfo } from '@askbus/contracts';

/** A served subject (what Bus.serve returns), so a test can stop serving it. */
export type Subscription = ReturnType<Bus['serve']>;

export function fakeItem(n: number, site = 'movies'): ResultItem {
  return {
    '@type': 'Item',
    url: `https://${site}.example/item/${n}`,
    name: `Item ${n}`,
    site,
    siteUrl: site,
    score: 90 - n,
    description: `the description of item ${n}`,
    schema_object: { '@type': 'Movie', name: `Item ${n}` },
  };
}

export interface RouterCall {
  req: AskRequest;
  queryId: string;
  traceparent: string;
}

export interface FakeRouter {
  calls: RouterCall[];
  /** Query ids whose handler saw its ctx.signal aborted. */
  aborted: string[];
  sub: Subscription;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Serves contracts.ask. The query text picks the behaviour:
 * `slow` (one result, then waits until cancelled), `fail` (throws after begin),
 * `idle` (waits 150 ms between begin and end), `hang` (sends nothing until cancelled),
 * `vague` (asks the user a question: ask_user),
 * anything else: begin, intermediate_message, result ×2, summary, result ×1, end.
 */
export function serveFakeRouter(bus: Bus): FakeRouter {
  const router: FakeRouter = { calls: [], aborted: [], sub: undefined as unknown as Subscription };
  router.sub = bus.serveStream(contracts.ask, async function* (req, ctx) {
    router.calls.push({ req, queryId: ctx.queryId, traceparent: ctx.traceparent });
    const msg = createMessageFactory(req.conversationId, req.queryId);
    const watch = (): void => {
      if (ctx.signal.aborted) router.aborted.push(ctx.queryId);
    };
    if (req.query === 'hang') {
      await sleep(30_000, ctx.signal);
      watch();
      return;
    }
    yield msg({ message_type: 'begin-nlweb-response', query: req.query });
    switch (req.query) {
      case 'slow':
        yield msg({ message_type: 'result', content: [fakeItem(0)] });
        await sleep(30_000, ctx.signal);
        watch();
        return;
      case 'fail':
        throw new BusError('internal', 'the fake router broke');
      case 'idle':
        await sleep(150, ctx.signal);
        break;
      case 'vague':
        yield msg({ message_type: 'ask_user', content: 'Which city are you in?' });
        break;
      default:
        yield msg({ message_type: 'intermediate_message', content: `Searching for ${req.query}` });
        yield msg({ message_type: 'result', content: [fakeItem(0), fakeItem(1)] });
        yield msg({ message_type: 'result', '@type': 'Summary', content: 'A summary.' });
        yield msg({ message_type: 'result', content: [fakeItem(2)] });
    }
    yield msg({ message_type: 'end-nlweb-response' });
  });
  return router;
}

export const FAKE_SITES: SiteInfo[] = [
  { name: 'movies', itemCount: 3, types: ['Movie'] },
  { name: 'cars', itemCount: 2, types: ['Car'] },
];

export function serveFakeRetriever(bus: Bus): Subscription {
  return bus.serve(contracts.sites, async () => ({ sites: FAKE_SITES }));
}

export interface SseEvent {
  event: string;
  data: unknown;
}

/** Splits an SSE body into events (comments dropped); `event` is 'message' when unnamed. */
export function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .flatMap((block) => {
      const lines = block.split('\n');
      const event =
        lines
          .find((l) => l.startsWith('event:'))
          ?.slice(6)
          .trim() ?? 'message';
      const data = lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim());
      return data.length ? [{ event, data: JSON.parse(data.join('\n')) as unknown }] : [];
    });
}
