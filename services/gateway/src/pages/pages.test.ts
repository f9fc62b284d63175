import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPageWorld, type PageWorld } from './page-world';
import { augAsk, augAskUrl, augView, mayAsk, mayAskUrl, pageSites, sseEvents } from './fake-pages';
import type { PageView } from './fake-pages';
import type { PageRouter } from './page-router';

// NLWeb's May and Aug 2025 pages against the real gateway over real HTTP, on a real NATS with
// a fake router that answers in the real router's order (page-router.ts). The fake pages
// (fake-pages.ts) send what each page sends and keep what it would show.
//
// What the pages expect, from their code:
// - May 2025 (microsoft/NLWeb 0fc7ce6 static/streaming.js): GET /ask with query_id, query,
//   site, generate_mode, prev (JSON), item_to_remember, context_url, as an EventSource. Reads
//   `result_batch` (`results`), `summary`, `intermediate_message`, `ask_user`, `item_details`,
//   `site_is_irrelevant_to_query` (all `message`), `nlws` (`answer`, `items`) and closes only on
//   `{"message_type": "complete"}` — without it the browser reconnects and asks again.
// - Aug 2025 (nlweb-ai/NLWeb 8612638 static/fp-chat-interface.js): GET /ask with query,
//   generate_mode, display_mode=full, site, prev, thread_id, as an EventSource; the same types,
//   but `item_details` by `name`/`details`/`url`, text set with innerHTML (so it must be
//   escaped), and it stops on `complete` (or on the stream's end, as an error when empty).

let world: PageWorld;
let router: PageRouter;
let base: string;

beforeAll(async () => {
  world = await startPageWorld();
  ({ router, base } = world);
});

afterAll(async () => {
  await world?.stop();
});

const types = (v: PageView): unknown[] => v.events.map((e) => e.message_type);
const noneTwice = (v: PageView): void => expect(new Set(v.keys).size).toBe(v.keys.length);

