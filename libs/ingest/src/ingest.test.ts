import { createWriteStream, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectFormat, loadPath, type IngestError, type IngestEvent } from './index';
import type { StoredItem } from '@askbus/contracts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'askbus-ingest-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function collect(events: AsyncIterable<IngestEvent>) {
  const items: StoredItem[] = [];
  const errors: IngestError[] = [];
  const vectors: (number[] | undefined)[] = [];
  for await (const e of events) {
    if (e.kind === 'item') {
      items.push(e.item);
      vectors.push(e.vector);
    } else errors.push(e.error);
  }
  return { items, errors, vectors };
}
const write = (name: string, content: string): string => {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
};
const opts = { site: 'test' };

describe('format detection', () => {
  it('goes by extension, and by content where the extension says nothing', () => {
    expect(detectFormat('a.csv', '')).toBe('csv');
    expect(detectFormat('a.jsonl', '')).toBe('jsonl');
    expect(detectFormat('a.txt', 'https://x/1\t{"@type":"Movie"}\n')).toBe('tsv');
    expect(detectFormat('data', '{"a":1}\n{"a":2}\n')).toBe('jsonl');
    // an extension that is a property of every object is no extension it knows
    expect(detectFormat('data.constructor', '{"a":1}\n{"a":2}\n')).toBe('jsonl');
    expect(detectFormat('data', '{\n "a": 1\n}')).toBe('json');
    expect(detectFormat('data', '[{"a":1}]')).toBe('json');
    expect(detectFormat('feed.xml', '<?xml version="1.0"?><rss version="2.0">')).toBe('feed');
    expect(detectFormat('page.xml', '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom">')).toBe(
      'feed',
    );
    expect(detectFormat('x', '<!doctype html><html>')).toBe('html');
    expect(detectFormat('x', 'name,url\nA,https://a')).toBe('csv');
  });
});

