/**
 * Property tests of the loaders on bad input: arbitrary bytes and near-valid documents of every
 * format never throw, every bad record is reported with its file and line (or record), and the
 * valid records around the garbage all come out.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { loadStream } from './index';
import type { Format, IngestError, IngestEvent } from './index';
import type { StoredItem } from '@askbus/contracts';

const FC = { seed: 20261202, numRuns: 60 } as const;
const FORMATS: Format[] = ['json', 'jsonl', 'tsv', 'csv', 'html', 'feed'];
const NAME: Record<Format, string> = {
  json: 'data.json',
  jsonl: 'data.jsonl',
  tsv: 'data.tsv',
  csv: 'data.csv',
  html: 'page.html',
  feed: 'feed.xml',
};

async function load(content: string | Uint8Array, format: Format | undefined, name: string) {
  const items: StoredItem[] = [];
  const errors: IngestError[] = [];
  const input = Readable.from([Buffer.from(content)]);
  const events: AsyncIterable<IngestEvent> = loadStream(input, name, {
    site: 'fuzz',
    ...(format ? { format } : {}),
  });
  for await (const e of events) {
    if (e.kind === 'item') items.push(e.item);
    else errors.push(e.error);
  }
  return { items, errors };
}

/** Every error names its file; line/record, when given, are positive integers. */
function expectWellFormed(errors: IngestError[], name: string): void {
  for (const e of errors) {
    expect(e.file).toBe(name);
    expect(typeof e.reason).toBe('string');
    if (e.line !== undefined) expect(Number.isInteger(e.line) && e.line >= 1).toBe(true);
    if (e.record !== undefined) expect(Number.isInteger(e.record) && e.record >= 1).toBe(true);
  }
}

const item = (n: number) => ({ '@type': 'Movie', name: `Movie ${n}`, url: `https://fuzz.example/m/${n}` });

/** One line that is not a valid record (no newline in it). */
const garbageLine = fc.oneof(
  fc.string({ maxLength: 40 }).map((s) => s.replace(/[\r\n]/g, ' ')),
  fc.constantFrom(
    '{"@type":"Movie","name":"trunc',
    '{',
    '[1,2',
    '"just a string"',
    '42',
    'null',
    '{"name":"no type","url":"https://x/1"}',
    '{"@type":"Movie","name":"no url"}',
    '\u0000\u0001\uFFFD',
    '\uD800',
    '{"@type":"Movie","url":"https://x/"}}',
  ),
);

/** N valid items with garbage lines interleaved: [kind, n | garbage]. */
const interleaved = fc
  .array(fc.oneof(fc.constant<'item'>('item'), garbageLine), { minLength: 1, maxLength: 30 })
  .map((entries) => {
    let n = 0;
    return entries.map((e) => (e === 'item' ? { n: n++ } : { garbage: e }));
  });

/** Garbage that can never be a valid record on its own in any line format. */
const isItem = (e: { n?: number; garbage?: string }): e is { n: number } => e.n !== undefined;

describe('loaders on arbitrary bytes', () => {
  it('never throw, whatever the bytes and format', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.uint8Array({ maxLength: 400 }), fc.string({ unit: 'binary', maxLength: 300 })),
        fc.constantFrom<Format | undefined>(undefined, ...FORMATS),
        async (content, format) => {
          const name = format ? NAME[format] : 'unknown.bin';
          const { errors } = await load(content, format, name);
          expectWellFormed(errors, name);
        },
      ),
      FC,
    );
  });

  it('never throw on near-valid documents (truncated, broken quoting, bad XML, broken ld+json)', async () => {
    const docs: [Format, string][] = [
      ['json', JSON.stringify([item(0), item(1), item(2)])],
      ['json', JSON.stringify({ '@graph': [item(0), item(1)] })],
      ['jsonl', [item(0), item(1)].map((i) => JSON.stringify(i)).join('\n')],
      ['tsv', [0, 1].map((n) => `${item(n).url}\t${JSON.stringify(item(n))}\t[0.1,0.2]`).join('\n')],
      ['csv', '@type,name,url\nMovie,"A, b",https://x/1\nMovie,"C ""d""",https://x/2\n'],
      [
        'html',
        `<html><head><link rel="canonical" href="https://x/p"><script type="application/ld+json">${JSON.stringify(item(0))}</script></head><body><script type="application/ld+json">${JSON.stringify([item(1)])}</script></body></html>`,
      ],
      [
        'feed',
        '<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><item><title>A</title><link>https://x/a</link></item><item><title>B</title><link>https://x/b</link></item></channel></rss>',
      ],
      [
        'feed',
        '<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><entry><title>A</title><link href="https://x/a"/></entry></feed>',
      ],
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...docs),
        fc.nat(),
        fc.nat(),
        fc.string({ maxLength: 8 }),
        fc.constantFrom('truncate', 'insert', 'delete', 'replace'),
        async ([format, doc], a, b, junk, how) => {
          const i = a % (doc.length + 1);
          const j = Math.min(doc.length, i + (b % 20));
          const mutated =
            how === 'truncate'
              ? doc.slice(0, i)
              : how === 'insert'
                ? doc.slice(0, i) + junk + doc.slice(i)
                : how === 'delete'
                  ? doc.slice(0, i) + doc.slice(j)
                  : doc.slice(0, i) + junk + doc.slice(j);
          const { errors } = await load(mutated, format, NAME[format]);
          expectWellFormed(errors, NAME[format]);
        },
      ),
      { ...FC, numRuns: 150 },
    );
  });
});

