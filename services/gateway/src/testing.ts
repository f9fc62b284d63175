/** Test doubles for the gateway's tests: a fake router and retriever on a real bus, an SSE parser. */
import { BusError } from '@askbus/bus';
import type { Bus } from '@askbus/bus';
import { contracts, createMessageFactory } from '@askbus/contracts';
import type { AskRequest, ResultItem, RetrievedItem, SiteInfo } from '@askbus/contracts';

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

/** A result item whose schema.org object is a Car (site `cars`). */
export function fakeCar(n: number): ResultItem {
  const item = fakeItem(n, 'cars');
  return { ...item, name: `Car ${n}`, schema_object: { '@type': 'Car', name: `Car ${n}` } };
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
 * `vague` (asks the user a question: ask_user), `mixed` (a Movie and a Car result, no summary),
 * `answer` (a generated answer: nlws), `empty` (no_results),
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
      case 'mixed':
        yield msg({ message_type: 'result', content: [fakeItem(0), fakeCar(1)] });
        break;
      case 'answer':
        yield msg({
          message_type: 'nlws',
          '@type': 'GeneratedAnswer',
          answer: 'Item 0 is the one.',
          items: [fakeItem(0)],
        });
        break;
      case 'empty':
        yield msg({ message_type: 'no_results', content: 'No results were found for "empty".' });
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

const hit = (site: string, n: number, type: string, score: number): RetrievedItem => ({
  url: `https://${site}.example/item/${n}`,
  name: `${type} ${n}`,
  site,
  '@type': type,
  schema_object: { '@type': type, name: `${type} ${n}` },
  retrievalScore: score,
});

export interface FakeSearch {
  /** Every search request, in order. */
  calls: { query: string; site: string[]; numResults: number; types?: string[] | undefined }[];
  sub: Subscription;
}

/**
 * Serves contracts.search for `who`: "cars" queries hit cars twice (Car) and movies once
 * (Movie); `nothing` hits no site; anything else hits movies three times and cars never.
 * Honours `types` as the retriever does (exact @type).
 */
export function serveFakeSearch(bus: Bus): FakeSearch {
  const search: FakeSearch = { calls: [], sub: undefined as unknown as Subscription };
  search.sub = bus.serve(contracts.search, async (req) => {
    search.calls.push(req);
    const cars = /\bcars?\b/i.test(req.query);
    let items: RetrievedItem[] = [];
    if (req.query === 'nothing') items = [];
    else if (req.site[0] === 'cars')
      items = cars ? [hit('cars', 0, 'Car', 0.9), hit('cars', 1, 'Car', 0.6)] : [];
    else if (req.site[0] === 'movies') {
      items = cars
        ? [hit('movies', 0, 'Movie', 0.3)]
        : [hit('movies', 0, 'Movie', 0.8), hit('movies', 1, 'Movie', 0.7), hit('movies', 2, 'Movie', 0.2)];
    }
    if (req.types) items = items.filter((i) => req.types!.includes(i['@type']));
    return { items };
  });
  return search;
}
