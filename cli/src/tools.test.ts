import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts, type AskRequestInput, type Message, type StoredItem } from '@askbus/contracts';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { loadDemoSites } from '@askbus/demo-data';
import { startRanker } from '@askbus/ranker';
import { startRetriever } from '@askbus/retriever';
import { startRouter, type RoutingStats } from '@askbus/router';
import { startCompareTool } from '@askbus/tool-compare';
import { startDetailsTool } from '@askbus/tool-details';
import { startEnsembleTool } from '@askbus/tool-ensemble';
import { startRecipeTool } from '@askbus/tool-recipe';
import { startWhoTool } from '@askbus/tool-who';

/** Tool routing and the tool services over a real NATS, with the real retriever on the demo sites. */
let nats: Awaited<ReturnType<typeof testNats>>;
const buses: Bus[] = [];
let caller: Bus;
const routed = new Map<string, RoutingStats>();
let lastRouted: RoutingStats | undefined;

const recipe = (name: string, ingredients: string[], extra: Record<string, unknown> = {}): StoredItem => {
  const url = `https://recipes.askbus.example/${name.toLowerCase().replace(/\W+/g, '-')}`;
  return {
    url,
    name,
    site: 'recipes',
    '@type': 'Recipe',
    schema_object: { '@type': 'Recipe', name, url, recipeIngredient: ingredients, ...extra },
  };
};
const recipes: StoredItem[] = [
  recipe(
    'Banana Bread',
    ['3 ripe bananas', '1/3 cup melted butter', '1 egg', '1 1/2 cups all-purpose flour', '3/4 cup sugar'],
    {
      recipeCategory: 'Bread',
    },
  ),
  recipe('Roast Chicken', ['1 whole chicken', '2 tbsp butter', 'salt', 'thyme'], {
    recipeCategory: 'Main course',
  }),
  recipe('Garlic Mashed Potatoes', ['2 lb potatoes', '1/2 cup milk', 'butter', 'garlic'], {
    recipeCategory: 'Side dish',
    description: 'A creamy side dish that goes well with roast chicken',
  }),
  recipe('Green Salad', ['lettuce', 'olive oil', 'lemon'], {
    recipeCategory: 'Side dish',
    description: 'a light side dish',
  }),
];

beforeAll(async () => {
  nats = await testNats();
  const connect = async (service: string) => {
    const bus = await testBus(nats.url, service);
    buses.push(bus);
    return bus;
  };
  await startRetriever(await connect('retriever'));
  startRanker(await connect('ranker'), { delayMs: 0 });
  startRouter(await connect('router'), {
    debug: true,
    onRouted: (s) => {
      lastRouted = s;
    },
  });
  startDetailsTool(await connect('tool-details'));
  startCompareTool(await connect('tool-compare'));
  startEnsembleTool(await connect('tool-ensemble'));
  startRecipeTool(await connect('tool-recipe'));
  startWhoTool(await connect('tool-who'));
  caller = await testBus(nats.url, 'gateway');
  await Promise.all(buses.map((b) => b.nc.flush()));
  for (const { site, items } of [...loadDemoSites(), { site: 'recipes', items: recipes }]) {
    for (let i = 0; i < items.length; i += 500) {
      const batch = items.slice(i, i + 500);
      await caller.request(contracts.upsert, { site, items: batch, persist: false }, { timeoutMs: 60_000 });
    }
  }
}, 60_000);

afterAll(async () => {
  await caller?.drain(500);
  for (const b of buses) await b.drain(500);
  await nats?.stop();
});

let n = 0;
async function ask(
  input: Omit<AskRequestInput, 'queryId'>,
): Promise<{ messages: Message[]; routed: RoutingStats }> {
  lastRouted = undefined;
  const queryId = `q${++n}`;
  const messages: Message[] = [];
  for await (const m of caller.stream(contracts.ask, { queryId, ...input }, { timeoutMs: 20_000 }))
    messages.push(m);
  routed.set(queryId, lastRouted!);
  return { messages, routed: lastRouted! };
}
const ofType = (ms: Message[], type: string) =>
  ms.filter((m) => m.message_type === type) as (Message & Record<string, unknown>)[];

