/**
 * bench:retrieve — the retriever's stores at growing sizes, side by side: synthetic items from
 * the demo data (bench/retrieve-data.ts) loaded into the embedded IndexStore (files in a temp
 * directory) and into PgStore (PGlite + pgvector over pglite-socket, served from a child process
 * of its own as a database server is, its data on disk: until 2026-12-03 it ran in the bench's
 * process, until 2026-12-05 in memory), then
 * 20 questions — plain ones and ones with years, ranges and superlatives, each with the
 * understanding the router would send — straight through each store's searchWithOutcome.
 * Each (size, backend) runs in a child process of its own, so its RSS is its own. A pg run also
 * asks the questions of a second store on the same database that searches without the numbers
 * table (`searchByNumbers: false`), rounds interleaved, for the two side by side.
 *
 *   npm run bench:retrieve                      (sizes 3000,30000; backends embedded,pg)
 *   npm run bench:retrieve -- --sizes 3000,30000,300000 --backends embedded
 *   ASKBUS_BENCH_SIZES=300000 ASKBUS_BENCH_BACKENDS=pg ASKBUS_BENCH_ROUNDS=3 npm run bench:retrieve
 *   npm run bench:retrieve -- --sizes 300000 --backends embedded --merge   (adds to the last results)
 *
 * Writes bench/results/retrieve.json and bench/results/retrieve.md.
 */
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import pg from 'pg';
import { WordNet } from '@askbus/embeddings';
import { IndexStore, PgStore, type RetrieverStore } from '@askbus/retriever';
import { testSite } from '@askbus/understand/testing';
import { percentile } from './stats';
import { MAX_BATCH_BYTES } from '@askbus/cli';
import { syntheticBatches } from './retrieve-data';

const QUERIES: { site: 'movies' | 'cars'; query: string }[] = [
  // plain: words and meaning
  { site: 'movies', query: 'westerns with clint eastwood' },
  { site: 'movies', query: 'extraterrestrial invasion' },
  { site: 'movies', query: 'romantic comedy in new york' },
  { site: 'movies', query: 'movies about the mafia' },
  { site: 'movies', query: 'horror films with zombies' },
  { site: 'movies', query: 'documentary about music' },
  { site: 'cars', query: 'ford pickup' },
  { site: 'cars', query: 'toyota corolla' },
  // structured: years, ranges, superlatives, derived quantities
  { site: 'cars', query: 'heavy 8-cylinder cars from the early 70s' },
  { site: 'cars', query: 'cars with over 200 hp' },
  { site: 'cars', query: 'the most powerful cars' },
  { site: 'cars', query: 'fuel efficient japanese cars' },
  { site: 'cars', query: 'european cars from the late seventies' },
  { site: 'cars', query: 'six-cylinder cars made in 1976' },
  { site: 'cars', query: 'most economical cars from 1982' },
  { site: 'movies', query: 'movies that lost money' },
  { site: 'movies', query: 'the highest rated movies' },
  { site: 'movies', query: 'comedies from the 90s' },
  { site: 'movies', query: 'movies with a budget over 100 million' },
  { site: 'movies', query: 'highest grossing movies of 2000' },
];

