/**
 * Adding a tool is its block in config/tools.xml and its service folder, nothing else written by
 * hand: the example tool of deploy/fixtures/tool-count, added to a copy of the system, is
 * checked against the declared services, routed to, allowed on NATS (every service runs as its
 * own user) and present in the rendered manifests and compose file.
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderNatsAuthConfig, startNatsServer, type NatsServerHandle } from '@askbus/bus';
import { SERVICES_DIR, loadSystem, runInProcess, type InProcessSystem, type System } from '@askbus/service';
import { handlersOf, loadTools } from '@askbus/tools';
import { renderCompose, renderServiceManifests } from './services';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const work = mkdtempSync(join(tmpdir(), 'askbus-add-a-tool-'));

/** The tool's block, as a person adds it to config/tools.xml. */
const COUNT_TOOL = `
      <Tool name="count" enabled="true">
        <method>code</method>
        <handler>count</handler>
        <example>how many westerns are there</example>
        <example>how many cars have 8 cylinders</example>
        <example>count the comedies from the 1980s</example>
        <prompt>Score between 0 and 100 whether the query "{request.query}" asks how many {request.itemType} items match. Return what to count.</prompt>
        <returnStruc>{"score": "integer between 0 and 100", "search_query": "the items to count"}</returnStruc>
      </Tool>`;

let system: System;
let toolsFile: string;

beforeAll(async () => {
  // services/ as it is, plus the new folder.
  const services = join(work, 'services');
  mkdirSync(services);
  for (const name of readdirSync(SERVICES_DIR))
    symlinkSync(join(SERVICES_DIR, name), join(services, name), 'dir');
  symlinkSync(join(here, 'fixtures', 'tool-count'), join(services, 'tool-count'), 'dir');
  system = await loadSystem(services);
  const xml = readFileSync(join(root, 'config', 'tools.xml'), 'utf8');
  toolsFile = join(work, 'tools.xml');
  writeFileSync(
    toolsFile,
    xml.replace('    </Thing>\n    <Recipe>', `${COUNT_TOOL}\n    </Thing>\n    <Recipe>`),
  );
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('a tool added as an XML block and a service folder', () => {
  it('is a declared tool: tools.xml may name it, and without the folder it may not', async () => {
    const handlers = handlersOf(loadTools(toolsFile));
    expect(handlers).toContain('count');
    expect(system.toolHandlers().get('count')).toBe('tool-count');
    expect(() => system.checkTools(handlers)).not.toThrow();
    await expect(loadSystem().then((s) => s.checkTools(handlers))).rejects.toThrow(
      /"count" that no service declares/,
    );
  });

  it('is permitted on NATS: the router may call it, and it answers only its callers', () => {
    const auth = system.authorization;
    expect(auth.permissions('router').publish.allow).toContain('tool.v1.count.run');
    expect(auth.permissions('tool-count').subscribe.allow).toContain('tool.v1.count.run');
    expect(auth.permissions('tool-count').publish.allow).toEqual(
      expect.arrayContaining(['retrieve.v1.search', '_INBOX_router.>']),
    );
    expect(renderNatsAuthConfig(auth)).toMatch(/user: "tool-count"/);
  });

  it('is in the rendered manifests and compose file', () => {
    const manifests = renderServiceManifests(system);
    expect(manifests).toMatch(/name: askbus-tool-count\n/);
    expect(manifests).toMatch(/args:\n\s+- tool-count/);
    const compose = parse(renderCompose(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), system), {
      merge: true,
    }) as { services: Record<string, { command: string[]; environment: Record<string, string> }> };
    expect(compose.services['tool-count']?.command).toEqual(['tool-count']);
    expect(compose.services['tool-count']?.environment.NATS_USER).toBe('tool-count');
    expect(compose.services.nats?.environment.NATS_PASSWORD_TOOL_COUNT).toBeDefined();
  });

  describe('running, each service as its own NATS user', () => {
    let nats: NatsServerHandle;
    let running: InProcessSystem;
    beforeAll(async () => {
      const passwords = Object.fromEntries(
        system.authorization.users.map((u) => [u, `pw-${u}-${Math.random()}`]),
      );
      nats = await startNatsServer({ config: renderNatsAuthConfig(system.authorization, { passwords }) });
      process.env.ASKBUS_TOOLS = toolsFile;
      running = await runInProcess({
        system,
        env: {
          ...process.env,
          ASKBUS_DATA_DIR: join(work, 'data'),
          ASKBUS_DEMO: '1',
          PORT: '0',
          HOST: '127.0.0.1',
          LOG_LEVEL: 'silent',
        },
        natsUrl: nats.url,
        credentials: (user) => ({ user, pass: passwords[user]! }),
      });
    }, 120_000);
    afterAll(async () => {
      await running?.stop();
      await nats?.stop();
      delete process.env.ASKBUS_TOOLS;
    });

    it('routes a "how many" question to it', async () => {
      const [gateway] = running.handles('gateway');
      const res = await fetch(
        `${gateway!.url}/ask?query=how+many+westerns+are+there&site=movies&streaming=false`,
      );
      const text = await res.text();
      expect(res.status, text).toBe(200);
      expect(text).toMatch(/\d+ items match/);
    }, 60_000);
  });
});
