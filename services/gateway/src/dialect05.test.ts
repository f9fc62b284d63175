import { describe, expect, it } from 'vitest';
import { BadRequestError } from './errors';
import { isV05Body, parseAsk, parseWho } from './dialect';
import { V05BadRequestError } from './v05';

const body = (b: Record<string, unknown>, accept?: string) => parseAsk({ query: {}, body: b, accept });

describe('dialect detection', () => {
  it('return_response or meta.api_version 0.5.x mean 0.5; prefer/meta.version mean v0.55', () => {
    expect(isV05Body({ query: { text: 'x' }, return_response: {} })).toBe(true);
    expect(isV05Body({ query: { text: 'x' }, meta: { api_version: '0.5' } })).toBe(true);
    expect(isV05Body({ query: { text: 'x' }, meta: { api_version: '0.5.3' } })).toBe(true);
    expect(isV05Body({ query: { text: 'x' }, meta: { version: '0.55' }, prefer: {} })).toBe(false);
    expect(isV05Body({ query: { text: 'x' }, meta: { api_version: '1.0' } })).toBe(false);
    expect(isV05Body({ query: 'x' })).toBe(false);
    // The minimal 0.5 request: a structured query and nothing of v0.55's.
    expect(isV05Body({ query: { text: 'x' } })).toBe(true);
    expect(
      isV05Body({ query: { text: 'x' }, context: { prev: ['a'] }, meta: { conversation_id: 'c' } }),
    ).toBe(true);
    expect(isV05Body({ query: { text: 'x' }, meta: { version: '0.55' } })).toBe(false);
    expect(body({ query: { text: 'x' }, prefer: { streaming: false }, return_response: {} }).dialect).toBe(
      'v05',
    );
    expect(body({ query: { text: 'x' }, prefer: { streaming: false } }).dialect).toBe('v055');
    expect(parseAsk({ query: { query: 'x' }, body: undefined }).dialect).toBe('nlweb');
  });
});

describe('protocol 0.5 body', () => {
  it('streams unless return_response.streaming is false; Accept: text/event-stream forces it', () => {
    expect(body({ query: { text: 'x' }, return_response: {} }).streaming).toBe(true);
    expect(body({ query: { text: 'x' }, return_response: { streaming: 'false' } }).streaming).toBe(false);
    expect(
      body({ query: { text: 'x' }, return_response: { streaming: false } }, 'text/event-stream').streaming,
    ).toBe(true);
  });

  it('keeps the client ids, format, lang and client type on the call', () => {
    const call = body({
      query: { text: 'x', site: 'movies, cars' },
      return_response: { format: 'chatgpt_app', lang: 'fr', client_type: 'mobile', mode: 'none' },
      meta: { api_version: '0.5', request_id: 'not a token!', conversation_id: 'c' },
    });
    expect(call).toMatchObject({
      dialect: 'v05',
      protocolVersion: '0.5',
      responseFormat: 'chatgpt_app',
      lang: 'fr',
      clientType: 'mobile',
      requestId: 'not a token!',
    });
    // A request id that cannot be a subject token is echoed, but the query gets its own id.
    expect(call.request.queryId).toMatch(/^[0-9a-f]{32}$/);
    expect(call.request).toMatchObject({ site: ['movies', 'cars'], mode: 'list', conversationId: 'c' });
  });

  it('turns further query fields into filters; values that are not text, numbers or booleans are dropped', () => {
    const call = body({
      query: {
        text: 'x',
        type: ['Movie', 'TVSeries'],
        rating: 4.5,
        open: true,
        where: { lat: 1 },
        tags: [1, {}],
      },
      return_response: {},
    });
    expect(call.request.filters).toEqual({ type: ['Movie', 'TVSeries'], rating: 4.5, open: true });
  });

  it('raises 0.5 failures (still BadRequestErrors) naming the field', () => {
    let err: unknown;
    try {
      body({ query: { text: 'x' }, return_response: { mode: 'poetry' } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(V05BadRequestError);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as V05BadRequestError).parameter).toBe('return_response.mode');
    expect((err as V05BadRequestError).responseBody()).toMatchObject({
      _meta: { version: '0.5', error: { code: 'INVALID_REQUEST', parameter: 'return_response.mode' } },
      content: [{ type: 'text', text: expect.stringContaining('return_response.mode') }],
    });
  });
});

describe('/who parameters', () => {
  it('GET: streaming defaults to false; POST: to true', () => {
    expect(parseWho({ method: 'GET', query: { query: 'x' }, body: undefined })).toEqual({
      dialect: 'nlweb',
      query: 'x',
      streaming: false,
      conversationId: '',
    });
    expect(
      parseWho({ method: 'GET', query: { query: 'x', streaming: 'True' }, body: undefined }).streaming,
    ).toBe(true);
    expect(parseWho({ method: 'GET', query: { query: 'x', stream: '1' }, body: undefined }).streaming).toBe(
      true,
    );
    expect(parseWho({ method: 'POST', query: {}, body: { query: 'x', constr: { type: 'Movie' } } })).toEqual({
      dialect: 'v05',
      query: 'x',
      streaming: true,
      conversationId: '',
      types: ['Movie'],
    });
  });
});
