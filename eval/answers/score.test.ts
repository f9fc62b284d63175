import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { QuestionSchema, readQuestions, type Question } from './questions';
import { missText } from './report';
import { expectedFor, isMiss, judge, problemsOf, readAnswer, summarize, type Answer } from './score';
import type { EvalRecord } from './sites/site';

const record = (n: number, mass: number, species = 'Gentoo'): EvalRecord => ({
  url: `https://p.example/${n}`,
  name: `${species} penguin ${n}`,
  row: { Species: species, 'Body Mass (g)': mass },
});
// 1–8 Gentoo of rising mass; 9 an Adelie
const records = [
  ...[1, 2, 3, 4, 5, 6, 7, 8].map((n) => record(n, 5000 + 200 * n)),
  record(9, 3000, 'Adelie'),
];
const url = (n: number) => `https://p.example/${n}`;

const q = (json: unknown): Question => QuestionSchema.parse(json);
const heavy = q({
  id: 'c1',
  kind: 'constraint',
  query: 'gentoos over 6000 g',
  relevant: {
    all: [
      { field: 'Species', eq: 'Gentoo' },
      { field: 'Body Mass (g)', gt: 6000 },
    ],
  },
}); // rows 6, 7, 8
const heaviest = q({
  id: 'c2',
  kind: 'constraint',
  query: 'heaviest',
  relevant: { top: 1, by: 'Body Mass (g)' },
});
const details = q({
  id: 'd1',
  kind: 'details',
  query: 'how heavy is Gentoo penguin 2',
  item: { field: '@name', eq: 'Gentoo penguin 2' },
});
const compare = q({
  id: 'm1',
  kind: 'compare',
  query: 'Gentoo penguin 1 vs Adelie penguin 9',
  items: [
    { field: '@name', eq: 'Gentoo penguin 1' },
    { field: '@name', eq: 'Adelie penguin 9' },
  ],
});

const envelope = { message_id: 'x', sender_type: 'assistant', timestamp: 't', conversation_id: 'c' };
const results = (...ns: number[]) => ({
  ...envelope,
  message_type: 'result',
  content: ns.map((n) => ({
    '@type': 'Item',
    url: url(n),
    name: `item ${n}`,
    site: 'p',
    score: 80,
    description: '',
  })),
});
const body = (...messages: unknown[]) => ({ query_id: 'q', results: [], messages });
const list = (...ns: number[]): Answer => readAnswer(body(results(...ns)));

describe('reading an answer', () => {
  it('takes result lists in order as a search, and skips a Summary', () => {
    const a = readAnswer(
      body(
        { ...envelope, message_type: 'begin-nlweb-response', query: 'q' },
        results(3, 1),
        { ...envelope, message_type: 'result', '@type': 'Summary', content: 'Some text' },
        results(2),
        { ...envelope, message_type: 'end-nlweb-response' },
      ),
    );
    expect(a.tool).toBe('search');
    expect(a.items.map((i) => i.url)).toEqual([url(3), url(1), url(2)]);
    expect(list(6, 6, 7).items.map((i) => i.url)).toEqual([url(6), url(7)]);
  });

  it('knows the details and compare tools by their messages, and the router’s choice when it says', () => {
    const d = readAnswer(
      body(
        { ...envelope, message_type: 'tool_selection', selected_tool: 'details', score: 95 },
        { ...envelope, message_type: 'item_details', name: 'Gentoo penguin 2', url: url(2), details: '…' },
      ),
    );
    expect(d).toMatchObject({ tool: 'details', detailsUrl: url(2), chosen: 'details' });
    const c = readAnswer(
      body({
        ...envelope,
        message_type: 'compare_items',
        item1: { name: 'a', url: url(1) },
        item2: { name: 'b', url: url(9) },
      }),
    );
    expect(c).toMatchObject({ tool: 'compare', compareUrls: [url(1), url(9)] });
  });

  it('calls an answer with only text none, an error an error, and keeps their text for the miss report', () => {
    const none = readAnswer(
      body(
        { ...envelope, message_type: 'tool_selection', selected_tool: 'compare' },
        { ...envelope, message_type: 'no_results', content: 'Could not find X to compare.' },
      ),
    );
    expect(none).toMatchObject({
      tool: 'none',
      chosen: 'compare',
      notes: ['no_results: Could not find X to compare.'],
    });
    expect(
      readAnswer(body({ ...envelope, message_type: 'error', error: 'boom', code: 'internal' })).tool,
    ).toBe('error');
    expect(readAnswer({ nope: true }).tool).toBe('error');
    const lost = readAnswer(
      body({
        ...envelope,
        message_type: 'item_details',
        name: 'x',
        url: '',
        details: 'Could not find any items matching "x".',
      }),
    );
    expect(lost).toMatchObject({
      tool: 'details',
      items: [],
      notes: [expect.stringMatching(/Could not find/)],
    });
  });
});

