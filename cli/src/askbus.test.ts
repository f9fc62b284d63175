import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testNats } from '@askbus/bus/testing';

const here = dirname(fileURLToPath(import.meta.url));
const tsx = join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/cli.mjs');
const cli = join(here, 'askbus.ts');

describe('askbus command line', () => {
  it('prints its usage for --help and refuses unknown commands', () => {
    const help = spawnSync(process.execPath, [tsx, cli, '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/Usage: askbus <command>/);
    const bad = spawnSync(process.execPath, [tsx, cli, 'frobnicate'], { encoding: 'utf8' });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/unknown command "frobnicate"/);
  });
});

describe('askbus up as a process', () => {
  let nats: Awaited<ReturnType<typeof testNats>>;
  let dataDir: string;
  beforeAll(async () => {
    nats = await testNats();
    dataDir = mkdtempSync(join(tmpdir(), 'askbus-up-'));
  });
  afterAll(async () => {
    await nats.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints a URL that is ready, then drains and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, [tsx, cli, 'up'], {
      env: { ...process.env, PORT: '0', NATS_URL: nats.url, ASKBUS_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no URL within 45 s:\n${out}`)), 45_000);
      const check = (): void => {
        const m = /askbus is up: (http:\/\/[^\s]+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      };
      child.stdout.on('data', check);
      void exited.then(() => reject(new Error(`exited early:\n${out}`)));
    });
    expect((await fetch(`${url}/ready`)).status).toBe(200);
    expect(out).toMatch(/loaded demo site movies: 3200 items/);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out).toMatch(/stopping/);
  }, 60_000);
});