const Backend = z.enum(['embedded', 'pg']);
type Backend = z.infer<typeof Backend>;
const list = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
const Args = z.object({
  sizes: z.array(z.coerce.number().int().positive().max(1_000_000)).min(1),
  backends: z.array(Backend).min(1),
  rounds: z.coerce.number().int().positive().max(100),
});

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const ChildResult = z.object({
  backend: Backend,
  size: z.number(),
  rounds: z.number().optional(),
  loadSeconds: z.number(),
  loadItemsPerSecond: z.number(),
  /** Until every item is written, before `persist` (pg: before the GIN and HNSW indexes are built). */
  insertSeconds: z.number().optional(),
  diskBytes: z.number(),
  rssBytes: z.number(),
  /**
   * Embedded only: this process's RSS after the load and the rounds (the memory of the process
   * that loaded, serving), and of it anonymous and file-backed pages.
   */
  afterLoadRssBytes: z.number().optional(),
  afterLoadRssAnonBytes: z.number().optional(),
  afterLoadRssFileBytes: z.number().optional(),
  p50Ms: z.number(),
  p99Ms: z.number(),
  /** The slowest sample (often a GC pause): with 20 × rounds samples, p99 is the 1 %-slowest, not this. */
  maxMs: z.number().optional(),
  meanMs: z.number(),
  /** The warm-up round: each question asked for the first time after the load (what lazily built parts cost). */
  firstAskP50Ms: z.number().optional(),
  /** Embedded only: opening the saved index again in a fresh process (a restart), and that process's RSS. */
  reopenSeconds: z.number().optional(),
  reopenRssBytes: z.number().optional(),
  /** Of reopenRssBytes: anonymous memory (heap, buffers) and file-backed pages (mapped files, reclaimable). */
  reopenRssAnonBytes: z.number().optional(),
  reopenRssFileBytes: z.number().optional(),
  /** Each question asked once after the restart (the first questions a restarted retriever answers). */
  reopenP50Ms: z.number().optional(),
  perQuery: z.array(
    z.object({ query: z.string(), p50Ms: z.number(), results: z.number(), top: z.array(z.string()) }),
  ),
  /**
   * pg only: the same database searched as before the numbers table (PgStore `searchByNumbers`
   * false: ranges and sorts over every row's facts), its rounds interleaved with the store's.
   */
  byFacts: z.object({ p50Ms: z.number(), p99Ms: z.number(), perQueryP50Ms: z.array(z.number()) }).optional(),
});
type ChildResult = z.infer<typeof ChildResult>;

function dirBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    n += e.isDirectory() ? dirBytes(p) : statSync(p).size;
  }
  return n;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

interface Opened {
  store: RetrieverStore;
  /** The embedded store's data directory (kept after close for the reopen child, which removes it). */
  dataDir?: string;
  diskBytes(): Promise<number>;
  /** pg: the peak RSS of the database process (PGlite), added to this process's. */
  serverRssBytes?(): Promise<number>;
  /** pg: a second store on the same database that searches without the numbers table. */
  openByFacts?(): Promise<RetrieverStore & { close(): Promise<void> }>;
  close(): Promise<void>;
}

async function openBackend(backend: Backend): Promise<Opened> {
  if (backend === 'embedded') {
    const dir = mkdtempSync(join(tmpdir(), 'askbus-bench-retrieve-'));
    const store = await IndexStore.open({ dataDir: dir });
    return {
      store,
      dataDir: dir,
      diskBytes: async () => dirBytes(dir),
      close: async () => {
        await store.close();
      },
    };
  }
  // PostgreSQL is a server of its own, as in production: PGlite served over pglite-socket from a
  // child process (--pg-server), so the database works while this process analyses the next batch
  const server = await startPgServer();
  const url = `postgres://postgres@127.0.0.1:${server.port}/postgres`;
  const store = await PgStore.open({ connectionString: url, maxConnections: 4 });
  return {
    store,
    diskBytes: async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        const r = await c.query<{ n: string }>(`SELECT pg_total_relation_size('askbus_items') AS n`);
        return Number(r.rows[0]?.n ?? 0);
      } finally {
        await c.end();
      }
    },
    serverRssBytes: () => server.peakRss(),
    openByFacts: () => PgStore.open({ connectionString: url, maxConnections: 2, searchByNumbers: false }),
    close: async () => {
      await store.close();
      await server.stop();
    },
  };
}

