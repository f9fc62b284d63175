import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { testBus, testNats } from '@askbus/bus/testing';
import type { Bus } from '@askbus/bus';
import { contracts, createMessageFactory } from '@askbus/contracts';
import { buildGateway } from '@askbus/gateway';
import { startDemoSystem, type DemoSystem } from './testing';
import type { Running } from './up';

// `askbus ask` and `askbus sites` as processes, against a real running system.

const here = dirname(fileURLToPath(import.meta.url));
const tsx = join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/cli.mjs');
const cli = join(here, 'askbus.ts');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI without blocking this process (the gateway under test lives in it). */
function askbus(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [tsx, cli, ...args], {
      env: { ...process.env, ASKBUS_URL: '', NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe('askbus --help', { timeout: 60_000 }, () => {
  it('lists ask and sites; each has its own --help', () => {
    const top = spawnSync(process.execPath, [tsx, cli, '--help'], { encoding: 'utf8' });
    expect(top.status).toBe(0);
    expect(top.stdout).toMatch(/^\s+ask\s+ask a running gateway/m);
    expect(top.stdout).toMatch(/^\s+sites\s+list the sites/m);
    const ask = spawnSync(process.execPath, [tsx, cli, 'ask', '--help'], { encoding: 'utf8' });
    expect(ask.status).toBe(0);
    expect(ask.stdout).toMatch(/^Usage: askbus ask \[options\] <question\.\.\.>/);
    for (const flag of ['--site', '--mode', '--max', '--json', '--url', 'ASKBUS_URL'])
      expect(ask.stdout).toContain(flag);
    const sites = spawnSync(process.execPath, [tsx, cli, 'sites', '-h'], { encoding: 'utf8' });
    expect(sites.status).toBe(0);
    expect(sites.stdout).toMatch(/^Usage: askbus sites \[options\]/);
  });

  it('refuses bad options with exit status 2 and the usage', () => {
    const mode = spawnSync(process.execPath, [tsx, cli, 'ask', '--mode', 'poetry', 'westerns'], {
      encoding: 'utf8',
    });
    expect(mode.status).toBe(2);
    expect(mode.stderr).toMatch(/--mode must be one of list, summarize, generate, got "poetry"/);
    expect(mode.stderr).toContain('Usage: askbus ask');
    const max = spawnSync(process.execPath, [tsx, cli, 'ask', '--max', '0', 'westerns'], {
      encoding: 'utf8',
    });
    expect(max.status).toBe(2);
    expect(max.stderr).toMatch(/--max must be a whole number from 1 to 100/);
    const none = spawnSync(process.execPath, [tsx, cli, 'ask'], { encoding: 'utf8' });
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/a question is required/);
    const unknown = spawnSync(process.execPath, [tsx, cli, 'sites', '--frob'], { encoding: 'utf8' });
    expect(unknown.status).toBe(2);
  });
});

describe('against askbus up', { timeout: 60_000 }, () => {
  let system: DemoSystem;
  let running: Running;

  beforeAll(async () => {
    system = await startDemoSystem();
    running = system.running;
  });

  afterAll(() => system?.stop());

  it('sites prints a table of the sites, or the JSON body', async () => {
    const table = await askbus(['sites', '--url', running.url]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^SITE\s+ITEMS\s+TYPES$/m);
    expect(table.stdout).toMatch(/^movies\s+3200\s+Movie$/m);
    expect(table.stdout).toMatch(/^cars\s+\d+\s+Car$/m);
    const json = await askbus(['sites', '--json'], { ASKBUS_URL: running.url });
    expect(json.code).toBe(0);
    const body = JSON.parse(json.stdout) as { 'message-type': string; sites: string[] };
    expect(body['message-type']).toBe('sites');
    expect(body.sites).toEqual(expect.arrayContaining(['movies', 'cars']));
  });

  it('ask prints rank, score, name, description and URL of each result', async () => {
    const r = await askbus(['ask', '--url', running.url, '--site', 'movies', 'westerns with clint eastwood']);
    expect(r.stderr).not.toMatch(/error|askbus ask:/);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    const first = lines.findIndex((l) => /^ 1\. \[\d+\] /.test(l));
    expect(first).toBeGreaterThanOrEqual(0);
    expect(lines[first + 1]).toMatch(/^ {4}\S/); // the description
    expect(lines[first + 2]).toMatch(/^ {4}https:\/\/\S+$/); // the URL
    expect(r.stdout).toMatch(/^ 2\. \[\d+\] /m);
    const names = [...r.stdout.matchAll(/^\s*\d+\. \[\d+\] (.+)$/gm)].map((m) => m[1]);
    expect(names.slice(0, 5)).toEqual(expect.arrayContaining(['Pale Rider', 'High Plains Drifter']));
  });

  it('ask --json prints one NLWeb message per line; --max and --mode reach the gateway', async () => {
    const r = await askbus(
      ['ask', '--json', '--max', '3', '--mode', 'summarize', '-s', 'cars', 'fuel efficient japanese cars'],
      {
        ASKBUS_URL: running.url,
      },
    );
    expect(r.code).toBe(0);
    const messages = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { message_type: string; '@type'?: string; content?: unknown });
    expect(messages[0]!.message_type).toBe('begin-nlweb-response');
    expect(messages.at(-1)!.message_type).toBe('end-nlweb-response');
    const items = messages.flatMap((m) =>
      m.message_type === 'result' && Array.isArray(m.content) ? m.content : [],
    );
    expect(items.length).toBeGreaterThan(0);
    expect(items.length).toBeLessThanOrEqual(3);
    expect(messages.some((m) => m['@type'] === 'Summary' && typeof m.content === 'string')).toBe(true);
  });

  it('ask in summarize and generate modes prints the summary and the answer', async () => {
    const s = await askbus([
      'ask',
      '--url',
      running.url,
      '-s',
      'movies',
      '-m',
      'summarize',
      'westerns with clint eastwood',
    ]);
    expect(s.code).toBe(0);
    expect(s.stdout).toMatch(
      /^Summary: Of the 2 Western movies directed by Clint Eastwood, the best matches are /m,
    );
    const g = await askbus([
      'ask',
      '--url',
      running.url,
      '-s',
      'movies',
      '-m',
      'generate',
      'westerns with clint eastwood',
    ]);
    expect(g.code).toBe(0);
    expect(g.stdout).toMatch(/^Answer: Of the 2 Western movies directed by Clint Eastwood, /m);
    expect(g.stdout).toMatch(/^Sources:\n {2}\[1\] \S/m);
  });

  it('reports HTTP errors and an unreachable gateway with exit status 1', async () => {
    const bad = await askbus(['ask', '--url', running.url, '--site', 'no such site!', 'westerns']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^askbus ask: the gateway answered HTTP 400: site: /);
    const badJson = await askbus([
      'ask',
      '--json',
      '--url',
      running.url,
      '--site',
      'no such site!',
      'westerns',
    ]);
    expect(badJson.code).toBe(1);
    expect(JSON.parse(badJson.stdout)).toMatchObject({ message_type: 'error', status: 400 });

    const port = await closedPort();
    const gone = await askbus(['sites'], { ASKBUS_URL: `http://127.0.0.1:${port}` });
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(new RegExp(`cannot reach the gateway at http://127\\.0\\.0\\.1:${port}`));
    const goneJson = await askbus(['ask', '--json', 'westerns'], { ASKBUS_URL: `http://127.0.0.1:${port}` });
    expect(goneJson.code).toBe(1);
    expect(JSON.parse(goneJson.stdout)).toMatchObject({ message_type: 'error', code: 'unreachable' });
  });
});

describe('streaming and stopping', { timeout: 60_000 }, () => {
  // A gateway over a router that answers one result, then holds the answer open until released.
  let nats: Awaited<ReturnType<typeof testNats>>;
  let routerBus: Bus;
  let gatewayBus: Bus;
  let app: FastifyInstance;
  let url: string;
  const aborted: string[] = [];
  let release: () => void = () => undefined;

  beforeAll(async () => {
    nats = await testNats();
    [routerBus, gatewayBus] = await Promise.all([testBus(nats.url, 'router'), testBus(nats.url, 'gateway')]);
    routerBus.serveStream(contracts.ask, async function* (req, ctx) {
      const msg = createMessageFactory(req.conversationId, req.queryId);
      yield msg({ message_type: 'begin-nlweb-response', query: req.query });
      yield msg({
        message_type: 'result',
        content: [
          {
            '@type': 'Item',
            url: 'https://movies.example/first',
            name: 'First \u001b[31mred\u001b[0m',
            site: 'movies',
            siteUrl: 'movies',
            score: 91,
            description: 'arrives at once',
            schema_object: { '@type': 'Movie' },
          },
        ],
      });
      await new Promise<void>((resolve) => {
        release = resolve;
        ctx.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      if (ctx.signal.aborted) {
        aborted.push(ctx.queryId);
        return;
      }
      yield msg({ message_type: 'error', error: 'the second batch failed', code: 'internal' });
      yield msg({ message_type: 'end-nlweb-response', error: true });
    });
    await routerBus.nc.flush();
    app = await buildGateway(gatewayBus, { keepAliveMs: 1_000 });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const addr = app.server.address();
    url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  });

  afterAll(async () => {
    await app?.close();
    await Promise.all([routerBus?.drain(), gatewayBus?.drain()]);
    await nats?.stop();
  });

  function start(args: string[]) {
    const child = spawn(process.execPath, [tsx, cli, ...args], {
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = { stdout: '', stderr: '' };
    child.stdout.on('data', (d: Buffer) => (out.stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out.stderr += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    return { child, out, exited };
  }

  it('prints each result as it arrives, strips terminal escapes, and fails on an error message', async () => {
    const run = start(['ask', '--url', url, 'anything']);
    await expect.poll(() => run.out.stdout, { timeout: 15_000 }).toContain(' 1. [91] First [31mred[0m');
    expect(run.out.stdout).not.toContain('\u001b');
    release();
    expect(await run.exited).toBe(1);
    expect(run.out.stderr).toContain('error: the second batch failed (internal)');
  });

  it('Ctrl-C stops the answer: exit 130, and the router sees the query cancelled', async () => {
    const run = start(['ask', '--url', url, 'anything']);
    await expect.poll(() => run.out.stdout, { timeout: 15_000 }).toContain(' 1. [91] First');
    const before = aborted.length;
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(130);
    expect(run.out.stderr).toContain('askbus ask: stopped');
    await expect.poll(() => aborted.length, { timeout: 5_000 }).toBe(before + 1);
  });
});
