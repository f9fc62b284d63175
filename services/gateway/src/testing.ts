/** Test doubles for the gateway's tests: a fake router and retriever on a real bus, an SSE parser. */
import { BusError } from '@askbus/bus';
import type { Bus } from '@askbus/bus';
import { contracts, createMessageFactory, whoSiteItem } from '@askbus/contracts';
import { WHO_SEARCH_SIZE, rankWhoSites, whoSubject } from '@askbus/search-core';
import type { SiteEvidence } from '@askbus/search-core';
import type { AskRequest, MessageBody, ResultItem, RetrievedItem, SiteInfo } from '@askbus/contracts';

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
 * With tool `who`: the who tool's answer over the bus's retriever (fakeWho).
 * anything else: begin, intermediate_message, result ×2, summary, result ×1, end.
 * With `tool`: see fakeToolAnswer.
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
    if (req.tool === 'who') {
      for (const body of await fakeWho(bus, req, ctx.signal)) yield msg(body);
      yield msg({ message_type: 'end-nlweb-response' });
      return;
    }
    if (req.tool === 'details' || req.tool === 'compare') {
      if (/\bslow\b/.test(req.query)) {
        await sleep(30_000, ctx.signal);
        watch();
        return;
      }
      for (const body of fakeToolAnswer(req.tool, req.query)) yield msg(body);
      yield msg({ message_type: 'end-nlweb-response' });
      return;
    }
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

/**
 * What the who tool (services/tool-who) answers the router with: every loaded site searched for
 * the question's subject (only items of the `type` filter's types), ranked by search-core.
 */
async function fakeWho(bus: Bus, req: AskRequest, signal: AbortSignal): Promise<MessageBody[]> {
  const opts = { timeoutMs: 10_000, signal };
  const { sites } = await bus.request(contracts.sites, {}, opts);
  const subject = whoSubject(req.query);
  const type = req.filters?.type;
  const wanted = new Set(
    (Array.isArray(type) ? type : type === undefined ? [] : [type]).map((t) => String(t).toLowerCase()),
  );
  const evidence = await Promise.all(
    sites.map(async (s): Promise<SiteEvidence | undefined> => {
      const types = wanted.size ? s.types.filter((t) => wanted.has(t.toLowerCase())) : undefined;
      if (types && types.length === 0) return undefined;
      const { items } = await bus.request(
        contracts.search,
        { query: subject, site: [s.name], numResults: WHO_SEARCH_SIZE, ...(types ? { types } : {}) },
        opts,
      );
      return { name: s.name, itemCount: s.itemCount, types: s.types, items };
    }),
  );
  const ranked = rankWhoSites(
    req.query,
    evidence.filter((e): e is SiteEvidence => e !== undefined),
    { maxSites: req.maxResults },
  );
  return ranked.length
    ? [{ message_type: 'result', content: ranked.map((r) => whoSiteItem(r, subject)) }]
    : [{ message_type: 'no_results', content: `No loaded site can answer "${req.query}".` }];
}

const movie = (name: string): Record<string, unknown> & { '@type': string } => ({
  '@type': 'Movie',
  name,
  director: `${name}'s director`,
  datePublished: '1979',
});

/**
 * What the details and compare tool services send for an explicit tool (their shapes):
 * details reads "tell me about X" / "what is the D of X" and answers item_details (a name
 * containing "nothing" is not found: item_details with no url); compare reads "compare X and Y
 * [in terms of D]" and answers compare_items (a name with "nothing": no_results). The fake
 * router waits until cancelled when a tool's query holds the word `slow`.
 */
export function fakeToolAnswer(tool: 'details' | 'compare', query: string): MessageBody[] {
  const url = (name: string): string => `https://movies.example/${name.toLowerCase().replace(/\W+/g, '-')}`;
  if (tool === 'details') {
    const m = /^what is the (.+?) of (.+)$/i.exec(query) ?? /^tell me about ()(.+)$/i.exec(query);
    const name = m?.[2] ?? query;
    const requested = m?.[1] || 'everything';
    if (/nothing/i.test(name)) {
      return [
        {
          message_type: 'item_details',
          name,
          details: `Could not find any items matching "${name}".`,
          score: 0,
          explanation: '',
          url: '',
          site: 'movies',
        },
      ];
    }
    return [
      {
        message_type: 'item_details',
        name,
        details: `director: ${name}'s director\ndatePublished: 1979`,
        details_requested: requested,
        score: 92,
        explanation: `"${name}" is this item`,
        url: url(name),
        site: 'movies',
        schema_object: movie(name),
      },
    ];
  }
  const m = /^compare (.+?) and (.+?)(?: in terms of (\w+))?$/i.exec(query);
  const [a, b] = [m?.[1] ?? '', m?.[2] ?? ''];
  if (!m || /nothing/i.test(query))
    return [
      { message_type: 'no_results', content: `Could not find ${/nothing/i.test(a) ? a : b} to compare.` },
    ];
  const side = (name: string) => ({ name, url: url(name), site: 'movies', schema_object: movie(name) });
  return [
    { message_type: 'intermediate_message', content: `Looking for ${a} and ${b}` },
    {
      message_type: 'compare_items',
      comparison: `${a} and ${b} are both from 1979.`,
      verdict: `${a} wins.`,
      details_requested: 'everything',
      table: [
        { field: 'director', item1: `${a}'s director`, item2: `${b}'s director` },
        { field: 'datePublished', item1: '1979', item2: '1979' },
      ],
      item1: side(a),
      item2: side(b),
    },
  ];
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
