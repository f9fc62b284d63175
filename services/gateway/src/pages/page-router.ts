/**
 * A fake router for the NLWeb page tests: it answers in the order askbus's real router does
 * (ranked results stream before a summary or a generated answer, whose chunks come first), so
 * the pages' renderers meet what they will meet in production. The question picks the answer.
 */
import { BusError } from '@askbus/bus';
import type { Bus } from '@askbus/bus';
import { contracts, createMessageFactory } from '@askbus/contracts';
import type { AskRequest, MessageBody, ResultItem } from '@askbus/contracts';

export interface PageRouter {
  /** Every request the router got, in order. */
  calls: AskRequest[];
  /** Query ids of `hang` questions that were cancelled. */
  aborted: string[];
  /** Stops serving. */
  stop(): void;
}

export const movie = (name: string, score: number, extra: Partial<ResultItem> = {}): ResultItem => ({
  '@type': 'Item',
  url: `https://movies.example/${name.toLowerCase().replace(/\W+/g, '-')}`,
  name,
  site: 'movies',
  siteUrl: 'movies',
  score,
  description: `${name}, a western`,
  schema_object: { '@type': 'Movie', name },
  ...extra,
});

export const car = (name: string, score: number): ResultItem => ({
  ...movie(name, score),
  url: `https://cars.example/${name.toLowerCase().replace(/\W+/g, '-')}`,
  site: 'cars',
  siteUrl: 'cars',
  description: `${name}, a fuel-efficient car`,
  schema_object: { '@type': 'Car', name },
});

export const WESTERNS = [movie('Unforgiven', 95), movie('Pale Rider', 88), movie('High Plains Drifter', 80)];
export const CARS = [car('Honda Civic', 92), car('Toyota Corolla', 85)];

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });
}

/**
 * The answer bodies for a question (without begin/end):
 * - `vague`: ask_user; `irrelevant`: site_is_irrelevant_to_query; `nothing`: no_results;
 * - `tell me about X`: item_details; `compare X and Y`: intermediate + compare_items;
 * - `an evening of X`: ensemble_result; `substitute X`: substitution_suggestions;
 * - `xss`: a result and a summary carrying HTML;
 * - anything else: results for the site (cars or movies), streamed in two batches, then by
 *   mode a summary (chunks first) or a generated answer citing two items (chunks first).
 */
export function pageAnswer(req: AskRequest): MessageBody[] {
  const q = req.query;
  if (q === 'vague')
    return [{ message_type: 'ask_user', content: 'What kind of movie are you looking for?' }];
  if (q === 'irrelevant')
    return [{ message_type: 'site_is_irrelevant_to_query', content: 'This site has movies, not recipes.' }];
  if (q === 'nothing')
    return [{ message_type: 'no_results', content: 'No results were found for "nothing".' }];
  const details = /^tell me about (.+)$/i.exec(q);
  if (details) {
    const name = details[1]!;
    return [
      {
        message_type: 'item_details',
        name,
        details: 'director: Clint Eastwood\ndatePublished: 1985',
        details_requested: 'everything',
        score: 92,
        explanation: `"${name}" is this item`,
        url: movie(name, 0).url,
        site: 'movies',
        schema_object: { '@type': 'Movie', name },
      },
    ];
  }
  const compare = /^compare (.+) and (.+)$/i.exec(q);
  if (compare) {
    const side = (name: string) => ({
      name,
      url: movie(name, 0).url,
      site: 'movies',
      schema_object: { '@type': 'Movie', name },
    });
    return [
      { message_type: 'intermediate_message', content: `Looking for ${compare[1]} and ${compare[2]}` },
      {
        message_type: 'compare_items',
        comparison: `${compare[1]} is darker than ${compare[2]}.`,
        verdict: `${compare[1]} wins.`,
        details_requested: 'everything',
        table: [],
        item1: side(compare[1]!),
        item2: side(compare[2]!),
      },
    ];
  }
  if (/^an evening of/i.test(q)) {
    return [
      {
        message_type: 'ensemble_result',
        '@type': 'EnsembleRecommendation',
        result: {
          success: true,
          ensemble_type: 'evening',
          recommendations: {
            theme: 'A western evening',
            items: [
              {
                category: 'Movie',
                name: 'Unforgiven',
                url: WESTERNS[0]!.url,
                description: 'A late western',
                why: 'It is the best',
              },
            ],
            overall_tips: ['Start early'],
          },
          total_items_retrieved: 3,
        },
      },
    ];
  }
  if (/^substitute/i.test(q)) {
    return [
      {
        message_type: 'substitution_suggestions',
        content: '<h2>Substitutions for Pancakes</h2><ul><li><b>milk</b> → oat milk (1:1)</li></ul>',
        substitution_data: {
          substitutions: [{ original_ingredient: 'milk', substitute: 'oat milk', ratio: '1:1', notes: '' }],
        },
        reference_recipes: [
          {
            name: 'Pancakes',
            url: 'https://recipes.example/pancakes',
            site: 'recipes',
            schema_object: { '@type': 'Recipe' },
          },
        ],
      },
    ];
  }
  if (q === 'xss') {
    return [
      { message_type: 'result', content: [movie('<img src=x onerror=alert(1)>', 90)] },
      { message_type: 'result', '@type': 'Summary', content: 'A <script>alert(1)</script> summary & more' },
    ];
  }
  const items = req.site.includes('cars') ? CARS : WESTERNS;
  const out: MessageBody[] = [
    { message_type: 'intermediate_message', content: `Searching for ${q}` },
    { message_type: 'status', content: 'ranking 3 items' },
    { message_type: 'result', content: items.slice(0, 2) },
    { message_type: 'result', content: items.slice(2) },
  ].filter((m) => m.message_type !== 'result' || (m.content as unknown[]).length > 0) as MessageBody[];
  if (req.mode === 'summarize') {
    out.push(
      { message_type: 'summary_chunk', content: `${items[0]!.name} is the best` },
      { message_type: 'summary_chunk', content: ' match.' },
      { message_type: 'result', '@type': 'Summary', content: `${items[0]!.name} is the best match.` },
    );
  }
  if (req.mode === 'generate') {
    out.push(
      { message_type: 'nlws_chunk', content: `Try ${items[0]!.name}` },
      {
        message_type: 'nlws',
        '@type': 'GeneratedAnswer',
        answer: `Try ${items[0]!.name} [1] or ${items[1]!.name} [2].`,
        items: items.slice(0, 2),
      },
    );
  }
  return out;
}

/**
 * Serves contracts.ask with pageAnswer. `fail` breaks after begin; `hang` answers begin and
 * then nothing until cancelled.
 */
export function servePageRouter(bus: Bus): PageRouter {
  const calls: AskRequest[] = [];
  const aborted: string[] = [];
  const sub = bus.serveStream(contracts.ask, async function* (req, ctx) {
    calls.push(req);
    const msg = createMessageFactory(req.conversationId, req.queryId);
    yield msg({ message_type: 'begin-nlweb-response', query: req.query });
    if (req.query === 'fail') throw new BusError('internal', 'the fake router broke');
    if (req.query === 'hang') {
      await sleep(30_000, ctx.signal);
      if (ctx.signal.aborted) aborted.push(req.queryId);
      return;
    }
    for (const body of pageAnswer(req)) yield msg(body);
    yield msg({ message_type: 'end-nlweb-response' });
  });
  return { calls, aborted, stop: () => sub.unsubscribe() };
}
