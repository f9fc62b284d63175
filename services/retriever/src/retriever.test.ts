import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts } from '@askbus/contracts';
import { BusError, type Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { loadDemoSites } from '@askbus/demo-data';
import { startRetriever, type Retriever } from './index';

describe('retriever over NATS', () => {
  let nats: Awaited<ReturnType<typeof testNats>>;
  let server: Bus;
  let client: Bus;
  let retriever: Retriever;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'askbus-retriever-it-'));
    nats = await testNats();
    server = await testBus(nats.url, 'retriever');
    client = await testBus(nats.url, 'test-client');
    retriever = await startRetriever(server, { dataDir: dir });
    await server.nc.flush();
  });

  afterAll(async () => {
    await client?.drain();
    await server?.drain();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('loads a site in batches (NATS payloads are limited to 1 MB) through upsert, idempotently', async () => {
    const movies = loadDemoSites().find((s) => s.site === 'movies')!.items;
    const load = async () => {
      let reply = { upserted: 0, total: 0 };
      for (let i = 0; i < movies.length; i += 400) {
        const batch = movies.slice(i, i + 400);
        reply = await client.request(
          contracts.upsert,
          { site: 'movies', items: batch, persist: i + 400 >= movies.length },
          { timeoutMs: 30_000 },
        );
        expect(reply.upserted).toBe(batch.length);
      }
      return reply.total;
    };
    expect(await load()).toBe(3200);
    expect(await load()).toBe(3200);
    expect(retriever.store.size).toBe(3200);
  });

  it('answers sites', async () => {
    const { sites } = await client.request(contracts.sites, {});
    expect(sites).toEqual([{ name: 'movies', itemCount: 3200, types: ['Movie'] }]);
  });

  it('answers search with RetrievedItems', async () => {
    const { items } = await client.request(contracts.search, {
      query: 'westerns with clint eastwood',
      site: ['movies'],
      numResults: 10,
    });
    expect(items).toHaveLength(10);
    expect(items.map((i) => i.name)).toEqual(expect.arrayContaining(['Pale Rider', 'High Plains Drifter']));
    expect(typeof items[0]!.retrievalScore).toBe('number');
    expect(items[0]!.schema_object['@type']).toBe('Movie');
  });

  it('rejects a bad request with a bad_request BusError', async () => {
    // invalid at the contract: the retriever's bus refuses it before the handler runs
    const raw = await client.nc.request(contracts.search.subject, new TextEncoder().encode('{"query":""}'), {
      timeout: 5_000,
    });
    expect(raw.headers?.get('Askbus-Error')).toBe('bad_request');

    // valid by the contract, refused by the store: an item of another site
    const stray = { url: 'https://x.example/1', name: 'X', site: 'cars', '@type': 'Car', schema_object: {} };
    const err = await client
      .request(contracts.upsert, { site: 'movies', items: [stray] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BusError);
    expect((err as BusError).code).toBe('bad_request');
    expect((err as BusError).message).toMatch(/belongs to site "cars"/);
  });

  it('reopens what it persisted', async () => {
    const other = await testBus(nats.url, 'retriever');
    try {
      const again = await startRetriever(other, { dataDir: dir });
      expect(again.store.openedFrom).toBe('disk');
      expect(again.store.size).toBe(3200);
    } finally {
      await other.drain();
    }
  });
});
