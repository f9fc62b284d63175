/**
 * The whole system on a nats-server with the authorization renderNatsAuthConfig generates: every
 * service connects as its own NATS user, with only the subjects its contracts give it.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Kvm } from '@nats-io/kv';
import { connectBus } from '@askbus/bus';
import { loadSystem } from '@askbus/service';

const declared = await loadSystem();
const A2A_TASKS_BUCKET = declared.service('gateway').kvBuckets![0]!;
import { contracts } from '@askbus/contracts';
import { ClientFactory } from '@a2a-js/sdk/client';
import { Role } from '@a2a-js/sdk';
import type { Task } from '@a2a-js/sdk';
import { startDemoSystem, type DemoSystem } from './testing';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../..');
const tsx = join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/cli.mjs');

let system: DemoSystem;
const errors: string[] = [];

beforeAll(async () => {
  // up() logs each bus's warnings and errors (a permissions violation among them) to the console.
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void errors.push(args.join(' ')));
  system = await startDemoSystem({}, { natsPermissions: true });
});
afterAll(async () => {
  await system?.stop();
  vi.restoreAllMocks();
});

const askSse = async (query: string, site: string) => {
  const res = await fetch(`${system.running.url}/ask?query=${encodeURIComponent(query)}&site=${site}`);
  expect(res.status).toBe(200);
  return (await res.text())
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => JSON.parse(l.slice(5)) as { message_type: string; [k: string]: unknown });
};

/** `askbus load` as a process of its own, connecting as the NATS user given. */
function askbusLoad(file: string, site: string, user: string, password: string) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const env = { ...process.env, NATS_URL: system.natsUrl, NATS_USER: user, NATS_PASSWORD: password };
    const child = spawn(
      process.execPath,
      [tsx, join(here, 'askbus.ts'), 'load', file, '--site', site, '--quiet'],
      {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill(), 40_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

describe('askbus with a NATS user per service', () => {
  it('answers a REST /ask end to end: search, then the compare tool', async () => {
    const search = await askSse('westerns with clint eastwood', 'movies');
    expect(search[0]?.message_type).toBe('begin-nlweb-response');
    expect(search.at(-1)?.message_type).toBe('end-nlweb-response');
    expect(JSON.stringify(search.filter((m) => m.message_type === 'result'))).toMatch(/Pale Rider/);

    const compared = await askSse('compare Alien and Blade Runner', 'movies');
    const cmp = compared.find((m) => m.message_type === 'compare_items');
    expect(JSON.stringify(cmp)).toMatch(/Alien[\s\S]*Blade Runner|Blade Runner[\s\S]*Alien/);
  }, 60_000);

  it('loads a site with `askbus load` as the loader user, and refuses the gateway user at once', async () => {
    const file = join(system.dataDir, 'shelf.jsonl');
    writeFileSync(
      file,
      '{"@type":"Book","name":"Permissions of Sparrows","url":"https://shelf.example/1"}\n',
    );
    const loaded = await askbusLoad(file, 'shelf', 'loader', system.natsPasswords!.loader!);
    expect(loaded.stderr).toBe('');
    expect(loaded.stdout).toMatch(/shelf: loaded 1 items/);
    const found = await askSse('sparrows', 'shelf');
    expect(JSON.stringify(found)).toMatch(/Permissions of Sparrows/);

    // The gateway's user may not write the index: the load fails with NATS's refusal, not a timeout.
    const refused = await askbusLoad(file, 'shelf', 'gateway', system.natsPasswords!.gateway!);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/NATS refused askbus-load publishing to "retrieve\.v1\.(upsert|delete)"/);
  }, 60_000);

  it('keeps A2A tasks in the gateway KV bucket', async () => {
    const client = await new ClientFactory().createFromUrl(system.running.url);
    const reply = await client.sendMessage({
      tenant: '',
      message: {
        messageId: 'm-permissions-1',
        contextId: '',
        taskId: '',
        role: Role.ROLE_USER,
        parts: [
          {
            content: { $case: 'text', value: 'westerns with clint eastwood' },
            metadata: undefined,
            filename: '',
            mediaType: 'text/plain',
          },
        ],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
      configuration: {
        acceptedOutputModes: [],
        taskPushNotificationConfig: undefined,
        returnImmediately: false,
      },
      metadata: undefined,
    });
    const task = reply as Task;
    expect(task.id).toBeTruthy();
    // Read back as the gateway's NATS user: the task is in KV, not in an in-memory fallback.
    const gateway = await connectBus({
      servers: system.natsUrl,
      service: 'gateway-check',
      user: 'gateway',
      pass: system.natsPasswords!.gateway,
    });
    try {
      const kv = await new Kvm(gateway.nc).open(A2A_TASKS_BUCKET);
      const keys: string[] = [];
      for await (const k of await kv.keys()) keys.push(k);
      expect(keys.some((k) => k.endsWith(`.k${Buffer.from(task.id).toString('base64url')}`))).toBe(true);
    } finally {
      await gateway.drain(1_000);
    }
  }, 60_000);

  it('logged no permissions violation in any service', () => {
    expect(errors.filter((e) => /permissions violation/i.test(e))).toEqual([]);
  });
});

describe('the permission table and the code', () => {
  // A contract a service's code names must be in its permissions, or the call is refused in production.
  it('covers every contract each service names in its code', () => {
    const helperContracts: Record<string, string> = { 'retrieve(': 'search', 'rank(': 'score' };
    for (const service of declared.services.map((d) => d.name)) {
      const dir = join(root, 'services', service, 'src');
      const code = readdirSync(dir)
        .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && f !== 'testing.ts')
        .map((f) => readFileSync(join(dir, f), 'utf8'))
        .join('\n');
      const named = new Set<string>();
      for (const m of code.matchAll(/\bcontracts\.(\w+)/g)) named.add(m[1]!);
      for (const m of code.matchAll(/serveTool\(\w+, '(\w+)'/g)) named.add(`tool:${m[1]}`);
      for (const [call, contract] of Object.entries(helperContracts))
        if (code.includes(call)) named.add(contract);
      const subjects = [...declared.service(service).serves, ...declared.authorization.callsOf(service)].map(
        (c) => c.subject,
      );
      for (const n of named) {
        const subject = n.startsWith('tool:') ? `tool.v1.${n.slice(5)}.run` : contractSubject(n);
        expect(subjects, `${service} uses ${n}`).toContain(subject);
      }
    }
  });
});

function contractSubject(name: string): string {
  return (
    (contracts as Record<string, { subject: string } | undefined>)[name]?.subject ?? `no contract ${name}`
  );
}
