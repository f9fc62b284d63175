/**
 * The data traps of issue 19, item 5: a page of 500 000 nested <div> (quadratic in htmlparser2's
 * Parser: 168 s), JSON-LD nested too deep to stringify ("Maximum call stack size exceeded", no
 * file named), a CSV parse error that dropped the valid rows before it, and a CSV without a
 * type column that loaded nothing quietly.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadStream } from './load';
import type { Format } from './formats';
import { MAX_RECORD_DEPTH, type IngestError, type IngestEvent } from './items';
import { htmlLinkedData } from './html';

async function load(
  text: string,
  name: string,
  opts: { format?: Format; defaultType?: string } = {},
): Promise<{ urls: string[]; errors: IngestError[] }> {
  const urls: string[] = [];
  const errors: IngestError[] = [];
  for await (const ev of loadStream(Readable.from([Buffer.from(text)]), name, {
    site: 'traps',
    ...opts,
  }) as AsyncIterable<IngestEvent>) {
    if (ev.kind === 'item') urls.push(ev.item.url);
    else errors.push(ev.error);
  }
  return { urls, errors };
}

const thing = (n: number, extra = ''): string =>
  `{"@type":"Thing","name":"T${n}","url":"https://t.example/${n}"${extra}}`;
const deepArray = (n: number): string => '['.repeat(n) + ']'.repeat(n);
const deepObject = (n: number): string => '{"a":'.repeat(n) + '1' + '}'.repeat(n);

describe('HTML nested deeply', () => {
  const page = (divs: number): string =>
    `<html><head><link rel="canonical" href="https://t.example/page"></head><body>${'<div>'.repeat(divs)}` +
    `<script type="application/ld+json">${thing(1)}</script>${'</div>'.repeat(divs)}</body></html>`;

  it('loads in time linear in the nesting: 50 000 and 500 000 <div>', async () => {
    await load(page(1_000), 'warm.html'); // JIT warm-up, not measured
    const times: number[] = [];
    for (const divs of [50_000, 500_000]) {
      const html = page(divs);
      const t = performance.now();
      const { urls, errors } = await load(html, `deep-${divs}.html`);
      times.push(performance.now() - t);
      expect(urls).toEqual(['https://t.example/1']);
      expect(errors).toEqual([]);
    }
    const [t50, t500] = times as [number, number];
    console.log(
      `HTML with 50 000 nested <div>: ${t50.toFixed(0)} ms; 500 000: ${t500.toFixed(0)} ms ` +
        `(×${(t500 / t50).toFixed(1)} for ×10 the nesting; quadratic would be ×100)`,
    );
    // Before: 168 s for 500 000. A loose bound, far from quadratic, for a busy machine.
    expect(t500).toBeLessThan(20_000);
  });

  it('reads what the Parser read: canonical or og:url, lines, attributes in any case, unclosed scripts', () => {
    const html = [
      '<!doctype html><html><head>',
      '<META PROPERTY="og:url" CONTENT="https://t.example/og">',
      '<link rel="canonical" href="https://t.example/canonical">',
      '</head><body>',
      '<script TYPE=" Application/LD+JSON ">{"a":"</div>"}</script>',
      '<script type="text/javascript">var x = "<script type=\\"application/ld+json\\">";</script>',
      '<script type="application/ld+json">[1]',
    ].join('\n');
    const got = htmlLinkedData(html);
    expect(got.canonical).toBe('https://t.example/og');
    expect(got.scripts).toEqual([
      { text: '{"a":"</div>"}', line: 5 },
      { text: '[1]', line: 7 },
    ]);
  });
});

describe('JSON-LD nested deeply', () => {
  const tooDeep = 200_000;

  it('each format names the file and the record; the items around it load', async () => {
    const inner = `,"x":${deepArray(tooDeep)}`;
    const cases: [string, string, Partial<IngestError>][] = [
      ['one.json', thing(2, inner), { file: 'one.json', line: 1 }],
      ['array.json', `[${thing(1)},\n${thing(2, inner)},\n${thing(3)}]`, { file: 'array.json', record: 2 }],
      [
        'lines.jsonl',
        `${thing(1)}\n${thing(2, `,"x":${deepObject(tooDeep)}`)}\n${thing(3)}\n`,
        { file: 'lines.jsonl', line: 2 },
      ],
      [
        'nlweb.tsv',
        `https://t.example/1\t${thing(1)}\nhttps://t.example/2\t${thing(2, inner)}\n`,
        { file: 'nlweb.tsv', line: 2 },
      ],
      [
        'page.html',
        `<html><body>\n<script type="application/ld+json">${thing(1)}</script>\n<script type="application/ld+json">${thing(2, inner)}</script></body></html>`,
        { file: 'page.html', line: 3 },
      ],
      ['graph.json', `{"@graph":[${thing(1)},${thing(2, inner)}]}`, { file: 'graph.json', line: 1 }],
      ['bare.json', deepArray(tooDeep), { file: 'bare.json', record: 1 }],
    ];
    for (const [name, text, where] of cases) {
      const { urls, errors } = await load(text, name);
      expect(errors, name).toEqual([{ ...where, reason: `nested deeper than ${MAX_RECORD_DEPTH} levels` }]);
      expect(urls.includes('https://t.example/2'), name).toBe(false);
      if (name !== 'bare.json' && name !== 'one.json') expect(urls, name).toContain('https://t.example/1');
    }
  });

  it('a record just under the limit loads', async () => {
    const { urls, errors } = await load(thing(1, `,"x":${deepArray(MAX_RECORD_DEPTH - 1)}`), 'ok.json');
    expect(errors).toEqual([]);
    expect(urls).toEqual(['https://t.example/1']);
  });
});

describe('CSV', () => {
  const rows = (n: number): string[] =>
    Array.from({ length: n }, (_, i) => `Item ${i},https://c.example/${i},Thing`);

  it('a bad row is skipped and named; the valid rows before and after it load', async () => {
    const text = [
      'name,url,@type',
      ...rows(5),
      'Bad "quote,https://c.example/bad,Thing',
      ...rows(9).slice(5),
    ].join('\n');
    const { urls, errors } = await load(text, 'bad.csv');
    expect(urls).toEqual(Array.from({ length: 9 }, (_, i) => `https://c.example/${i}`));
    expect(errors).toEqual([
      { file: 'bad.csv', line: 7, reason: expect.stringMatching(/^bad CSV row: Invalid Opening Quote/) },
    ]);
  });

  it('a quote never closed: the rows before it load, the error names its line', async () => {
    const { urls, errors } = await load(
      ['name,url,@type', ...rows(3), '"Open,https://c.example/x,Thing'].join('\n'),
      'open.csv',
    );
    expect(urls).toHaveLength(3);
    expect(errors).toEqual([
      { file: 'open.csv', line: 5, reason: expect.stringMatching(/Quote Not Closed/) },
    ]);
  });

  it('without a @type column and without --type: one clear error, not a row of them', async () => {
    const text = [
      'name,url',
      ...Array.from({ length: 9 }, (_, i) => `Item ${i},https://c.example/${i}`),
    ].join('\n');
    const { urls, errors } = await load(text, 'untyped.csv');
    expect(urls).toEqual([]);
    expect(errors).toEqual([
      { file: 'untyped.csv', reason: expect.stringMatching(/^no @type column .*--type/) },
    ]);
    expect((await load(text, 'untyped.csv', { defaultType: 'Movie' })).urls).toHaveLength(9);
  });

  it('a column named through __proto__ sets nothing on every object; "constructor" is a column like any', async () => {
    const text = [
      'name,url,@type,__proto__.polluted,constructor,constructor.prototype.bad',
      'Item 0,https://c.example/0,Thing,yes,Ferrari,no',
    ].join('\n');
    const items: Record<string, unknown>[] = [];
    for await (const ev of loadStream(Readable.from([Buffer.from(text)]), 'p.csv', {
      site: 'traps',
    }) as AsyncIterable<IngestEvent>)
      if (ev.kind === 'item') items.push(ev.item.schema_object);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    expect(items).toHaveLength(1);
    expect(Object.hasOwn(items[0]!, 'polluted')).toBe(false);
    expect(items[0]!.constructor).toEqual({ prototype: { bad: 'no' } });
  });
});