describe('tool routing over NATS with the tool services', () => {
  it('"tell me about Pale Rider" → item_details for Pale Rider; FastTrack is cancelled', async () => {
    const { messages, routed } = await ask({ query: 'tell me about Pale Rider', site: ['movies'] });
    const [details] = ofType(messages, 'item_details');
    expect(details?.name).toBe('Pale Rider');
    expect(String(details?.details)).toMatch(/1985|Pale Rider/);
    expect(ofType(messages, 'result')).toHaveLength(0);
    expect(routed.tool).toBe('details');
    expect(routed.fastTrack).toBe('aborted');
    expect(routed.fastTrackAbortReason).toBe('tool');
    const [sel] = ofType(messages, 'tool_selection');
    expect(sel?.selected_tool).toBe('details');
    expect(messages.at(-1)?.message_type).toBe('end-nlweb-response');
  });

  it('"compare Alien and Blade Runner" → compare_items with both, a table and a verdict', async () => {
    const { messages } = await ask({ query: 'compare Alien and Blade Runner', site: ['movies'] });
    const [cmp] = ofType(messages, 'compare_items');
    expect((cmp?.item1 as { name: string }).name).toBe('Alien');
    expect((cmp?.item2 as { name: string }).name).toBe('Blade Runner');
    expect((cmp?.table as unknown[]).length).toBeGreaterThan(2);
    expect(String(cmp?.comparison)).toMatch(/Alien/);
    expect(String(cmp?.verdict)).not.toBe('');
  });

  it('a plain search uses the FastTrack results', async () => {
    const { messages, routed } = await ask({ query: 'westerns with clint eastwood', site: ['movies'] });
    expect(routed.tool).toBe('search');
    expect(routed.fastTrack).toBe('used');
    const names = ofType(messages, 'result').flatMap((m) =>
      (m.content as { name: string }[]).map((i) => i.name),
    );
    expect(names).toContain('Pale Rider');
  });

  it('ensemble: intermediate messages, then ensemble_result', async () => {
    const { messages } = await ask({
      query: 'plan a movie night with a comedy and a horror film',
      site: ['movies'],
    });
    const steps = ofType(messages, 'intermediate_message').map((m) => m.content);
    expect(steps).toEqual(expect.arrayContaining(['Looking for comedy', 'Looking for horror film']));
    const [ens] = ofType(messages, 'ensemble_result');
    const result = ens?.result as { success: boolean; recommendations: { items: unknown[] } };
    expect(result.success).toBe(true);
    expect(result.recommendations.items).toHaveLength(2);
  });

  it('decontextualizes a follow-up with prev and emits decontextualized_query', async () => {
    const { messages, routed } = await ask({
      query: 'who directed it',
      prev: ['tell me about Pale Rider'],
      site: ['movies'],
    });
    const [dq] = ofType(messages, 'decontextualized_query');
    expect(dq?.decontextualized_query).toBe('who directed Pale Rider');
    expect(routed.fastTrack).toBe('ineligible');
    expect(ofType(messages, 'item_details')[0]?.name).toBe('Pale Rider');
  });

  it('site_is_irrelevant_to_query and ask_user end the query early', async () => {
    const irrelevant = await ask({ query: 'a chocolate cake recipe', site: ['movies'] });
    expect(ofType(irrelevant.messages, 'site_is_irrelevant_to_query')[0]?.content).toMatch(/Recipe/);
    expect(irrelevant.routed.fastTrack).toBe('aborted');
    expect(ofType(irrelevant.messages, 'result')).toHaveLength(0);
    const vague = await ask({ query: 'recommend something good', site: ['movies'] });
    expect(ofType(vague.messages, 'ask_user')[0]?.content).toMatch(/What kind of movie/);
    expect(ofType(vague.messages, 'result')).toHaveLength(0);
  });

  it('an explicit tool= skips scoring and runs that tool', async () => {
    const { messages, routed } = await ask({
      query: 'tell me about Alien',
      site: ['movies'],
      tool: 'details',
    });
    expect(routed.selection.skipped).toBe('explicit');
    expect(routed.selection.calls).toBe(0);
    expect(ofType(messages, 'item_details')[0]?.name).toBe('Alien');
  });

  it('who: site=all fans out and names the sites that can answer', async () => {
    const { messages, routed } = await ask({
      query: 'which sites can tell me about fuel efficient cars',
      site: ['all'],
    });
    expect(routed.tool).toBe('who');
    const sites = ofType(messages, 'result').flatMap((m) =>
      (m.content as { name: string }[]).map((i) => i.name),
    );
    expect(sites[0]).toBe('cars');
  });

  it('recipe tools: substitutions and accompaniment', async () => {
    const sub = await ask({
      query: 'what can I use instead of butter in the banana bread',
      site: ['recipes'],
    });
    expect(sub.routed.tool).toBe('recipe_substitutions');
    const [s] = ofType(sub.messages, 'substitution_suggestions');
    const data = s?.substitution_data as { substitutions: { original_ingredient: string }[] };
    expect(data.substitutions[0]?.original_ingredient).toMatch(/butter/);
    expect((s?.reference_recipes as { name: string }[])[0]?.name).toBe('Banana Bread');

    const acc = await ask({ query: 'what side dish goes well with roast chicken', site: ['recipes'] });
    expect(acc.routed.tool).toBe('accompaniment');
    const names = ofType(acc.messages, 'result').flatMap((m) =>
      (m.content as { name: string }[]).map((i) => i.name),
    );
    expect(names[0]).toBe('Garlic Mashed Potatoes');
    expect(names).not.toContain('Roast Chicken');
  });
});