describe('NLWeb May 2025 page (streaming.js)', () => {
  it('list: the results render from result_batch, and complete ends the stream last, once', async () => {
    const v = await mayAsk(base, 'westerns', { site: 'movies' });
    expect(v.items).toEqual(['Unforgiven', 'Pale Rider', 'High Plains Drifter']);
    noneTwice(v);
    expect(v.completed).toBe(true);
    expect(types(v).at(-1)).toBe('complete');
    expect(types(v).filter((t) => t === 'complete')).toHaveLength(1);
    // No message of the 2025-11 schema and no askbus addition reaches it.
    for (const t of ['result', 'begin-nlweb-response', 'end-nlweb-response', 'status', 'summary_chunk'])
      expect(types(v)).not.toContain(t);
  });

  it('sends what the page sends and gets its own query_id back in every event', async () => {
    const url = mayAskUrl(base, 'westerns', { site: 'movies', prev: ['old westerns'] });
    const queryId = new URL(url).searchParams.get('query_id')!;
    const res = await fetch(url, { headers: { accept: 'text/event-stream' } });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = sseEvents(await res.text());
    const call = router.calls.at(-1)!;
    expect(call.queryId).toBe(queryId);
    expect(call.prev).toEqual(['old westerns']);
    expect(events.filter((e) => e.message_type !== 'complete').every((e) => e.query_id === queryId)).toBe(
      true,
    );
  });

  it('cars: the site the page selects is searched', async () => {
    const v = await mayAsk(base, 'fuel efficient cars', { site: 'cars' });
    expect(router.calls.at(-1)!.site).toEqual(['cars']);
    expect(v.items).toEqual(['Honda Civic', 'Toyota Corolla']);
  });

  it('summarize: the summary shows above the results; the chunks are not sent', async () => {
    const v = await mayAsk(base, 'westerns', { site: 'movies', mode: 'summarize' });
    expect(router.calls.at(-1)!.mode).toBe('summarize');
    expect(v.texts).toEqual(['Unforgiven is the best match.']);
    expect(v.items).toEqual(['Unforgiven', 'Pale Rider', 'High Plains Drifter']);
    expect(v.completed).toBe(true);
  });

  it('generate: the answer and the items it cites, each item once (nlws only, as NLWeb sent it)', async () => {
    const v = await mayAsk(base, 'westerns', { site: 'movies', mode: 'generate' });
    expect(v.texts).toEqual(['Try Unforgiven [1] or Pale Rider [2].']);
    expect(v.items).toEqual(['Unforgiven', 'Pale Rider']);
    noneTwice(v);
    expect(types(v)).not.toContain('result_batch');
  });

  it('the clarifying question shows (ask_user with message), and the stream completes', async () => {
    const v = await mayAsk(base, 'vague', { site: 'movies' });
    expect(v.texts).toEqual(['What kind of movie are you looking for?']);
    expect(v.completed).toBe(true);
  });

  it('details: item_details shows its message (the item and the details)', async () => {
    const v = await mayAsk(base, 'tell me about Pale Rider', { site: 'movies' });
    expect(v.texts).toEqual(['Pale Rider: director: Clint Eastwood\ndatePublished: 1985']);
  });

  it('compare, an ensemble and substitutions, which it has no renderer for, come as nlws', async () => {
    const compare = await mayAsk(base, 'compare Unforgiven and Pale Rider', { site: 'movies' });
    expect(compare.texts[0]).toBe('Unforgiven is darker than Pale Rider.\n\nUnforgiven wins.');
    expect(compare.items).toEqual(['Unforgiven', 'Pale Rider']);
    const ensemble = await mayAsk(base, 'an evening of westerns', { site: 'movies' });
    expect(ensemble.texts[0]).toContain('A western evening');
    expect(ensemble.items).toEqual(['Unforgiven']);
    const subs = await mayAsk(base, 'substitute milk', { site: 'movies' });
    expect(subs.texts[0]).toBe('milk → oat milk (1:1)');
    expect(subs.items).toEqual(['Pancakes']);
  });

  it('no results, an irrelevant site and a failed router show a note, and still complete', async () => {
    expect((await mayAsk(base, 'nothing')).texts).toEqual(['No results were found for "nothing".']);
    expect((await mayAsk(base, 'irrelevant')).texts).toEqual(['This site has movies, not recipes.']);
    const failed = await mayAsk(base, 'fail');
    expect(failed.texts).toEqual(['the fake router broke']);
    expect(failed.completed).toBe(true);
    expect(types(failed).at(-1)).toBe('complete');
  });
});

