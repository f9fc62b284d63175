import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Message, ResultItem } from '@askbus/contracts';
import { penguinItems } from '@askbus/understand/testing';
import { readAskStream, startDemoSystem, type DemoSystem } from './testing';

/**
 * Issue 18 through the whole system, as a user asks over REST /ask with the default (no LLM):
 * constraints from the site's own data, named items routed to details and compare, honest
 * descriptions, summaries that state what they answered, a site of another kind loaded with
 * `askbus load`, and a tool the site does not have refused by name.
 */
const here = dirname(fileURLToPath(import.meta.url));
const tsx = join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/cli.mjs');
const cli = join(here, 'askbus.ts');

let system: DemoSystem;
let dir: string;

beforeAll(async () => {
  system = await startDemoSystem();
  dir = mkdtempSync(join(tmpdir(), 'askbus-answers-'));
  // penguin observations as a site owner would publish them: JSON-LD with PropertyValues
  const file = join(dir, 'penguins.jsonl');
  writeFileSync(
    file,
    penguinItems()
      .map((i) => JSON.stringify(i.schema_object))
      .join('\n'),
  );
  const loaded = await new Promise<{ status: number | null; out: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [tsx, cli, 'load', file, '--site', 'penguins'], {
      env: { ...process.env, NATS_URL: system.natsUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, out }));
  });
  if (loaded.status !== 0) throw new Error(`askbus load failed: ${loaded.out}`);
}, 120_000);