describe('judging a question', () => {
  it('precision@5 is the relevant among the first five over min(5, relevant rows)', () => {
    const e = expectedFor(heavy, records);
    expect(e.relevant).toEqual(new Set([url(6), url(7), url(8)]));
    expect(judge(heavy, e, list(6, 7, 8)).precision).toBe(1);
    expect(judge(heavy, e, list(1, 6, 2, 7, 3, 8)).precision).toBeCloseTo(2 / 3); // the 6th does not count
    expect(judge(heavy, e, list(1, 2)).precision).toBe(0);
    const nothing = judge(
      heavy,
      e,
      readAnswer(body({ ...envelope, message_type: 'no_results', content: 'none' })),
    );
    expect(nothing).toMatchObject({ precision: 0, relevantCount: 3, routed: false, tool: 'none' });
    // a superlative with one relevant row: it need only be among the first five
    expect(judge(heaviest, expectedFor(heaviest, records), list(1, 2, 3, 4, 8)).precision).toBe(1);
    expect(judge(heaviest, expectedFor(heaviest, records), list(1, 2, 3, 4, 5, 8)).precision).toBe(0);
  });

  it('marks what was shown ✓ or ✗ and counts routing against the kind’s tool', () => {
    const o = judge(heavy, expectedFor(heavy, records), list(6, 1));
    expect(o.shown.map((s) => s.ok)).toEqual([true, false]);
    expect(o.routed).toBe(true);
    expect(isMiss(o)).toBe(true);
    expect(missText('penguins', o)).toMatch(/precision@5 0\.33, 3 relevant rows\n\s+✓ item 6\n\s+✗ item 1/);
  });

  it('details: right only when item_details is an expected row', () => {
    const e = expectedFor(details, records);
    const right = readAnswer(body({ ...envelope, message_type: 'item_details', name: 'x', url: url(2) }));
    const wrong = readAnswer(body({ ...envelope, message_type: 'item_details', name: 'x', url: url(3) }));
    expect(judge(details, e, right)).toMatchObject({ itemCorrect: true, routed: true });
    expect(judge(details, e, wrong)).toMatchObject({ itemCorrect: false, routed: true });
    // a list that happens to hold the item is a wrong route and a wrong item
    expect(judge(details, e, list(2))).toMatchObject({ itemCorrect: false, routed: false, tool: 'search' });
  });

  it('compare: right only when both sides are there, each by a different item', () => {
    const e = expectedFor(compare, records);
    const cmp = (a: number, b: number) =>
      readAnswer(
        body({
          ...envelope,
          message_type: 'compare_items',
          item1: { name: 'a', url: url(a) },
          item2: { name: 'b', url: url(b) },
        }),
      );
    expect(judge(compare, e, cmp(9, 1)).itemCorrect).toBe(true);
    expect(judge(compare, e, cmp(1, 2)).itemCorrect).toBe(false);
    expect(judge(compare, e, cmp(1, 1)).itemCorrect).toBe(false);
  });

  it('finds questions that cannot be judged', () => {
    const none = q({
      id: 'x',
      kind: 'constraint',
      query: 'emperors',
      relevant: { field: 'Species', eq: 'Emperor' },
    });
    expect(problemsOf(none, expectedFor(none, records))).toEqual(['x: no row satisfies "relevant"']);
    const same = q({
      id: 'y',
      kind: 'compare',
      query: 'a vs a',
      items: [
        { field: 'Species', eq: 'Adelie' },
        { field: '@url', eq: url(9) },
      ],
    });
    expect(problemsOf(same, expectedFor(same, records))).toEqual(['y: the two compared items overlap']);
    expect(problemsOf(heavy, expectedFor(heavy, records))).toEqual([]);
  });
});

describe('summarizing a site', () => {
  it('averages precision over constraint questions and rates routing and items by kind', () => {
    const s = summarize([
      judge(heavy, expectedFor(heavy, records), list(6, 7, 8)), // 1
      judge(heaviest, expectedFor(heaviest, records), list(1)), // 0
      judge(details, expectedFor(details, records), list(2)), // wrong route
      judge(
        compare,
        expectedFor(compare, records),
        readAnswer(
          body({
            ...envelope,
            message_type: 'compare_items',
            item1: { name: 'a', url: url(1) },
            item2: { name: 'b', url: url(9) },
          }),
        ),
      ),
    ]);
    expect(s.precisionAt5).toEqual({ n: 2, mean: 0.5 });
    expect(s.routing).toEqual({ n: 4, correct: 3, rate: 0.75 });
    expect(s.routingByKind.details).toEqual({ n: 1, correct: 0, rate: 0 });
    expect(s.routingByKind.search).toEqual({ n: 0, correct: 0, rate: null });
    expect(s.detailsItem.rate).toBe(0);
    expect(s.compareItem.rate).toBe(1);
  });
});

describe('question files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'eval-questions-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('name the line and the problem of a bad question', () => {
    const file = join(dir, 'bad.jsonl');
    writeFileSync(file, `${JSON.stringify(heavy)}\n\n{"id":"c2","kind":"constraint","query":"x"}\n`);
    expect(() => readQuestions(file)).toThrow(/bad\.jsonl:3: .*relevant/s);
    writeFileSync(file, `${JSON.stringify(heavy)}\n${JSON.stringify(heavy)}\n`);
    expect(() => readQuestions(file)).toThrow(/bad\.jsonl:2: id "c1" is used twice/);
    writeFileSync(file, '{"id":\n');
    expect(() => readQuestions(file)).toThrow(/bad\.jsonl:1: bad JSON/);
    writeFileSync(file, `${JSON.stringify({ ...heavy, kind: 'opinion' })}\n`);
    expect(() => readQuestions(file)).toThrow(/bad\.jsonl:1/);
  });
});