describe('valid records around garbage all come out', () => {
  it('JSON lines: every valid line is an item, every garbage line an error with its line', async () => {
    await fc.assert(
      fc.asyncProperty(interleaved, async (entries) => {
        const text = entries.map((e) => (isItem(e) ? JSON.stringify(item(e.n)) : e.garbage)).join('\n');
        const { items, errors } = await load(text, 'jsonl', 'x.jsonl');
        const want = entries.filter(isItem).map((e) => item(e.n).url);
        expect(items.map((i) => i.url)).toEqual(want);
        expectWellFormed(errors, 'x.jsonl');
        const itemLines = new Set(entries.flatMap((e, k) => (isItem(e) ? [k + 1] : [])));
        for (const e of errors) expect(itemLines.has(e.line!)).toBe(false);
        // every non-blank garbage line is reported, at its own line
        const bad = entries.flatMap((e, k) => (!isItem(e) && e.garbage.trim() ? [k + 1] : []));
        expect(new Set(errors.map((e) => e.line))).toEqual(new Set(bad));
      }),
      FC,
    );
  });

  it('TSV: every valid url<TAB>json line is an item', async () => {
    await fc.assert(
      fc.asyncProperty(interleaved, async (entries) => {
        const text = entries
          .map((e) =>
            isItem(e) ? `${item(e.n).url}\t${JSON.stringify(item(e.n))}` : e.garbage.replace(/\t/g, ' '),
          )
          .join('\n');
        const { items, errors } = await load(text, 'tsv', 'x.tsv');
        expect(items.map((i) => i.url)).toEqual(entries.filter(isItem).map((e) => item(e.n).url));
        expectWellFormed(errors, 'x.tsv');
        const bad = entries.flatMap((e, k) => (!isItem(e) && e.garbage.trim() ? [k + 1] : []));
        expect(new Set(errors.map((e) => e.line))).toEqual(new Set(bad));
      }),
      FC,
    );
  });

  it('JSON arrays: valid elements all come out, bad ones are reported by record', async () => {
    const badElement = fc.constantFrom<unknown>(42, 'text', null, { name: 'no type' }, { '@type': 'Movie' }, [
      [[]],
    ]);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.constant<'item'>('item'), badElement), { minLength: 1, maxLength: 30 }),
        async (raw) => {
          let n = 0;
          const elements = raw.map((e) => (e === 'item' ? item(n++) : e));
          const { items, errors } = await load(JSON.stringify(elements), 'json', 'x.json');
          expect(items.map((i) => i.url)).toEqual(Array.from({ length: n }, (_, k) => item(k).url));
          expectWellFormed(errors, 'x.json');
          for (const e of errors) expect(raw[e.record! - 1]).not.toBe('item');
        },
      ),
      FC,
    );
  });

  it('CSV: rows without a type or url are reported by line, the others all come out', async () => {
    const badRow = fc.constantFrom(
      ',,',
      'Movie,no url,',
      ',Nameless,https://x/untyped',
      'WebSite,Site,https://x/',
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.constant<'item'>('item'), badRow), { minLength: 1, maxLength: 30 }),
        async (rows) => {
          let n = 0;
          const lines = rows.map((r) =>
            r === 'item' ? `Movie,Movie ${n},https://fuzz.example/m/${n++}` : r,
          );
          const { items, errors } = await load(['@type,name,url', ...lines].join('\n'), 'csv', 'x.csv');
          expect(items.map((i) => i.url)).toEqual(Array.from({ length: n }, (_, k) => item(k).url));
          expectWellFormed(errors, 'x.csv');
          for (const e of errors) expect(e.line).toBeDefined();
        },
      ),
      FC,
    );
  });

  it('HTML: every well-formed ld+json script is kept, broken ones reported at their line', async () => {
    const brokenScript = fc.constantFrom(
      '{"@type":"Movie",',
      '<!-- not json -->',
      '',
      '[1,2',
      '{"@type":"Movie","name":"x"}',
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.constant<'item'>('item'), brokenScript), { minLength: 1, maxLength: 15 }),
        async (scripts) => {
          let n = 0;
          const body = scripts
            .map(
              (s) =>
                `<p>text</p>\n<script type="application/ld+json">${s === 'item' ? JSON.stringify(item(n++)) : s}</script>`,
            )
            .join('\n');
          const html = `<!doctype html>\n<html><body>\n${body}\n</body></html>`;
          const { items, errors } = await load(html, 'html', 'p.html');
          expect(items.map((i) => i.url)).toEqual(Array.from({ length: n }, (_, k) => item(k).url));
          expectWellFormed(errors, 'p.html');
          for (const e of errors) expect(e.line).toBeDefined();
        },
      ),
      FC,
    );
  });
});