afterAll(async () => {
  await system?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const ask = (query: string, site: string, extra = ''): Promise<Message[]> =>
  readAskStream(`${system.running.url}/ask?query=${encodeURIComponent(query)}&site=${site}${extra}`);
const results = (msgs: Message[]): ResultItem[] =>
  msgs.flatMap((m) => (m.message_type === 'result' && Array.isArray(m.content) ? m.content : []));
const typed = (msgs: Message[], type: string) =>
  msgs.filter((m) => m.message_type === type) as (Message & Record<string, unknown>)[];
const prop = (r: ResultItem, name: string): unknown =>
  (
    (r.schema_object.additionalProperty ?? r.schema_object.variableMeasured) as
      { name: string; value: unknown }[] | undefined
  )?.find((p) => p.name === name)?.value;

describe('constraint questions over REST /ask (no LLM)', () => {
  it('heavy 8-cylinder cars from the early 70s: every result satisfies both, the heaviest first', async () => {
    const rs = results(await ask('heavy 8-cylinder cars from the early 70s', 'cars'));
    expect(rs.length).toBeGreaterThanOrEqual(5);
    for (const r of rs) {
      expect(prop(r, 'number of cylinders')).toBe(8);
      expect(Number(r.schema_object.vehicleModelDate)).toBeGreaterThanOrEqual(1970);
      expect(Number(r.schema_object.vehicleModelDate)).toBeLessThanOrEqual(1973);
    }
    const weights = rs.slice(0, 5).map((r) => (r.schema_object.weight as { value: number }).value);
    expect(Math.min(...weights)).toBeGreaterThan(4500);
    // descriptions are for people; the diagnostics went to debug
    expect(rs[0]!.description).not.toMatch(/matches:/);
    expect(rs[0]!.debug).toMatch(/^matches: /);
  });

  it('movies longer than 2 and a half hours: by running time, not by title words', async () => {
    const rs = results(await ask('movies longer than 2 and a half hours', 'movies'));
    expect(rs.length).toBeGreaterThanOrEqual(5);
    for (const r of rs)
      expect(Number(/PT(\d+)M/.exec(String(r.schema_object.duration))?.[1])).toBeGreaterThan(150);
  });

  it('a site of another kind loaded with askbus load: gentoo penguins heavier than 6000 grams', async () => {
    const rs = results(await ask('gentoo penguins heavier than 6000 grams', 'penguins'));
    expect(rs.length).toBeGreaterThan(0);
    for (const r of rs) {
      expect(prop(r, 'species')).toBe('Gentoo');
      expect(prop(r, 'body mass')).toBeGreaterThan(6000);
    }
    const heaviest = results(await ask('the heaviest penguins on Dream island', 'penguins'));
    expect(heaviest.every((r) => prop(r, 'island') === 'Dream')).toBe(true);
    const masses = heaviest.map((r) => prop(r, 'body mass') as number);
    expect(masses).toEqual([...masses].sort((a, b) => b - a));
    expect(heaviest[0]!.description).toMatch(/body mass [\d,]+ g/);
  });

  it('relaxes what excludes everything, and says so', async () => {
    const msgs = await ask('japanese cars heavier than 4500 pounds', 'cars');
    const status = typed(msgs, 'status').map((m) => String(m.content));
    expect(status.join(' ')).toMatch(/No cars matched every part of the question, so “.+” was left out/);
    expect(results(msgs).length).toBeGreaterThan(0);
  });

  it('a summary states what it answered and cites only items that satisfy it', async () => {
    const msgs = await ask('heavy 8-cylinder cars from the early 70s', 'cars', '&generate_mode=summarize');
    const summary = msgs.find(
      (m) => m.message_type === 'result' && '@type' in m && m['@type'] === 'Summary',
    ) as { content: string } | undefined;
    expect(summary?.content).toMatch(
      /^Of the \d+ cars from 1970–1973 with 8 cylinders, the heaviest are .+ \[1\]/,
    );
  });
});

describe('site profiles', () => {
  it('/sites shows each profile in brief, /sites/<name> the whole profile of a site loaded with askbus load', async () => {
    const sites = (await (await fetch(`${system.running.url}/sites`)).json()) as {
      details: {
        name: string;
        mainTypes?: string[];
        properties?: { path: string; kind: string; unit?: string }[];
      }[];
    };
    const cars = sites.details.find((d) => d.name === 'cars');
    expect(cars?.mainTypes).toEqual(['Car']);
    expect(cars?.properties?.find((p) => p.path === 'weight')).toMatchObject({ kind: 'number', unit: 'g' });
    const res = await fetch(`${system.running.url}/sites/penguins`);
    expect(res.status).toBe(200);
    const { profile } = (await res.json()) as {
      profile: {
        mainTypes: string[];
        properties: { path: string; kind: string; values?: { value: string }[] }[];
      };
    };
    expect(profile.mainTypes).toEqual(['Observation']);
    const species = profile.properties.find((p) => p.path === 'variableMeasured.species');
    expect(species?.values?.map((v) => v.value).sort()).toEqual(['Adelie', 'Chinstrap', 'Gentoo']);
    expect((await fetch(`${system.running.url}/sites/nowhere`)).status).toBe(404);
  });
});

describe('named items: details, compare, tools', () => {
  it('an attribute question about one item goes to details with that item', async () => {
    const msgs = await ask('who directed Jurassic Park', 'movies');
    const [d] = typed(msgs, 'item_details');
    expect(d?.name).toBe('Jurassic Park');
    expect(String(d?.details)).toMatch(/^Jurassic Park \(1993\): directed by Steven Spielberg/);
  });

  it('the exact title comes before titles that contain it', async () => {
    const rs = results(await ask('Titanic', 'movies'));
    expect(rs[0]!.name).toBe('Titanic');
    expect(rs[0]!.score).toBeGreaterThan(rs[1]!.score);
  });

  it('two named items with a comparison go to compare, whatever the phrasing', async () => {
    for (const q of ['which is better rated, Alien or Blade Runner', 'Alien vs Blade Runner']) {
      const [c] = typed(await ask(q, 'movies'), 'compare_items');
      expect([(c?.item1 as { name: string }).name, (c?.item2 as { name: string }).name], q).toEqual([
        'Alien',
        'Blade Runner',
      ]);
    }
  });

  it('tool=details with a bare name works; a tool the site lacks is an error naming its tools', async () => {
    const [d] = typed(await ask('Pale Rider', 'movies', '&tool=details'), 'item_details');
    expect(d?.name).toBe('Pale Rider');
    const [e] = typed(await ask('Pale Rider', 'movies', '&tool=recipe_substitutions'), 'error');
    expect(String(e?.error)).toMatch(
      /no tool "recipe_substitutions" for site movies .*its tools are: search, details, compare, ensemble/,
    );
  });

  it("MCP details and compare find their items on every site (the SDK's client, default site all)", async () => {
    const client = new Client({ name: 'answers-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${system.running.url}/mcp`)));
    try {
      const d = await client.callTool({ name: 'details', arguments: { item: 'Pale Rider' } });
      expect(d.isError).toBeFalsy();
      expect((d.structuredContent as { item?: { name: string; site: string } }).item).toMatchObject({
        name: 'Pale Rider',
        site: 'movies',
      });
      const c = await client.callTool({
        name: 'compare',
        arguments: { item1: 'Alien', item2: 'Blade Runner' },
      });
      expect(c.isError).toBeFalsy();
      const cmp = (
        c.structuredContent as { comparison?: { item1: { name: string }; item2: { name: string } } }
      ).comparison;
      expect([cmp?.item1.name, cmp?.item2.name]).toEqual(['Alien', 'Blade Runner']);
    } finally {
      await client.close();
    }
  });
});
