import { describe, expect, it } from 'vitest';
import { Llm } from './client';
import { LocalAdapter } from './local';
import { z } from 'zod';
import {
  DecontextualizeAnswer,
  defineTask,
  extractParams,
  hasLocalAnswer,
  localTaskAnswer,
  scoreTool,
  taskPrompt,
  ToolScoreAnswer,
} from './tasks';
import { startFakeLlm } from './testing';
import { OpenAiCompatibleAdapter } from './openai';

describe('local answers to routing tasks', () => {
  it('scores tools from cue phrases and the tool examples, with their parameters', () => {
    const details = { name: 'details', examples: ['tell me about Pale Rider'] };
    const search = { name: 'search', examples: ['westerns with clint eastwood'] };
    expect(scoreTool('tell me about Alien', details)).toMatchObject({ score: 92, item_name: 'Alien' });
    expect(scoreTool('tell me about Alien', search).score).toBeLessThan(70);
    expect(scoreTool('comedies from the 1980s', search).score).toBeGreaterThanOrEqual(85);
    expect(scoreTool('comedies from the 1980s', details).score).toBeLessThan(70);
    expect(extractParams('compare', 'compare Alien and Blade Runner')).toMatchObject({
      item1_name: 'Alien',
      item2_name: 'Blade Runner',
    });
    expect(extractParams('ensemble', 'plan a movie night with a comedy and a horror film')).toEqual({
      queries: ['comedy', 'horror film'],
      ensemble_type: 'movie_night',
    });
  });

  it('decontextualizes follow-ups only', () => {
    const ask = (query: string, prev: string[]) => localTaskAnswer({ kind: 'decontextualize', query, prev });
    expect(ask('who directed it', ['tell me about Pale Rider'])).toEqual({
      requires_decontextualization: true,
      decontextualized_query: 'who directed Pale Rider',
    });
    expect(ask('from the 1970s', ['westerns with clint eastwood'])).toMatchObject({
      decontextualized_query: 'westerns with clint eastwood from the 1970s',
    });
    expect(ask('comedies from the 1980s', ['westerns'])).toMatchObject({
      requires_decontextualization: false,
    });
    expect(ask('who directed it', [])).toMatchObject({ requires_decontextualization: false });
  });

  it('relevance, required information, item matching and comparison', () => {
    // the router reads what the question asks for that the site lacks; the local model reports it
    expect(
      localTaskAnswer({
        kind: 'relevance',
        query: 'a chocolate cake recipe',
        site: 'movies',
        siteTypes: ['Movie'],
        foreign: ['Recipe'],
      }),
    ).toMatchObject({
      site_is_irrelevant_to_query: true,
      explanation_for_irrelevance: 'The site movies has Movie items; the question asks for Recipe items.',
    });
    // with nothing read, no grounds to turn a question away
    expect(
      localTaskAnswer({ kind: 'relevance', query: 'laptops in stock', site: 'shop', siteTypes: ['Product'] }),
    ).toMatchObject({ site_is_irrelevant_to_query: false });
    expect(
      localTaskAnswer({ kind: 'required_info', query: 'what should I watch', itemType: 'Movie' }),
    ).toMatchObject({
      required_info_found: false,
    });
    expect(
      localTaskAnswer({ kind: 'required_info', query: 'best westerns', itemType: 'Movie' }),
    ).toMatchObject({
      required_info_found: true,
    });
  });

  it('the Llm answers tasks through the local provider, and the fake server answers them over HTTP', async () => {
    const task = {
      kind: 'tool_score' as const,
      query: 'tell me about Alien',
      itemType: 'Movie',
      tool: { name: 'details', examples: ['tell me about X'], params: ['item_name'] },
    };
    const messages = [{ role: 'user' as const, content: taskPrompt('Score the tool.', task) }];
    const local = await new Llm(new LocalAdapter()).complete({
      messages,
      tier: 'high',
      jsonSchema: ToolScoreAnswer,
      task,
    });
    expect(local).toMatchObject({ score: 92, item_name: 'Alien' });
    const fake = await startFakeLlm();
    try {
      const remote = new Llm(
        new OpenAiCompatibleAdapter({ baseURL: fake.baseURL, apiKey: 'x', models: { low: 'm', high: 'm' } }),
      );
      expect(await remote.complete({ messages, tier: 'high', jsonSchema: ToolScoreAnswer })).toMatchObject({
        score: 92,
        item_name: 'Alien',
      });
      const d = await remote.complete({
        messages: [
          {
            role: 'user',
            content: taskPrompt('Rewrite.', {
              kind: 'decontextualize',
              query: 'who directed it',
              prev: ['Alien'],
            }),
          },
        ],
        tier: 'high',
        jsonSchema: DecontextualizeAnswer,
      });
      expect(d.decontextualized_query).toBe('who directed Alien');
    } finally {
      await fake.close();
    }
  });
});

describe('defined tasks', () => {
  type EchoTask = { kind: 'test_echo'; words: string[] };
  const EchoAnswer = z.object({ echoed: z.string(), count: z.coerce.number() });
  const echo = defineTask({
    kind: 'test_echo',
    schema: EchoAnswer,
    local: (task: EchoTask) => ({ echoed: task.words.join(' '), count: String(task.words.length) }),
  });

  it('answers a defined task locally, through the local provider and over the fake server', async () => {
    const task: EchoTask = { kind: 'test_echo', words: ['a', 'b'] };
    expect(hasLocalAnswer('test_echo')).toBe(true);
    expect(localTaskAnswer(task)).toEqual({ echoed: 'a b', count: '2' });
    const messages = [{ role: 'user' as const, content: taskPrompt('Echo.', task) }];
    const local = new Llm(new LocalAdapter());
    expect(await local.complete({ messages, tier: 'low', jsonSchema: echo.schema, task })).toEqual({
      echoed: 'a b',
      count: 2,
    });
    const fake = await startFakeLlm();
    try {
      const remote = new Llm(
        new OpenAiCompatibleAdapter({ baseURL: fake.baseURL, apiKey: 'x', models: { low: 'm', high: 'm' } }),
      );
      expect(await remote.complete({ messages, tier: 'low', jsonSchema: echo.schema })).toEqual({
        echoed: 'a b',
        count: 2,
      });
      expect(fake.byKind.test_echo).toBe(1);
    } finally {
      await fake.close();
    }
  });

  it("refuses a task kind nobody defined, and defining one of askbus's own kinds", async () => {
    expect(hasLocalAnswer('test_unknown')).toBe(false);
    expect(() => localTaskAnswer({ kind: 'test_unknown' })).toThrow(/no local answer/);
    await expect(
      new Llm(new LocalAdapter()).complete({
        messages: [{ role: 'user', content: 'x' }],
        tier: 'low',
        task: { kind: 'test_unknown' },
      }),
    ).rejects.toMatchObject({ code: 'unsupported' });
    expect(() =>
      defineTask({ kind: 'relevance', schema: z.object({}), local: (_task: { kind: 'relevance' }) => ({}) }),
    ).toThrow(/askbus's own/);
    expect(() =>
      defineTask({ kind: 'rank', schema: z.object({}), local: (_task: { kind: 'rank' }) => ({}) }),
    ).toThrow(/askbus's own/);
  });
});