describe('counterexamples found by the properties', () => {
  it('a feed that is not XML ("<") is one error, not an exception', async () => {
    const { items, errors } = await load('<', 'feed', 'feed.xml');
    expect(items).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ file: 'feed.xml', reason: expect.stringMatching(/^bad XML/) });
  });

  it('a JSON array broken mid-way is reported as an error, not an uncaught exception and a hang', async () => {
    // stream-json's parse error used to escape as an uncaught exception and hang the loader; and
    // the elements parsed in the same chunk before the error were lost (see the next describe).
    const text = `[${JSON.stringify(item(0))},${JSON.stringify(item(1))},{,}]`;
    const { items, errors } = await load(text, 'json', 'x.json');
    expect(items.map((i) => i.url)).toEqual([item(0).url, item(1).url]);
    expect(errors).toEqual([
      {
        file: 'x.json',
        line: 1,
        record: 3,
        reason: expect.stringMatching(/^bad JSON, rest of file skipped/),
      },
    ]);
  });
});

describe('JSON arrays: a parse error keeps every element before it', () => {
  /** Loads `text` split into chunks of `size` bytes, as a file stream would deliver it. */
  async function loadChunked(text: string, size: number) {
    const buf = Buffer.from(text);
    const chunks: Buffer[] = [];
    for (let i = 0; i < buf.length; i += size) chunks.push(buf.subarray(i, i + size));
    const items: StoredItem[] = [];
    const errors: IngestError[] = [];
    for await (const e of loadStream(Readable.from(chunks), 'x.json', { site: 'fuzz', format: 'json' })) {
      if (e.kind === 'item') items.push(e.item);
      else errors.push(e.error);
    }
    return { items, errors };
  }

  // Before the fix, stream-json dropped the tokens of the chunk that held the error: with one
  // chunk (a small file) not one item came out.
  it.each([
    ['in the first (only) chunk', 1 << 20],
    ['in a later chunk', 256],
    ['right at a chunk boundary', 1],
  ])('error %s: the items before it, then one error with the record and line', async (_, size) => {
    const good = Array.from({ length: 5 }, (_, k) => JSON.stringify(item(k)));
    const text = `[\n${good.join(',\n')},\n{"@type": "Movie", broken},\n${JSON.stringify(item(9))}\n]`;
    const { items, errors } = await loadChunked(text, size);
    expect(items.map((i) => i.url)).toEqual(Array.from({ length: 5 }, (_, k) => item(k).url));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ file: 'x.json', record: 6, line: 7 });
    expect(errors[0]!.reason).toMatch(/^bad JSON, rest of file skipped/);
  });

  it('a truncated array: the complete elements, then one error', async () => {
    const text = `[${JSON.stringify(item(0))},${JSON.stringify(item(1))},{"@type":"Mov`;
    const { items, errors } = await loadChunked(text, 1 << 20);
    expect(items).toHaveLength(2);
    expect(errors).toEqual([expect.objectContaining({ file: 'x.json', record: 3, line: 1 })]);
  });

  it('property: garbage anywhere, any chunk size: every element before it comes out', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 12 }),
        fc.integer({ min: 0, max: 4 }),
        fc.constantFrom('}', 'x', '"', ',,', ']]', '{"a" 1}', '\u0000', 'tru'),
        fc.integer({ min: 1, max: 600 }),
        fc.boolean(),
        async (before, after, junk, size, newlines) => {
          const sep = newlines ? ',\n' : ',';
          const head = Array.from({ length: before }, (_, k) => JSON.stringify(item(k)));
          const tail = Array.from({ length: after }, (_, k) => JSON.stringify(item(100 + k)));
          const text = `[${[...head, junk, ...tail].join(sep)}]`;
          const { items, errors } = await loadChunked(text, size);
          expect(items.map((i) => i.url)).toEqual(head.map((_, k) => item(k).url));
          expect(errors).toHaveLength(1);
          expect(errors[0]).toMatchObject({ file: 'x.json', record: before + 1 });
          // the error's line: the junk's (each element on its own line) or, when the parser needs
          // to read on to see the fault (an open string, an unfinished literal), a later one
          if (newlines) expect(errors[0]!.line).toBeGreaterThanOrEqual(before + 1);
          if (junk !== '"' && junk !== 'tru') expect(errors[0]!.line).toBe(newlines ? before + 1 : 1);
        },
      ),
      FC,
    );
  });
});
