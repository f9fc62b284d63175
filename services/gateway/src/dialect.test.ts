import { describe, expect, it } from 'vitest';
import { BadRequestError } from './errors';
import { parseAsk, parseForm } from './dialect';
import type { AskInput } from './dialect';

const ask = (query: Record<string, unknown>, extra: Partial<AskInput> = {}) =>
  parseAsk({ query, body: undefined, ...extra });

function rejects(input: AskInput): BadRequestError {
  try {
    parseAsk(input);
  } catch (err) {
    if (err instanceof BadRequestError) return err;
    throw err;
  }
  throw new Error('accepted');
}

describe('2025 parameters', () => {
  it('defaults', () => {
    const call = ask({ query: ' hello ' });
    expect(call).toMatchObject({ streaming: true, dialect: 'nlweb' });
    expect(call.request).toMatchObject({
      query: 'hello',
      site: ['all'],
      prev: [],
      mode: 'list',
      conversationId: '',
      maxResults: 10,
      minScore: 51,
    });
    expect(call.request.queryId).toMatch(/^[0-9a-f]{32}$/);
    expect(call.request.tool).toBeUndefined();
  });

  it('site: comma lists, spaces to _, repeated keys, all wins', () => {
    expect(ask({ query: 'q', site: 'new york, cars,' }).request.site).toEqual(['new_york', 'cars']);
    expect(ask({ query: 'q', site: ['a', 'b,c'] }).request.site).toEqual(['a', 'b', 'c']);
    expect(ask({ query: 'q', site: 'cars,all' }).request.site).toEqual(['all']);
    expect(ask({ query: 'q', site: '' }).request.site).toEqual(['all']);
  });

  it('prev: comma list, JSON array of strings or {query} objects', () => {
    expect(ask({ query: 'q', prev: 'a, b' }).request.prev).toEqual(['a', 'b']);
    expect(ask({ query: 'q', prev: '["a, with comma","b"]' }).request.prev).toEqual(['a, with comma', 'b']);
    expect(ask({ query: 'q', prev: '[{"query":"a"},{"query":"b"}]' }).request.prev).toEqual(['a', 'b']);
    expect(ask({ query: 'q', prev: '["a", "b"' }).request.prev).toEqual(['a', 'b']);
    expect(parseAsk({ query: {}, body: { query: 'q', prev: [{ query: 'x' }, 'y'] } }).request.prev).toEqual([
      'x',
      'y',
    ]);
  });

  it('mode and generate_mode', () => {
    expect(ask({ query: 'q', generate_mode: 'summarize' }).request.mode).toBe('summarize');
    expect(ask({ query: 'q', generate_mode: 'none' }).request.mode).toBe('list');
    expect(ask({ query: 'q', mode: 'Generate', generate_mode: 'summarize' }).request.mode).toBe('generate');
    expect(ask({ query: 'q', mode: 'none', generate_mode: 'generate' }).request.mode).toBe('list');
  });

  it('streaming: false/False/0 turn it off; Accept and stream=true|1|yes force it', () => {
    for (const v of ['false', 'False', '0', false, 0])
      expect(ask({ query: 'q', streaming: v }).streaming).toBe(false);
    for (const v of ['true', 'True', '1', 'anything', true])
      expect(ask({ query: 'q', streaming: v }).streaming).toBe(true);
    for (const v of ['true', '1', 'yes'])
      expect(ask({ query: 'q', streaming: 'false', stream: v }).streaming).toBe(true);
    expect(ask({ query: 'q', streaming: 'false', stream: 'no' }).streaming).toBe(false);
    expect(ask({ query: 'q', streaming: 'false' }, { accept: 'text/event-stream' }).streaming).toBe(true);
    expect(ask({ query: 'q', streaming: 'false' }, { accept: 'application/json' }).streaming).toBe(false);
  });

  it('integers, ids and tool', () => {
    const call = ask({
      query: 'q',
      max_results: '25',
      min_score: 0,
      query_id: 'abc_1',
      conversation_id: 'c',
      tool: 'search',
    });
    expect(call.request).toMatchObject({
      maxResults: 25,
      minScore: 0,
      queryId: 'abc_1',
      conversationId: 'c',
      tool: 'search',
    });
    expect(ask({ query: 'q', query_id: 'has space' }).request.queryId).toMatch(/^[0-9a-f]{32}$/);
    expect(ask({ query: 'q', max_results: '' }).request.maxResults).toBe(10);
  });

  it('a JSON body is merged over the query string', () => {
    const call = parseAsk({
      query: { query: 'from qs', site: 'movies' },
      body: { query: 'from body', streaming: false },
    });
    expect(call.request).toMatchObject({ query: 'from body', site: ['movies'] });
    expect(call.streaming).toBe(false);
  });

  it.each([
    [{}, 'query', /query is required/],
    [{ query: '   ' }, 'query', /blank/],
    [{ query: 'q', max_results: 'banana' }, 'max_results', /integer from 1 to 100.*banana/],
    [{ query: 'q', max_results: '101' }, 'max_results', /1 to 100/],
    [{ query: 'q', max_results: '2.5' }, 'max_results', /integer/],
    [{ query: 'q', min_score: '-1' }, 'min_score', /0 to 100/],
    [{ query: 'q', mode: 'poem' }, 'mode', /list, summarize, generate/],
    [{ query: 'q', generate_mode: 'poem' }, 'generate_mode', /list, summarize, generate/],
    [{ query: 'q', site: 'a;b' }, 'site', /site/],
    [{ query: 'q', prev: [1, 2] }, 'prev', /prev/],
    [{ query: 'q', conversation_id: 'x'.repeat(201) }, 'conversation_id', /200/],
    [{ query: 'q', streaming: { a: 1 } }, 'streaming', /true or false/],
  ])('rejects %j', (query, parameter, message) => {
    const err = rejects({ query, body: undefined });
    expect(err.parameter).toBe(parameter);
    expect(err.message).toMatch(message);
    expect(err.toBody()).toEqual({
      message_type: 'error',
      error: err.message,
      code: 'bad_request',
      parameter,
    });
  });

  it('rejects bodies that are not an object of parameters', () => {
    expect(rejects({ query: {}, body: [1] }).parameter).toBe('body');
    expect(rejects({ query: {}, body: '{"query": ' }).parameter).toBe('body');
    expect(rejects({ query: {}, body: 'query=x' }).parameter).toBe('body');
  });
});

