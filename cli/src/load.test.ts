import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts } from '@askbus/contracts';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { startRetriever, type Retriever } from '@askbus/retriever';
import { formatSummary, runLoad } from './load';

const here = dirname(fileURLToPath(import.meta.url));
const tsx = join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/cli.mjs');
const cli = join(here, 'askbus.ts');

function run(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tsx, cli, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill(), 20_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

describe('askbus load against a real NATS and retriever', () => {
  let nats: Awaited<ReturnType<typeof testNats>>;
  let server: Bus;
  let client: Bus;
  let retriever: Retriever;
  let dir: string;
  let http: Server;
  let httpUrl: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'askbus-load-'));
    nats = await testNats();
    server = await testBus(nats.url, 'retriever');
    client = await testBus(nats.url, 'askbus-load');
    retriever = await startRetriever(server, { dataDir: join(dir, 'index') });
    await server.nc.flush();
    http = createServer((req, res) => {
      if (req.url === '/feed.rss') {
        res.setHeader('content-type', 'application/rss+xml');
        res.end(
          `<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>` +
            `<item><title>Bees in winter</title><link>https://blog.example/bees</link></item>` +
            `<item><title>Honey</title><link>https://blog.example/honey</link></item></channel></rss>`,
        );
      } else {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    httpUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((r) => http?.close(r));
    await client?.drain();
    await server?.drain();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const bigFile = (n: number): string => {
    const p = join(dir, `films-${n}.tsv`);
    const lines: string[] = [];
    const long = 'A long description of a film about frontier towns. '.repeat(20); // ~1 KB per item
    for (let i = 0; i < n; i++) {
      lines.push(
        `https://films.example/${i}\t${JSON.stringify({ '@type': 'Movie', name: `Film ${i}`, description: long })}`,
      );
      if (i === 10) lines.push('https://films.example/bad\t{"@type": "Movie", nope}');
    }
    writeFileSync(p, lines.join('\n'));
    return p;
  };

  it('loads a file in batches under the NATS limit, reports skipped lines, and re-loads idempotently', async () => {
    const p = bigFile(3000);
    const s = await runLoad(client, { source: p, site: 'films' });
    expect(s.loaded).toBe(3000);
    expect(s.skipped).toBe(1);
    expect(s.errors).toEqual([{ file: p, line: 12, reason: expect.stringMatching(/bad JSON/) }]);
    expect(s.reasons).toEqual([{ reason: 'bad JSON', count: 1 }]);
    expect(s.batches).toBeGreaterThan(4); // 3 MB in batches of < 700 KB, plus the final persist
    expect(retriever.store.size).toBe(3000);
    expect(formatSummary('films', s)).toMatch(
      /loaded 3000 items, skipped 1[\s\S]*films-3000.tsv:12: bad JSON/,
    );

    const again = await runLoad(client, { source: p, site: 'films' });
    expect(again.total).toBe(3000);
    expect(retriever.store.size).toBe(3000);
  });

  it('loads an http URL, and --delete-site replaces a site', async () => {
    const s = await runLoad(client, { source: `${httpUrl}/feed.rss`, site: 'blog' });
    expect(s.loaded).toBe(2);
    const { items } = await client.request(contracts.search, { query: 'bees', site: ['blog'] });
    expect(items[0]!.url).toBe('https://blog.example/bees');
    expect(items[0]!['@type']).toBe('Article');

    await expect(runLoad(client, { source: `${httpUrl}/missing.json`, site: 'blog' })).rejects.toThrow(
      /HTTP 404/,
    );
    await expect(runLoad(client, { source: 'ftp://127.0.0.1/x', site: 'blog' })).rejects.toThrow(/only http/);

    const del = await runLoad(client, { site: 'films', deleteSite: true });
    expect(del.deleted).toBe(3000);
    const { sites } = await client.request(contracts.sites, {});
    expect(sites.map((x) => x.name)).toEqual(['blog']);
  });

  it('runs as `askbus load` with NATS_URL', async () => {
    const p = join(dir, 'one.jsonl');
    writeFileSync(p, '{"@type":"Recipe","name":"Pancakes","url":"https://r.example/p"}\n');
    // async: the retriever answering it runs in this very process
    const r = await run(['load', p, '--site', 'recipes', '--quiet'], { ...process.env, NATS_URL: nats.url });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/recipes: loaded 1 items, skipped 0/);
    expect(retriever.store.get('https://r.example/p')?.name).toBe('Pancakes');

    const help = spawnSync(process.execPath, [tsx, cli, 'load', '--help'], { encoding: 'utf8' });
    expect(help.stdout).toMatch(/Usage: askbus load/);
    const bad = spawnSync(process.execPath, [tsx, cli, 'load', p], { encoding: 'utf8' });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/--site NAME/);
  });
});
