import { describe, expect, it } from 'vitest';
import { AnswerPrinter, textOf } from './ask';
import type { Io } from './ask';
import { SseParser, askUrl, gatewayUrl } from './client';

describe('SseParser', () => {
  it('joins data lines, drops comments and other fields, and copes with CRLF and split chunks', () => {
    const p = new SseParser();
    expect(p.push(': keepalive\n\ndata: {"a":1}\n\nevent: result\r\ndata: {"b":')).toEqual(['{"a":1}']);
    expect(p.push('2}\r\n\r\ndata: x\ndata: y\n\nid: 3\n\n')).toEqual(['{"b":2}', 'x\ny']);
    expect(p.push('data: tail')).toEqual([]);
    expect(p.flush()).toEqual(['tail']);
  });
});

describe('gatewayUrl and askUrl', () => {
  it('takes --url, then ASKBUS_URL, then the default, and builds NLWeb parameters', () => {
    expect(gatewayUrl(undefined, {})).toBe('http://127.0.0.1:8000');
    expect(gatewayUrl(undefined, { ASKBUS_URL: 'http://h:1/' })).toBe('http://h:1');
    expect(gatewayUrl('http://x:2', { ASKBUS_URL: 'http://h:1' })).toBe('http://x:2');
    expect(() => gatewayUrl('ftp://x', {})).toThrow(/--url must be an http\(s\) URL/);
    const u = new URL(
      askUrl('http://h:1', {
        query: 'a b',
        site: ['movies', 'cars'],
        mode: 'summarize',
        maxResults: 3,
        prev: ['first'],
        conversationId: 'c1',
      }),
    );
    expect(Object.fromEntries(u.searchParams)).toEqual({
      query: 'a b',
      streaming: 'true',
      site: 'movies,cars',
      mode: 'summarize',
      max_results: '3',
      prev: '["first"]',
      conversation_id: 'c1',
    });
  });
});

describe('AnswerPrinter', () => {
  const capture = () => {
    const out: string[] = [];
    const err: string[] = [];
    const io: Io = { out: (t) => void out.push(t), err: (t) => void err.push(t), env: {}, color: false };
    return { io, out, err };
  };
  const item = (name: string, score: number) => ({
    '@type': 'Item',
    name,
    score,
    url: `https://x.example/${name}`,
    description: `about ${name}`,
    schema_object: {},
  });

  it('numbers results across batches and prints the last generated answer once', () => {
    const { io, out, err } = capture();
    const p = new AnswerPrinter(io);
    p.message({ message_type: 'begin-nlweb-response' });
    p.message({ message_type: 'intermediate_message', content: 'Looking' });
    p.message({ message_type: 'result', content: [item('a', 90.4)] });
    p.message({ message_type: 'result', content: [item('b', 70)] });
    p.message({ message_type: 'nlws', answer: 'draft', items: [] });
    p.message({ message_type: 'nlws', answer: 'final', items: [item('a', 90)] });
    p.message({ message_type: 'results_map', locations: [{ title: 'T', address: 'A' }] });
    p.message({ message_type: 'end-nlweb-response' });
    const text = out.join('');
    expect(text).toContain(' 1. [90] a\n    about a\n    https://x.example/a\n');
    expect(text).toContain(' 2. [70] b\n');
    expect(text).toContain('Answer: final\nSources:\n  [1] a  https://x.example/a\n');
    expect(text).not.toContain('draft');
    expect(text).toContain('Locations:\n  - T — A\n');
    expect(err.join('')).toBe('… Looking\n');
  });

  it('says so when nothing came, and reads schema.org values as text', () => {
    const { io, out } = capture();
    const p = new AnswerPrinter(io);
    p.message({ message_type: 'end-nlweb-response' });
    expect(out.join('')).toBe('No results.\n');
    expect(textOf({ '@type': 'Person', name: 'Clint' })).toBe('Clint');
    expect(textOf([{ value: 5, unitText: 'USD' }, 'x'])).toBe('5 USD, x');
  });
});
