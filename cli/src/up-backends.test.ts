/**
 * `askbus up` runs the services' own declarations, so it honours what their processes read:
 * with ASKBUS_RETRIEVER_BACKEND=pg the items go to PostgreSQL (PGlite + pgvector here), not to
 * index files, and the LLM metrics of every service are served.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectBus } from '@askbus/bus';
import { contracts } from '@askbus/contracts';
import { startPgliteServer, type PgliteServer } from '@askbus/retriever/testing';
import { readAskStream, startDemoSystem, type DemoSystem } from './testing';

let database: PgliteServer;
let system: DemoSystem;

beforeAll(async () => {
  database = await startPgliteServer();
  process.env.ASKBUS_RETRIEVER_BACKEND = 'pg';
  process.env.DATABASE_URL = database.url;
  // No demo sites: PGlite's HNSW inserts are slow, and one small site shows where items go.
  system = await startDemoSystem({ demo: false, rankers: 1 });
}, 120_000);

afterAll(async () => {
  await system?.stop();
  await database?.stop();
});

it('stores a loaded site in PostgreSQL and answers from it', async () => {
  const loader = await connectBus({ servers: system.natsUrl, service: 'loader' });
  try {
    const books = ['Sparrows of the North', 'Lanterns at Low Tide', 'The Quiet Orchard'].map((name, i) => {
      const url = `https://shelf.example/${i}`;
      const description = `A novel about ${name.toLowerCase()}.`;
      return {
        url,
        name,
        site: 'shelf',
        '@type': 'Book',
        schema_object: { '@type': 'Book', name, url, description },
      };
    });
    const reply = await loader.request(
      contracts.upsert,
      { site: 'shelf', items: books },
      { timeoutMs: 60_000 },
    );
    expect(reply.upserted).toBe(3);
  } finally {
    await loader.drain();
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      "SELECT count(*) AS n FROM askbus_items WHERE site = 'shelf'",
    );
    expect(Number(rows[0]!.n)).toBe(3);
  } finally {
    await client.end();
  }
  expect(existsSync(join(system.dataDir, 'index', 'items.json'))).toBe(false);

  const answer = await readAskStream(`${system.running.url}/ask?query=lanterns+tide&site=shelf`);
  expect(JSON.stringify(answer)).toMatch(/Lanterns at Low Tide/);
}, 120_000);

it('serves the LLM metrics of the services it runs', async () => {
  const metrics = await (await fetch(`${system.running.url}/metrics`)).text();
  expect(metrics).toMatch(/service="router"/);
  expect(metrics).toMatch(/service="ranker"/);
});