describe('v0.55 structured body', () => {
  it('is flattened as NLWeb AskAgent does', () => {
    const call = parseAsk({
      query: { site: 'ignored' },
      body: {
        query: { text: 'scifi', site: 'movies,cars', max_results: 5 },
        context: { '@type': 'ConversationalContext', prev: ['one', 'two'] },
        prefer: { streaming: false, mode: 'summarize', response_format: 'conversational_search' },
        meta: { version: '0.55' },
      },
    });
    expect(call).toMatchObject({
      dialect: 'v055',
      streaming: false,
      protocolVersion: '0.55',
      responseFormat: 'conversational_search',
    });
    expect(call.request).toMatchObject({
      query: 'scifi',
      site: ['movies', 'cars'],
      prev: ['one', 'two'],
      mode: 'summarize',
      maxResults: 5,
    });
  });

  it('defaults to streaming and names v0.55 fields in errors', () => {
    // A structured body without prefer or meta.version is protocol 0.5 (v05-detect.ts).
    expect(parseAsk({ query: {}, body: { query: { text: 'x' }, meta: { version: '0.55' } } })).toMatchObject({
      dialect: 'v055',
      streaming: true,
      protocolVersion: '0.55',
    });
    expect(rejects({ query: {}, body: { query: {} } }).parameter).toBe('query.text');
    expect(rejects({ query: {}, body: { query: { text: 'x', site: 'a b/c' } } }).parameter).toBe(
      'query.site',
    );
    expect(rejects({ query: {}, body: { query: { text: 'x' }, prefer: { mode: 'all' } } }).parameter).toBe(
      'prefer.mode',
    );
    expect(rejects({ query: {}, body: { query: { text: 'x' }, context: 'nope' } }).parameter).toBe('context');
  });
});

it('parseForm keeps repeated keys', () => {
  expect(parseForm('query=a+b&site=x&site=y&prev=%5B%22p%22%5D')).toEqual({
    query: 'a b',
    site: ['x', 'y'],
    prev: '["p"]',
  });
});