describe('loaders', () => {
  it('reads JSON-LD: one item, an array, an @graph', async () => {
    const one = write(
      'one.json',
      JSON.stringify({ '@type': 'Movie', name: 'Alien', url: 'https://m/alien' }),
    );
    const arr = write(
      'arr.jsonld',
      JSON.stringify([
        { '@type': 'Movie', name: 'A', url: 'https://m/a' },
        { '@type': 'Movie', name: 'B' },
        { '@type': ['Recipe', 'Thing'], name: 'C', '@id': 'https://m/c' },
      ]),
    );
    const graph = write(
      'graph.json',
      JSON.stringify({
        '@context': 'https://schema.org',
        '@graph': [
          { '@type': 'WebSite', url: 'https://m/' },
          { '@type': 'Book', name: 'D', url: 'https://m/d' },
        ],
      }),
    );
    const r1 = await collect(loadPath(one, opts));
    expect(r1.items).toEqual([
      {
        url: 'https://m/alien',
        name: 'Alien',
        site: 'test',
        '@type': 'Movie',
        schema_object: { '@type': 'Movie', name: 'Alien', url: 'https://m/alien' },
      },
    ]);
    const r2 = await collect(loadPath(arr, opts));
    expect(r2.items.map((i) => [i.url, i['@type']])).toEqual([
      ['https://m/a', 'Movie'],
      ['https://m/c', 'Recipe'],
    ]);
    expect(r2.errors).toEqual([{ file: arr, record: 2, reason: 'no url or @id' }]);
    const r3 = await collect(loadPath(graph, opts));
    expect(r3.items.map((i) => i.name)).toEqual(['D']);
    expect(r3.items[0]!.schema_object['@context']).toBe('https://schema.org');
    expect(r3.errors).toEqual([]);
  });

  it("reads NLWeb's url<TAB>json and url<TAB>json<TAB>vector, reporting bad lines and going on", async () => {
    const p = write(
      'nlweb.tsv',
      [
        `https://m/1\t${JSON.stringify({ '@type': 'Movie', name: 'One' })}`,
        `https://m/2\t{"@type": "Movie", "name": broken`,
        `https://m/3\t${JSON.stringify([
          { '@type': 'Recipe', name: 'Three' },
          { '@type': 'Recipe', name: 'Three b' },
        ])}\t[0.1,0.2]`,
        'no tab here',
        '',
        `https://m/4\t${JSON.stringify({ name: 'untyped' })}`,
      ].join('\n'),
    );
    const r = await collect(loadPath(p, opts));
    expect(r.items.map((i) => [i.url, i.name])).toEqual([
      ['https://m/1', 'One'],
      ['https://m/3', 'Three'],
      ['https://m/3#2', 'Three b'],
    ]);
    expect(r.vectors).toEqual([undefined, [0.1, 0.2], [0.1, 0.2]]);
    expect(r.errors.map((e) => [e.file, e.line])).toEqual([
      [p, 2],
      [p, 4],
      [p, 6],
    ]);
    expect(r.errors[0]!.reason).toMatch(/bad JSON/);
    // with a default type the untyped one loads
    const r2 = await collect(loadPath(p, { site: 'test', defaultType: 'Thing' }));
    expect(r2.items.map((i) => i['@type'])).toEqual(['Movie', 'Recipe', 'Recipe', 'Thing']);
  });

  it('reads JSON lines', async () => {
    const p = write(
      'x.jsonl',
      `{"@type":"Movie","name":"A","url":"https://m/a"}\n{oops\n{"@type":"Movie","name":"B","url":"https://m/b"}\n`,
    );
    const r = await collect(loadPath(p, opts));
    expect(r.items.map((i) => i.name)).toEqual(['A', 'B']);
    expect(r.errors).toMatchObject([{ file: p, line: 2 }]);
  });

  it('reads CSV: columns are properties, @type column or default type, nested columns, numbers', async () => {
    const p = write(
      'r.csv',
      'name,url,@type,author.name,ratingValue,description\n' +
        'Pancakes,https://r/p,Recipe,Ann,4.5,"Fluffy, light"\n' +
        'No url,,Recipe,Bob,3,x\n' +
        'Soup,https://r/s,,Cy,,Hot\n',
    );
    const r = await collect(loadPath(p, { site: 'test', defaultType: 'Recipe' }));
    expect(r.items).toHaveLength(2);
    expect(r.items[0]!.schema_object).toMatchObject({
      '@type': 'Recipe',
      name: 'Pancakes',
      author: { name: 'Ann' },
      ratingValue: 4.5,
      description: 'Fluffy, light',
    });
    expect(r.items[1]!['@type']).toBe('Recipe');
    expect(r.errors).toEqual([{ file: p, line: 3, reason: 'no url or @id' }]);
  });

  it('reads JSON-LD embedded in HTML pages, with the canonical URL for items without one', async () => {
    const p = write(
      'page.html',
      `<!doctype html><html><head>
<link rel="canonical" href="https://blog.example/post-1">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"BlogPosting","headline":"Hello"}</script>
<script type="application/ld+json">{"@type": "Recipe", broken}</script>
<script>var x = 1;</script>
</head><body><script type="application/ld+json">[{"@type":"Recipe","name":"Cake","url":"https://blog.example/cake"}]</script></body></html>`,
    );
    const r = await collect(loadPath(p, opts));
    expect(r.items.map((i) => [i.url, i.name, i['@type']])).toEqual([
      ['https://blog.example/post-1', 'Hello', 'BlogPosting'],
      ['https://blog.example/cake', 'Cake', 'Recipe'],
    ]);
    expect(r.errors).toMatchObject([{ file: p, line: 4 }]);
  });

  it('reads RSS (articles, podcast episodes) and Atom feeds', async () => {
    const rss = write(
      'feed.rss',
      `<?xml version="1.0"?><rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>Pod</title>
<item><title>Ep 1</title><link>https://p/1</link><description>&lt;p&gt;About &lt;b&gt;bees&lt;/b&gt;&lt;/p&gt;</description><enclosure url="https://p/1.mp3" type="audio/mpeg" length="1"/><dc:creator>Ann</dc:creator></item>
<item><title>News</title><link>https://p/2</link><category>science</category><pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubDate></item>
<item><description>no link</description></item>
</channel></rss>`,
    );
    const r = await collect(loadPath(rss, opts));
    expect(r.items.map((i) => [i.url, i.name, i['@type']])).toEqual([
      ['https://p/1', 'Ep 1', 'PodcastEpisode'],
      ['https://p/2', 'News', 'Article'],
    ]);
    expect(r.items[0]!.schema_object).toMatchObject({ description: 'About bees', author: [{ name: 'Ann' }] });
    expect(r.items[1]!.schema_object).toMatchObject({
      keywords: ['science'],
      datePublished: 'Mon, 01 Jan 2024 00:00:00 GMT',
    });
    expect(r.errors).toEqual([{ file: rss, record: 3, reason: 'no url or @id' }]);

    const atom = write(
      'blog.xml',
      `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Blog</title>
<entry><title>Post</title><link rel="alternate" href="https://b/post"/><id>tag:b,1</id><summary>Sum</summary><author><name>Cy</name></author><updated>2024-01-01</updated></entry>
</feed>`,
    );
    const a = await collect(loadPath(atom, opts));
    expect(a.items).toMatchObject([
      {
        url: 'https://b/post',
        name: 'Post',
        '@type': 'BlogPosting',
        schema_object: { description: 'Sum', author: [{ name: 'Cy' }] },
      },
    ]);
  });

  it('loads a directory recursively', async () => {
    const sub = join(dir, 'tree', 'sub');
    await mkdir(sub, { recursive: true });
    writeFileSync(join(dir, 'tree', 'a.jsonl'), '{"@type":"Movie","name":"A","url":"https://m/a"}\n');
    writeFileSync(join(sub, 'b.json'), '{"@type":"Movie","name":"B","url":"https://m/b"}');
    writeFileSync(join(sub, 'ignored.png'), 'x');
    const r = await collect(loadPath(join(dir, 'tree'), opts));
    expect(r.items.map((i) => i.name)).toEqual(['A', 'B']);
  });
});

