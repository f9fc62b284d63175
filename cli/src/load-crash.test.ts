import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts, type StoredItem } from '@askbus/contracts';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { IndexStore } from '@askbus/retriever';
import { LoadInterruptedError, runLoad } from './load';

/**
 * The retriever as a real process, SIGKILLed in the middle of `askbus load`: what it
 * acknowledged must be on disk, the loader must resend to a restarted one, and loading the same
 * file again must complete the site.
 */
const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '../..');
const retrieverMain = join(repoRoot, 'services/retriever/src/main.ts');
const tsxCli = join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/cli.mjs');
const askbusCli = join(here, 'askbus.ts');

const ITEMS = 3000;
/** Small batches, so there are ~50 of them and the kill lands mid-load. */
const BATCH_BYTES = 60_000;
/** A small snapshot threshold, so background snapshots and journal rotations happen mid-load too. */
const SNAPSHOT_BYTES = 300_000;

const filmUrl = (i: number): string => `https://films.example/${i}`;
const filmName = (i: number): string => `Film ${i}`;

interface RetrieverProcess {
  child: ChildProcess;
  exited: Promise<NodeJS.Signals | number | null>;
  output: () => string;
}

describe('a retriever killed during a load', () => {
  let nats: Awaited<ReturnType<typeof testNats>>;
  let client: Bus;
  let dir: string;
  let file: string;
  const running = new Set<RetrieverProcess>();

  /** `node --import tsx main.ts` (not the tsx CLI, which would survive as a parent of the real process). */
  function startRetriever(dataDir: string): RetrieverProcess {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NATS_URL: nats.url,
      ASKBUS_INDEX_DIR: dataDir,
      ASKBUS_SNAPSHOT_BYTES: String(SNAPSHOT_BYTES),
      LOG_LEVEL: 'warn',
    };
    delete env.ASKBUS_DEMO;
    delete env.METRICS_PORT;
    const child = spawn(process.execPath, ['--import', 'tsx', retrieverMain], {
      cwd: repoRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
    child.stderr!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
    const proc: RetrieverProcess = {
      child,
      exited: new Promise((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code))),
      output: () => output,
    };
    running.add(proc);
    void proc.exited.then(() => running.delete(proc));
    return proc;
  }

  /** Waits until a retriever answers (it serves only once its store is open, journal replayed). */
  async function answering(proc: RetrieverProcess): Promise<void> {
    // generous: two cores shared with other test runs, and tsx compiles on start
    const until = Date.now() + 30_000;
    for (;;) {
      if (proc.child.exitCode !== null) throw new Error(`the retriever exited: ${proc.output()}`);
      try {
        await client.request(contracts.sites, {}, { timeoutMs: 2_000 });
        return;
      } catch (err) {
        if (Date.now() > until)
          throw new Error(`the retriever did not answer in 30 s: ${proc.output()}`, { cause: err });
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  async function kill(proc: RetrieverProcess): Promise<void> {
    proc.child.kill('SIGKILL');
    expect(await proc.exited).toBe('SIGKILL');
  }

  async function siteCount(site: string): Promise<number | undefined> {
    const { sites } = await client.request(contracts.sites, {});
    return sites.find((s) => s.name === site)?.itemCount;
  }

  /** The items a search for the film's name finds with that name: exactly one, the film itself. */
  async function findByName(site: string, i: number): Promise<string[]> {
    const { items } = await client.request(contracts.search, {
      query: filmName(i),
      site: [site],
      numResults: 50,
    });
    return items.filter((r) => r.name === filmName(i)).map((r) => r.url);
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'askbus-load-crash-'));
    nats = await testNats();
    client = await testBus(nats.url, 'askbus-load');
    file = join(dir, 'films.tsv');
    const text = 'A film about frontier towns, long roads and the people who stay. '.repeat(12); // ~0.8 KB
    const lines: string[] = [];
    for (let i = 0; i < ITEMS; i++) {
      lines.push(
        `${filmUrl(i)}\t${JSON.stringify({ '@type': 'Movie', name: filmName(i), description: text })}`,
      );
    }
    writeFileSync(file, lines.join('\n'));
  });

  afterAll(async () => {
    for (const proc of running) proc.child.kill('SIGKILL');
    await Promise.all([...running].map((p) => p.exited));
    await client?.drain();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('`askbus load` exits non-zero, saying what was acknowledged and what to do, when no retriever comes back', async () => {
    const r = await new Promise<{ status: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [tsxCli, askbusCli, 'load', file, '--site', 'films', '--quiet', '--retry-for', '1'],
        {
          env: { ...process.env, NATS_URL: nats.url },
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (status) => resolve({ status, stderr }));
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /the retriever stopped answering batch 1 \(no_responders\) and did not come back within 1 s/,
    );
    expect(r.stderr).toMatch(/0 items were acknowledged .*running the same load again completes the site/);
  });

  it('keeps every acknowledged item after a SIGKILL mid-load, and a re-load completes the site', async () => {
    const dataDir = join(dir, 'index-a');
    const first = startRetriever(dataDir);
    await answering(first);

    const acknowledged: StoredItem[] = [];
    let batches = 0;
    let killed: Promise<void> | undefined;
    const load = runLoad(client, {
      source: file,
      site: 'films',
      batchBytes: BATCH_BYTES,
      // short: this retriever is not coming back while the loader waits
      retryForMs: 1_500,
      onAcknowledged: (items) => {
        acknowledged.push(...items);
        // after the 12th batch: the loader is sending the 13th, so the kill lands mid-load
        if (++batches === 12) killed = new Promise((r) => setTimeout(r, 15)).then(() => kill(first));
      },
    });
    const failure = await load.then(
      () => undefined,
      (err: unknown) => err,
    );
    await killed;
    expect(failure).toBeInstanceOf(LoadInterruptedError);
    expect((failure as LoadInterruptedError).acknowledged).toBe(acknowledged.length);
    expect((failure as Error).message).toMatch(
      new RegExp(
        `${acknowledged.length} items were acknowledged.*running the same load again completes the site`,
      ),
    );
    expect(acknowledged.length).toBeGreaterThanOrEqual(12 * 50);
    expect(acknowledged.length).toBeLessThan(ITEMS);

    // What the dead process left on disk holds every acknowledged item, as sent (read from a copy,
    // in this process, so nothing but the files can answer).
    const copy = join(dir, 'index-a-copy');
    cpSync(dataDir, copy, { recursive: true });
    const onDisk = await IndexStore.open({ dataDir: copy, embedder: null });
    const missing = acknowledged.filter(
      (item) => JSON.stringify(onDisk.get(item.url)) !== JSON.stringify(item),
    );
    expect(missing.map((m) => m.url)).toEqual([]);
    await onDisk.close();

    // The restarted retriever on the same directory serves them.
    const second = startRetriever(dataDir);
    await answering(second);
    const count = (await siteCount('films'))!;
    // at most the batch in flight at the kill may also be there (journaled, never acknowledged)
    expect(count).toBeGreaterThanOrEqual(acknowledged.length);
    expect(count).toBeLessThanOrEqual(acknowledged.length + 200);
    const ackedNumbers = acknowledged.map((item) => Number(item.url.split('/').pop()));
    for (const i of [
      ackedNumbers[0]!,
      ackedNumbers[Math.floor(ackedNumbers.length / 2)]!,
      ackedNumbers.at(-1)!,
    ]) {
      expect(await findByName('films', i)).toEqual([filmUrl(i)]);
    }

    // The same load again completes the site: every item, once.
    const again = await runLoad(client, { source: file, site: 'films', batchBytes: BATCH_BYTES });
    expect(again.acknowledged).toBe(ITEMS);
    expect(await siteCount('films')).toBe(ITEMS);
    for (const i of [0, ackedNumbers.at(-1)!, ITEMS - 1])
      expect(await findByName('films', i)).toEqual([filmUrl(i)]);

    // …and it is all on disk: after another SIGKILL the next retriever has the whole site.
    await kill(second);
    const third = startRetriever(dataDir);
    await answering(third);
    expect(await siteCount('films')).toBe(ITEMS);
    await kill(third);
    // three retriever processes start (tsx compiles each): generous on two shared cores
  }, 90_000);

  it('resends the batch in flight to a retriever restarted on the same directory, and completes', async () => {
    const dataDir = join(dir, 'index-b');
    let current = startRetriever(dataDir);
    await answering(current);

    let batches = 0;
    let restarted: Promise<void> | undefined;
    const summary = await runLoad(client, {
      source: file,
      site: 'films',
      batchBytes: BATCH_BYTES,
      // generous: a restart on a loaded 2-core machine takes seconds
      retryForMs: 45_000,
      onAcknowledged: () => {
        if (++batches === 8) void new Promise((r) => setTimeout(r, 15)).then(() => kill(current));
      },
      onRetry: () => {
        restarted ??= (async () => {
          current = startRetriever(dataDir);
          await answering(current);
        })();
      },
    });
    await restarted;
    expect(restarted).toBeDefined();
    expect(summary.retries).toBeGreaterThan(0);
    expect(summary.acknowledged).toBe(ITEMS);
    expect(summary.total).toBe(ITEMS);
    expect(await siteCount('films')).toBe(ITEMS);
    await kill(current);
    // A restart plus up to 45 s of retries: more than the default limit on a loaded machine.
  }, 90_000);
});
