/**
 * The askbus bin runs the client commands from the bundle `npm run build` makes (plain
 * JavaScript, no TypeScript compiled at start), and falls back to tsx when a source it was built
 * from changed since.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync, utimesSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../..');
const bin = join(here, '../bin/askbus.mjs');
const run = (args: string[]) =>
  spawnSync(process.execPath, [bin, ...args], {
    env: { ...process.env, ASKBUS_BIN_TRACE: '1' },
    encoding: 'utf8',
    timeout: 60_000,
  });

beforeAll(() => {
  const built = spawnSync(process.execPath, [join(here, '../build.mjs')], { encoding: 'utf8' });
  expect(built.status, built.stderr).toBe(0);
}, 60_000);

it('runs `sites`, `ask` and `load` from the bundle, and `up` through tsx', () => {
  const sites = run(['sites', '--help']);
  expect(sites.status).toBe(0);
  expect(sites.stdout).toMatch(/Usage: askbus sites/);
  expect(sites.stderr).toMatch(/askbus: bundle/);
  const inputs = JSON.parse(readFileSync(join(here, '../build/inputs.json'), 'utf8')) as { inputs: string[] };
  expect(inputs.inputs).toContain('cli/src/load.ts');
  expect(inputs.inputs.some((f) => f.startsWith('services/'))).toBe(false);
});

it('names the NATS it tried when `askbus load` cannot reach it', () => {
  const load = spawnSync(process.execPath, [bin, 'load', bin, '--site', 'x'], {
    env: { ...process.env, NATS_URL: 'nats://127.0.0.1:9' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(load.status).toBe(1);
  expect(load.stderr).toMatch(/cannot reach NATS at nats:\/\/127\.0\.0\.1:9 \(NATS_URL\)/);
  expect(load.stderr).toMatch(/set NATS_URL/);
});

it('falls back to tsx when a source changed after the build', () => {
  const source = join(root, 'cli/src/ask.ts');
  const before = statSync(source);
  const later = new Date(Date.now() + 60_000);
  utimesSync(source, later, later);
  try {
    const sites = run(['sites', '--help']);
    expect(sites.status).toBe(0);
    expect(sites.stderr).toMatch(/askbus: tsx/);
  } finally {
    utimesSync(source, before.atime, before.mtime);
  }
}, 60_000);