describe('large files', () => {
  const LINES = 300_000;
  it(`streams a ${LINES}-line url<TAB>json file with bounded heap`, async () => {
    const p = join(dir, 'big.tsv');
    const out = createWriteStream(p);
    const pad = 'lorem ipsum dolor sit amet '.repeat(8);
    for (let i = 0; i < LINES; i++) {
      const line = `https://big.example/item/${i}\t${JSON.stringify({ '@type': 'Movie', name: `Film ${i}`, description: `${pad}${i}` })}\n`;
      if (!out.write(line)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');

    global.gc?.();
    const base = process.memoryUsage().heapUsed;
    let peak = base;
    let n = 0;
    let errors = 0;
    const t0 = performance.now();
    for await (const e of loadPath(p, opts)) {
      if (e.kind === 'item') n++;
      else errors++;
      if ((n & 8191) === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
    }
    const secs = (performance.now() - t0) / 1000;
    const growthMb = (peak - base) / 2 ** 20;
    console.log(
      `ingest: ${LINES} lines (${(statSync(p).size / 2 ** 20).toFixed(0)} MB) in ${secs.toFixed(1)} s = ${Math.round(LINES / secs)} items/s; heap growth ${growthMb.toFixed(1)} MB`,
    );
    expect(n).toBe(LINES);
    expect(errors).toBe(0);
    // the file is ~85 MB of text; reading it whole would take far more than this
    expect(growthMb).toBeLessThan(64);
  }, 60_000);

  it('streams a large JSON array element by element (stream-json)', async () => {
    const N = 50_000;
    const p = join(dir, 'big.json');
    const out = createWriteStream(p);
    out.write('[');
    for (let i = 0; i < N; i++) {
      const item = {
        '@type': 'Recipe',
        name: `Dish ${i}`,
        url: `https://r.example/${i}`,
        description: 'x'.repeat(400),
      };
      if (!out.write(`${i ? ',' : ''}${JSON.stringify(item)}\n`)) await once(out, 'drain');
    }
    out.end(']');
    await once(out, 'finish');
    const base = process.memoryUsage().heapUsed;
    let peak = base;
    let n = 0;
    const t0 = performance.now();
    for await (const e of loadPath(p, opts)) {
      if (e.kind === 'item') n++;
      if ((n & 4095) === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
    }
    const secs = (performance.now() - t0) / 1000;
    console.log(
      `ingest: JSON array of ${N} (${(statSync(p).size / 2 ** 20).toFixed(0)} MB) in ${secs.toFixed(1)} s; heap growth ${((peak - base) / 2 ** 20).toFixed(1)} MB`,
    );
    expect(n).toBe(N);
    expect((peak - base) / 2 ** 20).toBeLessThan(48);
  }, 60_000);
});
