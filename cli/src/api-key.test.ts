import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { testBus, testNats } from '@askbus/bus/testing';
import type { Bus } from '@askbus/bus';
import { contracts, createMessageFactory } from '@askbus/contracts';
import { buildGateway } from '@askbus/gateway';
import { apiKeyOf } from './client';

// `askbus ask` and `askbus sites` as processes against a gateway that requires API keys: the key
// from --api-key or ASKBUS_API_KEY goes out as `Authorization: Bearer`.

const here = dirname(fileURLToPath(import.meta.url));
const tsx = join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/cli.mjs');
const cli = join(here, 'askbus.ts');
const KEY = 'cli-test-key-123456';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function askbus(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [tsx, cli, ...args], {
      env: { ...process.env, ASKBUS_URL: '', ASKBUS_API_KEY: '', NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('apiKeyOf', () => {
  it('takes --api-key, else ASKBUS_API_KEY; none is undefined; spaces are a usage error', () => {
    expect(apiKeyOf(undefined, {})).toBeUndefined();
    expect(apiKeyOf(undefined, { ASKBUS_API_KEY: ' env-key ' })).toBe('env-key');
    expect(apiKeyOf('flag-key', { ASKBUS_API_KEY: 'env-key' })).toBe('flag-key');
    expect(() => apiKeyOf('two words', {})).toThrow(/printable ASCII without spaces/);
  });
});

describe('askbus ask and sites with an API key', { timeout: 60_000 }, () => {
  let nats: Awaited<ReturnType<typeof testNats>>;
  let buses: Bus[];
  let app: FastifyInstance;
  let url: string;

  beforeAll(async () => {
    nats = await testNats();
    buses = await Promise.all([testBus(nats.url, 'router'), testBus(nats.url, 'gateway')]);
    const [routerBus, gatewayBus] = buses as [Bus, Bus];
    routerBus.serve(contracts.sites, async () => ({
      sites: [{ name: 'movies', itemCount: 1, types: ['Movie'] }],
    }));
    routerBus.serveStream(contracts.ask, async function* (req) {
      const msg = createMessageFactory(req.conversationId, req.queryId);
      yield msg({ message_type: 'begin-nlweb-response', query: req.query });
      yield msg({
        message_type: 'result',
        content: [
          {
            '@type': 'Item',
            url: 'https://movies.example/1',
            name: 'Alien',
            site: 'movies',
            siteUrl: 'movies',
            score: 90,
            description: 'In space no one can hear you scream.',
            schema_object: { '@type': 'Movie', name: 'Alien' },
          },
        ],
      });
      yield msg({ message_type: 'end-nlweb-response' });
    });
    await routerBus.nc.flush();
    app = await buildGateway(gatewayBus, { auth: { keys: [{ client: 'cli', key: KEY }] } });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const addr = app.server.address();
    url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  });

  afterAll(async () => {
    await app?.close();
    await Promise.all((buses ?? []).map((b) => b.drain()));
    await nats?.stop();
  });

  it('without a key: exit 1 and a message that says how to give one', async () => {
    const r = await askbus(['sites', '--url', url]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/HTTP 401: .*\(give an API key: --api-key or ASKBUS_API_KEY\)/);
    const wrong = await askbus(['ask', '--url', url, '--api-key', 'not-the-key-000', 'space']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/HTTP 401/);
  });

  it('sites with --api-key and ask with ASKBUS_API_KEY get their answers', async () => {
    const sites = await askbus(['sites', '--url', url, '--api-key', KEY]);
    expect(sites.stderr).toBe('');
    expect(sites.code).toBe(0);
    expect(sites.stdout).toMatch(/^movies\s+1\s+Movie$/m);
    const ask = await askbus(['ask', '--url', url, 'space movies'], { ASKBUS_API_KEY: KEY });
    expect(ask.stderr).toBe('');
    expect(ask.code).toBe(0);
    expect(ask.stdout).toMatch(/^ 1\. \[90\] Alien$/m);
  });
});