describe('NLWeb Aug 2025 page (fp-chat-interface.js)', () => {
  it('the site list loads from /sites (all first)', async () => {
    expect(await pageSites(base)).toEqual(['all', 'cars', 'movies']);
  });

  it('list on movies and on cars: results from result_batch, then complete', async () => {
    const movies = await augAsk(base, 'westerns', { site: 'movies' });
    expect(movies.items).toEqual(['Unforgiven', 'Pale Rider', 'High Plains Drifter']);
    expect(movies.completed).toBe(true);
    noneTwice(movies);
    const cars = await augAsk(base, 'fuel efficient cars', { site: 'cars' });
    expect(cars.items).toEqual(['Honda Civic', 'Toyota Corolla']);
  });

  it('summarize: the summary text (summary with message) and the results', async () => {
    const v = await augAsk(base, 'westerns', { site: 'movies', mode: 'summarize' });
    expect(v.texts).toEqual(['Unforgiven is the best match.']);
    expect(v.items).toEqual(['Unforgiven', 'Pale Rider', 'High Plains Drifter']);
  });

  it('generate: the answer replaces the text and its items the list', async () => {
    const v = await augAsk(base, 'westerns', { site: 'movies', mode: 'generate' });
    expect(v.texts).toEqual(['Try Unforgiven [1] or Pale Rider [2].']);
    expect(v.items).toEqual(['Unforgiven', 'Pale Rider']);
  });

  it('the clarifying question, details, compare and an ensemble render', async () => {
    expect((await augAsk(base, 'vague')).texts).toEqual(['What kind of movie are you looking for?']);
    const details = await augAsk(base, 'tell me about Pale Rider', { site: 'movies' });
    expect(details.items).toEqual(['Pale Rider']);
    const d = details.events.find((e) => e.message_type === 'item_details')!;
    expect(d).toMatchObject({
      name: 'Pale Rider',
      url: 'https://movies.example/pale-rider',
      details: expect.stringContaining('Eastwood'),
    });
    const compare = await augAsk(base, 'compare Unforgiven and Pale Rider');
    expect(compare.texts).toEqual(['Unforgiven is darker than Pale Rider.', 'Unforgiven wins.']);
    expect(compare.items).toEqual(['Unforgiven', 'Pale Rider']);
    const ensemble = await augAsk(base, 'an evening of westerns');
    const e = ensemble.events.find((x) => x.message_type === 'ensemble_result') as {
      result: { recommendations: { items: { why_recommended: string }[] } };
    };
    expect(e.result.recommendations.items[0]!.why_recommended).toBe('It is the best');
  });

  it('notes stay on screen: no results, errors (as summary text; intermediate ones vanish)', async () => {
    expect((await augAsk(base, 'nothing')).texts).toEqual(['No results were found for "nothing".']);
    const failed = await augAsk(base, 'fail');
    expect(failed.texts).toEqual(['the fake router broke']);
    expect(failed.completed).toBe(true);
  });

  it('text it sets with innerHTML is escaped; item names stay as they are (set as text)', async () => {
    const v = await augAsk(base, 'xss');
    const summary = v.events.find((e) => e.message_type === 'summary')!;
    expect(summary.message).toBe('A &lt;script&gt;alert(1)&lt;/script&gt; summary &amp; more');
    expect(v.texts).toEqual(['A <script>alert(1)</script> summary & more']);
    expect(v.items).toEqual(['<img src=x onerror=alert(1)>']);
  });

  it('thread_id names the conversation; its prev is sent and wins', async () => {
    await augAsk(base, 'westerns', { site: 'movies', threadId: '1733000000000', prev: ['earlier'] });
    expect(router.calls.at(-1)).toMatchObject({ conversationId: '1733000000000', prev: ['earlier'] });
  });
});

describe('which client the gateway serves', () => {
  const ask = async (qs: string) => sseEvents(await (await fetch(`${base}/ask?${qs}`)).text());

  it('the 2025 pages are told by parameters only they send; other GETs keep the message schema', async () => {
    expect((await ask('query=westerns&site=movies')).at(-1)?.message_type).toBe('end-nlweb-response');
    // askbus's own chat page
    expect(
      (await ask('query=westerns&site=movies&mode=list&streaming=true&conversation_id=c-1')).at(-1)
        ?.message_type,
    ).toBe('end-nlweb-response');
    for (const marker of ['display_mode=full', 'item_to_remember=', 'context_url='])
      expect((await ask(`query=westerns&${marker}`)).at(-1)).toEqual({ message_type: 'complete' });
  });

  it('api_version=0.1 asks for the May–Aug format; another api_version keeps the message schema', async () => {
    expect((await ask('query=westerns&api_version=0.1')).at(-1)).toEqual({ message_type: 'complete' });
    expect((await ask('query=westerns&api_version=0.2&display_mode=full')).at(-1)?.message_type).toBe(
      'end-nlweb-response',
    );
  });

  it('streaming=false gets the May–Aug JSON body: results, and each other message under its type', async () => {
    const res = await fetch(
      `${base}/ask?query=westerns&site=movies&mode=summarize&streaming=false&api_version=0.1&query_id=q1`,
    );
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.query_id).toBe('q1');
    expect((body.results as { name: string }[]).map((r) => r.name)).toEqual([
      'Unforgiven',
      'Pale Rider',
      'High Plains Drifter',
    ]);
    expect(body.summary).toEqual({ message: 'Unforgiven is the best match.' });
    expect(body).not.toHaveProperty('complete');
  });

  it('a stream the page reads without complete would be an error for the Aug page (the model)', () => {
    // The Aug page ends on onerror too; with nothing received it shows an error.
    expect(augView([], 'closed').error).toMatch(/error occurred/);
    expect(new URL(augAskUrl(base, 'q')).searchParams.get('display_mode')).toBe('full');
  });
});
