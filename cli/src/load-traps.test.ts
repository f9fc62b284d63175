/**
 * `askbus load` and the data traps of issue 19 (item 5), against a real NATS and retriever: a
 * load that stores nothing (a CSV without --type, only bad records) exits non-zero saying why;
 * deep JSON-LD is a skipped record named by file and record, not a crash; an item whose URL
 * another site holds is refused by name unless --move moves it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { startRetriever, type Retriever } from '@askbus/retriever';
import { formatSummary, nothingStored, runLoad } from './load';

const here = dirname(fileURLToPath(import.meta.url));
const tsx = join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/cli.mjs');
const cli = join(here, 'askbus.ts');

let nats: Awaited<ReturnType<typeof testNats>>;
let server: Bus;
let client: Bus;
let retriever: Retriever;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'askbus-load-traps-'));
  nats = await testNats();
  server = await testBus(nats.url, 'retriever');
  client = await testBus(nats.url, 'askbus-load');
  retriever = await startRetriever(server, { dataDir: join(dir, 'index') });
  await server.nc.flush();
});

afterAll(async () => {
  await client?.drain();
  await server?.drain();
  await nats?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** `askbus load …` as a user runs it; the retriever answering it runs in this process. */
function askbusLoad(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tsx, cli, 'load', ...args, '--quiet'], {
      env: { ...process.env, NATS_URL: nats.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill(), 30_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

const file = (name: string, text: string): string => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

describe('a load that stores nothing fails, saying why', () => {
  it('a CSV without --type: exit 1, the reason names --type; with --type all 9 rows load', async () => {
    const rows = Array.from({ length: 9 }, (_, i) => `Film ${i},https://films.example/${i}`);
    const p = file('films.csv', ['name,url', ...rows].join('\n'));
    const bare = await askbusLoad([p, '--site', 'films']);
    expect(bare.status).toBe(1);
    expect(bare.stderr).toMatch(
      /askbus load: nothing was stored from .*films\.csv; skipped: 1× no @type column and no default type \(say what the rows are with --type, e.g. --type Movie\)/,
    );
    expect(retriever.store.size).toBe(0);

    const typed = await askbusLoad([p, '--site', 'films', '--type', 'Movie']);
    expect(typed.stderr).toBe('');
    expect(typed.status).toBe(0);
    expect(typed.stdout).toMatch(/films: loaded 9 items, skipped 0/);
  });

  it('a file of bad records only: exit 1 with the reasons; --delete-site alone still exits 0', async () => {
    const p = file('bad.jsonl', '{"name":"no type"}\n{"@type":"Thing"}\nnot json\n');
    const r = await askbusLoad([p, '--site', 'junk']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /nothing was stored from .*bad\.jsonl; skipped: 1× no @type.*; 1× no url or @id; 1× bad JSON/,
    );
    const del = await askbusLoad(['--site', 'junk', '--delete-site']);
    expect(del.status).toBe(0);
  });

  it('nothingStored says nothing for a load that stored something', () => {
    const s = {
      loaded: 1,
      acknowledged: 1,
      retries: 0,
      skipped: 5,
      reasons: [],
      errors: [],
      deleted: 0,
      batches: 1,
      seconds: 0,
      total: 1,
    };
    expect(nothingStored(s, 'x.csv')).toBeUndefined();
    expect(nothingStored({ ...s, acknowledged: 0, skipped: 0 }, 'x.csv')).toMatch(
      /holds no schema.org items/,
    );
    expect(nothingStored({ ...s, acknowledged: 0 }, undefined)).toBeUndefined();
  });
});

describe('deep JSON-LD', () => {
  it('is a skipped record named by file and record; the others load; no stack overflow', async () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    const p = file(
      'deep.json',
      `[{"@type":"Thing","name":"A","url":"https://deep.example/a"},\n` +
        `{"@type":"Thing","name":"B","url":"https://deep.example/b","x":${deep}},\n` +
        `{"@type":"Thing","name":"C","url":"https://deep.example/c"}]`,
    );
    const s = await runLoad(client, { source: p, site: 'deep' });
    expect(s.loaded).toBe(2);
    expect(s.errors).toEqual([{ file: p, record: 2, reason: 'nested deeper than 100 levels' }]);
    expect(formatSummary('deep', s)).toMatch(/deep\.json record 2: nested deeper than 100 levels/);
    expect(retriever.store.get('https://deep.example/b')).toBeUndefined();
  });
});

describe('an item whose URL another site holds', () => {
  it('is refused by name (the retriever reports it) unless --move moves it', async () => {
    const a = file(
      'a.jsonl',
      '{"@type":"Thing","name":"Shared","url":"https://shared.example/1"}\n{"@type":"Thing","name":"Own A","url":"https://shared.example/a"}\n',
    );
    const b = file(
      'b.jsonl',
      '{"@type":"Thing","name":"Shared in B","url":"https://shared.example/1"}\n{"@type":"Thing","name":"Own B","url":"https://shared.example/b"}\n',
    );
    expect((await runLoad(client, { source: a, site: 'site_a' })).loaded).toBe(2);

    const refused = await runLoad(client, { source: b, site: 'site_b' });
    expect(refused.loaded).toBe(1);
    expect(refused.acknowledged).toBe(1);
    expect(refused.errors).toEqual([
      { file: b, reason: 'already in site "site_a" (--move moves it to "site_b"): https://shared.example/1' },
    ]);
    expect(retriever.store.get('https://shared.example/1')).toMatchObject({ site: 'site_a', name: 'Shared' });
    expect(retriever.store.get('https://shared.example/b')).toMatchObject({ site: 'site_b' });

    // Only refused items: nothing stored, so the command fails, saying what --move would do.
    const only = file(
      'only.jsonl',
      '{"@type":"Thing","name":"Shared again","url":"https://shared.example/1"}\n',
    );
    const cmd = await askbusLoad([only, '--site', 'site_b']);
    expect(cmd.status).toBe(1);
    expect(cmd.stdout).toMatch(
      /already in site "site_a" \(--move moves it to "site_b"\): https:\/\/shared\.example\/1/,
    );

    const moved = await askbusLoad([only, '--site', 'site_b', '--move']);
    expect(moved.stderr).toBe('');
    expect(moved.status).toBe(0);
    expect(retriever.store.get('https://shared.example/1')).toMatchObject({
      site: 'site_b',
      name: 'Shared again',
    });
  });
});