/** The database process of a pg run: PGlite + pgvector over pglite-socket on a free port. */
async function startPgServer(): Promise<{ port: number; peakRss(): Promise<number>; stop(): Promise<void> }> {
  const script = fileURLToPath(import.meta.url);
  const child = spawn(
    process.execPath,
    [...process.execArgv, '--max-old-space-size=6144', script, '--pg-server'],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const lines: string[] = [];
  const waiters: ((line: string) => void)[] = [];
  let buffered = '';
  child.stdout.on('data', (d: Buffer) => {
    buffered += d.toString();
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      const w = waiters.shift();
      if (w) w(line);
      else lines.push(line);
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const next = (prefix: string): Promise<string> =>
    Promise.race([
      new Promise<string>((resolve) => {
        const l = lines.shift();
        if (l !== undefined) resolve(l);
        else waiters.push(resolve);
      }),
      exited.then((code) => {
        throw new Error(`the PGlite server exited (${code})`);
      }),
    ]).then((line) => {
      if (!line.startsWith(prefix)) throw new Error(`PGlite server: expected ${prefix}, got ${line}`);
      return line.slice(prefix.length).trim();
    });
  const port = z.coerce
    .number()
    .int()
    .positive()
    .parse(await next('PORT '));
  return {
    port,
    peakRss: async () => {
      child.stdin.write('rss\n');
      return z.coerce
        .number()
        .nonnegative()
        .parse(await next('RSS '));
    },
    stop: async () => {
      child.stdin.end();
      await exited;
    },
  };
}

/** --pg-server: serves PGlite until stdin ends; `rss` on stdin answers with this process's peak RSS. */
async function servePg(): Promise<void> {
  // its data on disk, as a database server keeps it: in PGlite's memory file system every file
  // that grows is copied to a larger buffer (13% of the server's time in a 30k load), and the
  // whole database stays in the process's memory
  const dataDir = mkdtempSync(join(tmpdir(), 'askbus-bench-pg-'));
  const db = await PGlite.create({ dataDir, extensions: { vector } });
  const port = await freePort();
  const server = new PGLiteSocketServer({ db, port, host: '127.0.0.1', maxConnections: 6 }); // the store's 4 and the facts store's 2
  await server.start();
  process.stdout.write(`PORT ${port}\n`);
  let input = '';
  process.stdin.on('data', (d: Buffer) => {
    input += d.toString();
    let nl: number;
    while ((nl = input.indexOf('\n')) >= 0) {
      const cmd = input.slice(0, nl).trim();
      input = input.slice(nl + 1);
      if (cmd === 'rss') process.stdout.write(`RSS ${process.resourceUsage().maxRSS * 1024}\n`);
    }
  });
  await new Promise<void>((resolve) => process.stdin.on('end', resolve));
  await server.stop();
  await db.close();
  rmSync(dataDir, { recursive: true, force: true });
}

/** One backend at one size, in this process: load, then the questions `rounds` times after a warm-up. */
async function runOne(backend: Backend, size: number, rounds: number): Promise<ChildResult> {
  WordNet.get(); // the local model's word net loads once per process: not part of the load
  const understandings = QUERIES.map((q) => testSite(q.site).ask(q.query));
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);
  const opened = await openBackend(backend);
  try {
    // a batch at a time, as `askbus load` sends them (the last one's persist is the load's end);
    // the time is the store's: making the next synthetic batch is not counted
    let storeMs = 0;
    for (const { site, items } of syntheticBatches(size, MAX_BATCH_BYTES)) {
      const t = performance.now();
      await opened.store.upsert(site, items);
      storeMs += performance.now() - t;
    }
    const insertSeconds = storeMs / 1000;
    const t1 = performance.now();
    await opened.store.persist();
    const loadSeconds = insertSeconds + (performance.now() - t1) / 1000;
    const ask = async (i: number, store: RetrieverStore = opened.store) => {
      const q = QUERIES[i]!;
      const t = performance.now();
      const r = await store.searchWithOutcome({
        query: q.query,
        site: [q.site],
        numResults: 50,
        understanding: understandings[i]!,
      });
      return { ms: performance.now() - t, items: r.items };
    };
    const first: Awaited<ReturnType<typeof ask>>[] = [];
    for (let i = 0; i < QUERIES.length; i++) first.push(await ask(i)); // warm-up, and the results
    // the memory of the store alone: taken before the comparison store opens (pg)
    const comparing = opened.openByFacts !== undefined;
    if (comparing) {
      clearInterval(sampler);
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }
    const serverRssBefore = comparing ? ((await opened.serverRssBytes?.()) ?? 0) : undefined;
    const byFacts = await opened.openByFacts?.();
    if (byFacts) for (let i = 0; i < QUERIES.length; i++) await ask(i, byFacts);
    const samples: number[][] = QUERIES.map(() => []);
    const factSamples: number[][] = QUERIES.map(() => []);
    for (let r = 0; r < rounds; r++)
      for (let i = 0; i < QUERIES.length; i++) {
        // with a second store, each first in turn
        if (byFacts && r % 2 === 1) factSamples[i]!.push((await ask(i, byFacts)).ms);
        samples[i]!.push((await ask(i)).ms);
        if (byFacts && r % 2 === 0) factSamples[i]!.push((await ask(i, byFacts)).ms);
      }
    await byFacts?.close();
    const all = samples.flat();
    const diskBytes = await opened.diskBytes();
    let afterLoad: { rss: number; anon?: number; file?: number } | undefined;
    if (opened.dataDir) {
      // measured as after a reopen (below): once the collector has given back what is dead
      await collectGarbage();
      afterLoad = { rss: process.memoryUsage().rss, ...rssParts() };
    }
    if (!comparing) peakRss = Math.max(peakRss, process.memoryUsage().rss);
    const serverRss = serverRssBefore ?? (await opened.serverRssBytes?.()) ?? 0;
    if (opened.dataDir) process.stdout.write(`DATADIR ${opened.dataDir}\n`);
    return {
      backend,
      size,
      rounds,
      loadSeconds,
      loadItemsPerSecond: size / loadSeconds,
      insertSeconds,
      diskBytes,
      rssBytes: peakRss + serverRss,
      ...(afterLoad ? { afterLoadRssBytes: afterLoad.rss } : {}),
      ...(afterLoad?.anon !== undefined ? { afterLoadRssAnonBytes: afterLoad.anon } : {}),
      ...(afterLoad?.file !== undefined ? { afterLoadRssFileBytes: afterLoad.file } : {}),
      p50Ms: percentile(all, 50),
      p99Ms: percentile(all, 99),
      maxMs: Math.max(...all),
      meanMs: all.reduce((a, b) => a + b, 0) / all.length,
      firstAskP50Ms: percentile(
        first.map((f) => f.ms),
        50,
      ),
      perQuery: QUERIES.map((q, i) => ({
        query: q.query,
        p50Ms: percentile(samples[i]!, 50),
        results: first[i]!.items.length,
        top: first[i]!.items.slice(0, 10).map((x) => x.url),
      })),
      ...(byFacts
        ? {
            byFacts: {
              p50Ms: percentile(factSamples.flat(), 50),
              p99Ms: percentile(factSamples.flat(), 99),
              perQueryP50Ms: factSamples.map((xs) => percentile(xs, 50)),
            },
          }
        : {}),
    };
  } finally {
    clearInterval(sampler);
    await opened.close();
  }
}

const ReopenResult = z.object({
  reopenSeconds: z.number(),
  reopenRssBytes: z.number(),
  reopenRssAnonBytes: z.number().optional(),
  reopenRssFileBytes: z.number().optional(),
  reopenP50Ms: z.number(),
});

/**
 * Collects garbage (with --expose-gc), three times with a pause: what the collector finds dead
 * (the index files' read buffers, among them the keyword file's 264 MiB at 300k) is given back to
 * the system by a task of its own after gc() returns. Read at once, RSS still counted it (about
 * 360 MiB at 300k before 2026-12-07 07:00 UTC), where a serving process is rid of it within
 * milliseconds.
 */
async function collectGarbage(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    global.gc?.();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** This process's resident memory split into anonymous and file-backed pages (Linux; undefined elsewhere). */
function rssParts(): { anon?: number; file?: number } {
  try {
    const status = readFileSync('/proc/self/status', 'utf8');
    const kb = (name: string) => {
      const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
      return m ? Number(m[1]) * 1024 : undefined;
    };
    const anon = kb('RssAnon');
    const file = kb('RssFile');
    return { ...(anon !== undefined ? { anon } : {}), ...(file !== undefined ? { file } : {}) };
  } catch {
    return {};
  }
}

/**
 * A restart: the saved index opened again in a fresh process (what a retriever does when it
 * starts), timed, then the questions once each; its RSS is the memory a site of this size needs
 * when serving. Removes the directory.
 */
async function runReopen(dir: string, size: number): Promise<z.infer<typeof ReopenResult>> {
  WordNet.get();
  const understandings = QUERIES.map((q) => testSite(q.site).ask(q.query));
  try {
    const t0 = performance.now();
    const store = await IndexStore.open({ dataDir: dir });
    const reopenSeconds = (performance.now() - t0) / 1000;
    if (store.size !== size) throw new Error(`reopened ${store.size} items, expected ${size}`);
    const times: number[] = [];
    for (let i = 0; i < QUERIES.length; i++) {
      const q = QUERIES[i]!;
      const t = performance.now();
      await store.searchWithOutcome({
        query: q.query,
        site: [q.site],
        numResults: 50,
        understanding: understandings[i]!,
      });
      times.push(performance.now() - t);
    }
    await collectGarbage();
    const reopenRssBytes = process.memoryUsage().rss;
    const { anon, file } = rssParts();
    await store.close();
    return {
      reopenSeconds,
      reopenRssBytes,
      ...(anon !== undefined ? { reopenRssAnonBytes: anon } : {}),
      ...(file !== undefined ? { reopenRssFileBytes: file } : {}),
      reopenP50Ms: percentile(times, 50),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function spawnChild(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const script = fileURLToPath(import.meta.url);
    const child = spawn(
      process.execPath,
      [...process.execArgv, '--max-old-space-size=6144', '--expose-gc', script, ...args],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      const dir = out.split('\n').find((l) => l.startsWith('DATADIR '));
      if (code !== 0 || !line) {
        if (dir) rmSync(dir.slice(8), { recursive: true, force: true });
        return reject(new Error(`${args.join(' ')}: exit ${code}\n${out}`));
      }
      resolve(`${dir ?? ''}\n${line}`);
    });
  });
}

async function runChild(backend: Backend, size: number, rounds: number): Promise<ChildResult> {
  const out = (await spawnChild(['--child', backend, String(size), String(rounds)])).split('\n');
  const result = ChildResult.parse(JSON.parse(out[1]!.slice(7)));
  const dir = out[0]?.startsWith('DATADIR ') ? out[0].slice(8) : undefined;
  if (!dir) return result;
  const reopen = ReopenResult.parse(
    JSON.parse((await spawnChild(['--reopen', dir, String(size)])).split('\n')[1]!.slice(7)),
  );
  return { ...result, ...reopen };
}

const mb = (b: number) => (b / 2 ** 20).toFixed(1);
const ms = (x: number) => x.toFixed(1);

/** Overlap of the top 10 between two backends, averaged over the questions. */
function overlap(a: ChildResult, b: ChildResult): number {
  const per = a.perQuery.map((q, i) => {
    const other = new Set(b.perQuery[i]!.top);
    return q.top.length ? q.top.filter((u) => other.has(u)).length / q.top.length : 1;
  });
  return per.reduce((x, y) => x + y, 0) / per.length;
}

function report(results: ChildResult[], runRounds: number): string {
  const rounds = [...new Set(results.map((r) => r.rounds ?? runRounds))].join(' or ');
  const lines = [
    '# bench:retrieve',
    '',
    `${new Date().toISOString()} · ${cpus().length} cores (${cpus()[0]?.model ?? '?'}) · Node ${process.version} · ` +
      `${QUERIES.length} questions × ${rounds} rounds after a warm-up, each through the store's searchWithOutcome (50 results)`,
    '',
    '| items | backend | load s | load items/s | inserts items/s | on disk MB | peak RSS MB | RSS after load MB (anon / file) | p50 ms | p99 ms | max ms | mean ms | first ask p50 ms | reopen s | first ask after reopen p50 ms | RSS after reopen MB | of it anon / file MB |',
    '| ----: | ------- | -----: | -----------: | --------------: | ---------: | ----------: | ------------------------------: | -----: | -----: | -----: | ------: | ---------------: | -------: | ----------------------------: | ------------------: | -------------------: |',
    ...results.map(
      (r) =>
        `| ${r.size} | ${r.backend} | ${r.loadSeconds.toFixed(1)} | ${Math.round(r.loadItemsPerSecond)} | ${r.insertSeconds === undefined ? '–' : Math.round(r.size / r.insertSeconds)} | ${mb(r.diskBytes)} | ${mb(r.rssBytes)} | ${r.afterLoadRssBytes === undefined ? '–' : `${mb(r.afterLoadRssBytes)}${r.afterLoadRssAnonBytes === undefined || r.afterLoadRssFileBytes === undefined ? '' : ` (${mb(r.afterLoadRssAnonBytes)} / ${mb(r.afterLoadRssFileBytes)})`}`} | ${ms(r.p50Ms)} | ${ms(r.p99Ms)} | ${r.maxMs === undefined ? '–' : ms(r.maxMs)} | ${ms(r.meanMs)} | ${r.firstAskP50Ms === undefined ? '–' : ms(r.firstAskP50Ms)} | ${r.reopenSeconds === undefined ? '–' : r.reopenSeconds.toFixed(1)} | ${r.reopenP50Ms === undefined ? '–' : ms(r.reopenP50Ms)} | ${r.reopenRssBytes === undefined ? '–' : mb(r.reopenRssBytes)} | ${r.reopenRssAnonBytes === undefined || r.reopenRssFileBytes === undefined ? '–' : `${mb(r.reopenRssAnonBytes)} / ${mb(r.reopenRssFileBytes)}`} |`,
    ),
    '',
    'RSS after load: the process that loaded, after `persist`, the rounds of questions and a garbage collection as for reopen (the memory it serves in); anon and file as for reopen below. Runs before 2026-12-07 16:20 UTC did not measure it.',
    '',
    'first ask: the warm-up round, each question asked for the first time after the load (what is built on first use: sort orders of derived quantities, quantiles); p50, p99 and max are of the rounds after it.',
    '',
    'reopen: the saved index opened again in a fresh process (a restart), then each question once (first ask after reopen); RSS after reopen is that process after the questions (the memory a site of that size needs when serving). Of it, anon is the heap and buffers; file is pages of mapped files (the vector graph is mapped, not read), which the kernel can drop and read again.',
    '',
    'inserts items/s: the items written, before `persist`; load items/s counts `persist` too (embedded: the index files written; pg: the GIN and HNSW indexes built and VACUUM ANALYZE).',
    '',
    "load: as `askbus load` sends it, one site after the other in upserts of at most 700 KB of JSON (a few hundred items each), then `persist`; the synthetic items are made batch by batch as they are sent (not counted in the times), so peak RSS is the store's. Runs before 2026-12-06 20:00 UTC upserted each site in one call and held every item in the bench's process (in its peak RSS: 300k embedded 2,996 MB then).",
    '',
    "pg: PGlite + pgvector served over pglite-socket from a process of its own (a database server is one), its data in a temporary directory on disk (runs before 2026-12-05 12:00 UTC kept it in PGlite's memory file system), so the store analyses and embeds the next batch while the database writes the last; its peak RSS is the bench process's plus the database process's. Runs before 2026-12-03 18:00 UTC served PGlite in the bench's process. load s for pg is until the store answers searches with its GIN and vector indexes built (`persist`).",
  ];
  const sizes = [...new Set(results.map((r) => r.size))];
  const pairs = sizes.flatMap((size) => {
    const e = results.find((r) => r.size === size && r.backend === 'embedded');
    const p = results.find((r) => r.size === size && r.backend === 'pg');
    return e && p ? [{ size, e, p }] : [];
  });
  if (pairs.length) {
    lines.push(
      '',
      '## pg ÷ embedded',
      '',
      '| items | p50 | p99 | load items/s | on disk | peak RSS | top-10 overlap |',
      '| ----: | --: | --: | -----------: | ------: | -------: | -------------: |',
      ...pairs.map(
        ({ size, e, p }) =>
          `| ${size} | ${(p.p50Ms / e.p50Ms).toFixed(2)}× | ${(p.p99Ms / e.p99Ms).toFixed(2)}× | ${(p.loadItemsPerSecond / e.loadItemsPerSecond).toFixed(2)}× | ${(p.diskBytes / e.diskBytes).toFixed(2)}× | ${(p.rssBytes / e.rssBytes).toFixed(2)}× | ${(overlap(e, p) * 100).toFixed(0)}% |`,
      ),
    );
  }
  const compared = results.filter((r) => r.byFacts);
  if (compared.length) {
    lines.push(
      '',
      '## pg: by the numbers table ÷ by the facts',
      '',
      'The same database in the same run, rounds interleaved: the store as it searches (ranges and superlatives by the numbers table) and a second store on it with `searchByNumbers: false` (every row of the site tested and ordered by its facts, as before the table). p50 ms. Questions that use neither ranges on paths nor superlatives (plain words, value constraints, derived quantities) run the same SQL in both stores: their ratios show how far one run moves between two stores on one PGlite: at 300k the store that loaded answered them about 2× slower than the second in both runs of 2026-12-06, at 30k the two were within 10% (a separate check, 6 rounds). The pg rows above (peak RSS included, taken before the second store opens) are the first store alone.',
      '',
      `| question | ${compared.map((r) => `facts ${r.size} | numbers ${r.size} | ratio`).join(' | ')} |`,
      `| --- | ${compared.map(() => '---: | ---: | ---:').join(' | ')} |`,
      `| all: p50 / p99 | ${compared.map((r) => `${ms(r.byFacts!.p50Ms)} / ${ms(r.byFacts!.p99Ms)} | ${ms(r.p50Ms)} / ${ms(r.p99Ms)} | ${(r.byFacts!.p50Ms / r.p50Ms).toFixed(2)}× / ${(r.byFacts!.p99Ms / r.p99Ms).toFixed(2)}×`).join(' | ')} |`,
      ...QUERIES.map(
        (q, i) =>
          `| ${q.query} | ${compared.map((r) => `${ms(r.byFacts!.perQueryP50Ms[i]!)} | ${ms(r.perQuery[i]!.p50Ms)} | ${(r.byFacts!.perQueryP50Ms[i]! / r.perQuery[i]!.p50Ms).toFixed(2)}×`).join(' | ')} |`,
      ),
    );
  }
  lines.push('', '## p50 per question (ms)', '');
  const cols = results.map((r) => `${r.backend} ${r.size}`);
  lines.push(`| question | ${cols.join(' | ')} |`, `| --- | ${cols.map(() => '---:').join(' | ')} |`);
  QUERIES.forEach((q, i) =>
    lines.push(`| ${q.query} | ${results.map((r) => ms(r.perQuery[i]!.p50Ms)).join(' | ')} |`),
  );
  return lines.join('\n') + '\n';
}

if (process.argv[2] === '--pg-server') {
  await servePg();
} else if (process.argv[2] === '--child') {
  const backend = Backend.parse(process.argv[3]);
  const size = z.coerce.number().int().positive().parse(process.argv[4]);
  const rounds = z.coerce.number().int().positive().parse(process.argv[5]);
  const result = await runOne(backend, size, rounds);
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
} else if (process.argv[2] === '--reopen') {
  const dir = z.string().min(1).parse(process.argv[3]);
  const size = z.coerce.number().int().positive().parse(process.argv[4]);
  process.stdout.write(`RESULT ${JSON.stringify(await runReopen(dir, size))}\n`);
} else {
  const args = Args.parse({
    sizes: list(argValue('sizes') ?? process.env.ASKBUS_BENCH_SIZES ?? '3000,30000'),
    backends: list(argValue('backends') ?? process.env.ASKBUS_BENCH_BACKENDS ?? 'embedded,pg'),
    rounds: argValue('rounds') ?? process.env.ASKBUS_BENCH_ROUNDS ?? 10,
  });
  const results: ChildResult[] = [];
  for (const size of args.sizes) {
    for (const backend of args.backends) {
      process.stderr.write(`${backend} at ${size} items…\n`);
      const r = await runChild(backend, size, args.rounds);
      process.stderr.write(
        `  load ${r.loadSeconds.toFixed(1)} s (${Math.round(r.loadItemsPerSecond)} items/s), p50 ${ms(r.p50Ms)} ms, p99 ${ms(r.p99Ms)} ms, RSS ${mb(r.rssBytes)} MB` +
          (r.reopenSeconds === undefined
            ? ''
            : `, reopen ${r.reopenSeconds.toFixed(1)} s, RSS after reopen ${mb(r.reopenRssBytes!)} MB`) +
          '\n',
      );
      results.push(r);
    }
  }
  const dir = join(fileURLToPath(new URL('.', import.meta.url)), 'results');
  mkdirSync(dir, { recursive: true });
  // --merge: keep the earlier file's other sizes and backends (a 300k run on its own, say)
  if (process.argv.includes('--merge') && existsSync(join(dir, 'retrieve.json'))) {
    const earlier = z
      .object({ results: z.array(ChildResult) })
      .parse(JSON.parse(readFileSync(join(dir, 'retrieve.json'), 'utf8')));
    for (const r of earlier.results)
      if (!results.some((x) => x.size === r.size && x.backend === r.backend)) results.push(r);
    results.sort((a, b) => a.size - b.size || (a.backend < b.backend ? -1 : 1));
  }
  const md = report(results, args.rounds);
  writeFileSync(
    join(dir, 'retrieve.json'),
    JSON.stringify(
      { when: new Date().toISOString(), rounds: args.rounds, queries: QUERIES, results },
      null,
      2,
    ) + '\n',
  );
  writeFileSync(join(dir, 'retrieve.md'), md);
  process.stdout.write(md);
}
