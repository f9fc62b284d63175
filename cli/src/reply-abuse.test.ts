/**
 * The attacks of issue 19 on the whole system, run as `askbus up` runs it, on a nats-server
 * loaded with the shipped deploy/nats/auth.conf (each service its own NATS user): a service's
 * credentials must not make another service purge or write the gateway's JetStream state, call
 * a subject for it, publish A2A events, or cancel a query it did not start.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Kvm, type KV } from '@nats-io/kv';
import { PermissionViolationError, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import { Role, type Task } from '@a2a-js/sdk';
import {
  passwordEnvVar,
  startNatsServer,
  userInboxPrefix,
  type Bus,
  type NatsServerHandle,
  type NatsUser,
} from '@askbus/bus';
import { contracts, toRankItem, type StoredItem } from '@askbus/contracts';
import { loadSystem } from '@askbus/service';
import { up, type Running } from './up';
import { readAskStream } from './testing';

const here = dirname(fileURLToPath(import.meta.url));
const AUTH_CONF = join(here, '../../deploy/nats/auth.conf');
const system = await loadSystem();
const NATS_USERS = system.authorization.users;
const TASKS = system.service('gateway').kvBuckets![0]!;
/** Long enough that a query is still running when a test cancels it; no timing is asserted. */
const RANK_DELAY_MS = 3_000;
const PATIENCE = { timeout: 20_000, interval: 20 };

// nats-server parses a $VARIABLE's value as config: a password must start with a letter.
const passwords = Object.fromEntries(
  NATS_USERS.map((u) => [u, `p${randomBytes(18).toString('hex')}`]),
) as Record<NatsUser, string>;
let server: NatsServerHandle;
let running: Running;
let dataDir: string;
let a2a: Client;
const raw: NatsConnection[] = [];

/** A plain NATS client with a service's credentials, and the permission errors the server sends it. */
async function as(user: NatsUser) {
  const nc = await connect({
    servers: server.url,
    user,
    pass: passwords[user],
    inboxPrefix: userInboxPrefix(user),
  });
  raw.push(nc);
  const refused: string[] = [];
  void (async () => {
    for await (const s of nc.status())
      if (s.type === 'error' && s.error instanceof PermissionViolationError) refused.push(s.error.subject);
  })();
  return { nc, refused };
}

const bus = (service: string): Bus => {
  const b = running.buses.find((x) => x.service === service);
  if (!b) throw new Error(`no ${service} bus`);
  return b;
};
const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
const searchRequest = json({ query: 'westerns', site: ['movies'], numResults: 3 });

async function newTask(text: string): Promise<Task> {
  const reply = await a2a.sendMessage({
    tenant: '',
    message: {
      messageId: `m-${randomBytes(6).toString('hex')}`,
      contextId: '',
      taskId: '',
      role: Role.ROLE_USER,
      parts: [
        {
          content: { $case: 'text', value: text },
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
  return reply as Task;
}

/** The gateway's task bucket, read as the gateway's own NATS user. */
async function tasksBucket(): Promise<KV> {
  const { nc } = await as('gateway');
  return new Kvm(nc).open(TASKS);
}
async function entries(kv: KV): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for await (const k of await kv.keys()) out.set(k, (await kv.get(k))?.revision ?? -1);
  return out;
}

/** Publishes a request as `attacker` and waits until `responder` refused to answer it. */
async function refusedBy(responder: Bus, publish: () => void): Promise<void> {
  const before = responder.stats.refusedReplies;
  publish();
  await vi.waitFor(() => expect(responder.stats.refusedReplies).toBe(before + 1), PATIENCE);
  // Anything it had sent would be at the server now.
  await responder.nc.flush();
}

beforeAll(async () => {
  server = await startNatsServer({
    configFile: AUTH_CONF,
    env: Object.fromEntries(NATS_USERS.map((u) => [passwordEnvVar(u), passwords[u]!])),
  });
  dataDir = mkdtempSync(join(tmpdir(), 'askbus-abuse-'));
  running = await up({
    port: 0,
    host: '127.0.0.1',
    rankers: 1,
    demo: true,
    rankDelayMs: RANK_DELAY_MS,
    log: () => undefined,
    dataDir,
    natsUrl: server.url,
    natsCredentials: (user) => ({ user, pass: passwords[user] }),
  });
  a2a = await new ClientFactory().createFromUrl(running.url);
}, 120_000);

afterAll(async () => {
  for (const nc of raw) await nc.close().catch(() => undefined);
  await running?.stop();
  await server?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('a service user abusing reply subjects (shipped deploy/nats/auth.conf)', () => {
  it('tool-details cannot make the retriever purge the A2A task bucket', async () => {
    const task = await newTask('westerns with clint eastwood');
    const kv = await tasksBucket();
    const before = await entries(kv);
    expect(before.size).toBeGreaterThan(0);
    const { nc } = await as('tool-details');
    await refusedBy(bus('retriever'), () =>
      nc.publish(contracts.search.subject, searchRequest, { reply: `$JS.API.STREAM.PURGE.KV_${TASKS}` }),
    );
    expect(await entries(kv)).toEqual(before);
    const got = await a2a.getTask({ tenant: '', id: task.id, historyLength: undefined });
    expect(got.id).toBe(task.id);
    expect(got.status?.state).toBe(task.status?.state);
  }, 60_000);

  it('tool-details cannot make the retriever write into the bucket ($KV.<bucket>.<key>)', async () => {
    const task = await newTask('movies about space');
    const kv = await tasksBucket();
    const before = await entries(kv);
    const key = [...before.keys()].find((k) => k.endsWith(`.k${Buffer.from(task.id).toString('base64url')}`));
    expect(key).toBeDefined();
    const { nc } = await as('tool-details');
    for (const target of [key!, 'forged.key']) {
      await refusedBy(bus('retriever'), () =>
        nc.publish(contracts.search.subject, searchRequest, { reply: `$KV.${TASKS}.${target}` }),
      );
    }
    expect(await entries(kv)).toEqual(before);
    const got = await a2a.getTask({ tenant: '', id: task.id, historyLength: undefined });
    expect(got.id).toBe(task.id);
    expect(got.artifacts.length).toBe(task.artifacts.length);
  }, 60_000);

  it("tool-details cannot make the retriever publish on the router's ask.v1.run", async () => {
    const router = bus('router');
    const asked = () => router.discovery.endpoint(contracts.ask.subject)?.num_requests ?? 0;
    const before = { asked: asked(), refused: router.stats.refusedReplies, ...router.stats };
    const { nc } = await as('tool-details');
    await refusedBy(bus('retriever'), () =>
      nc.publish(contracts.search.subject, searchRequest, { reply: contracts.ask.subject }),
    );
    await router.nc.flush();
    expect(asked()).toBe(before.asked);
    expect(router.stats.refusedReplies).toBe(before.refused);
    expect(router.stats.served + router.stats.failed).toBe(before.served + before.failed);
  });

  it('tool-ensemble cannot make a ranker publish A2A task events', async () => {
    const { nc: gateway } = await as('gateway');
    const events: string[] = [];
    gateway.subscribe('a2a.v1.events.*', { callback: (_e, m) => void events.push(m.subject) });
    await gateway.flush();
    const item: StoredItem = {
      url: 'https://example.test/1',
      name: 'One',
      site: 'movies',
      '@type': 'Movie',
      schema_object: { '@type': 'Movie', name: 'One' },
    };
    const { nc } = await as('tool-ensemble');
    await refusedBy(bus('ranker'), () =>
      nc.publish(contracts.score.subject, json({ query: 'q', items: [toRankItem(item)] }), {
        reply: 'a2a.v1.events.t-forged',
      }),
    );
    await gateway.flush();
    expect(events).toEqual([]);
  });

  it('the NATS layer alone stops a service publishing there, even by echoing its own message', async () => {
    const kv = await tasksBucket();
    const before = await entries(kv);
    // A retriever that did answer anything would be refused by NATS: it may publish only to inboxes.
    const retriever = await as('retriever');
    retriever.nc.publish(`$JS.API.STREAM.PURGE.KV_${TASKS}`);
    retriever.nc.publish('ask.v1.run', json({}));
    // allow_responses used to let a user answer its own message: a cancel it both sends and hears.
    const echo = await as('tool-details');
    echo.nc.subscribe('ask.v1.cancel.>', {
      callback: (_e, m) => {
        if (m.reply) echo.nc.publish(m.reply);
      },
    });
    echo.nc.publish('ask.v1.cancel.tool-details.q-echo', undefined, {
      reply: `$JS.API.STREAM.PURGE.KV_${TASKS}`,
    });
    await vi.waitFor(() => {
      expect(retriever.refused).toEqual([`$JS.API.STREAM.PURGE.KV_${TASKS}`, 'ask.v1.run']);
      expect(echo.refused).toEqual([`$JS.API.STREAM.PURGE.KV_${TASKS}`]);
    }, PATIENCE);
    expect(await entries(kv)).toEqual(before);
  });
});

describe('refusals are counted', () => {
  it('in /metrics, by service', async () => {
    const text = await (await fetch(`${running.url}/metrics`)).text();
    const count = (service: string, what: string) =>
      Number(
        new RegExp(`^askbus_refused_total\\{service="${service}",what="${what}"\\} (\\d+)$`, 'm').exec(
          text,
        )?.[1],
      );
    expect(count('retriever', 'reply')).toBe(bus('retriever').stats.refusedReplies);
    expect(count('retriever', 'reply')).toBeGreaterThanOrEqual(4);
    expect(count('ranker', 'reply')).toBeGreaterThanOrEqual(1);
    expect(count('router', 'cancel')).toBe(bus('router').stats.refusedCancels);
  });
});

describe('cancels: a user stops only what it started', () => {
  it("refuses a service cancelling the gateway's query; the query answers in full", async () => {
    const router = bus('router');
    const before = { ...router.stats };
    const { nc, refused } = await as('tool-details');
    let cancelled = false;
    const answer = readAskStream(`${running.url}/ask?query=westerns&site=movies&query_id=q_victim`, (m) => {
      if (m.message_type !== 'begin-nlweb-response' || cancelled) return;
      cancelled = true;
      // As the gateway: NATS refuses. Under its own name: the services refuse.
      nc.publish('ask.v1.cancel.gateway.q_victim');
      nc.publish('ask.v1.cancel.tool-details.q_victim');
    });
    await vi.waitFor(
      () => expect(router.stats.refusedCancels).toBeGreaterThan(before.refusedCancels),
      PATIENCE,
    );
    const messages = await answer;
    expect(refused).toContain('ask.v1.cancel.gateway.q_victim');
    expect(messages.at(-1)?.message_type).toBe('end-nlweb-response');
    expect(messages.some((m) => m.message_type === 'result')).toBe(true);
    expect(router.stats.cancelled).toBe(before.cancelled);
  }, 60_000);

  it('still lets the gateway cancel its own query in every service (a client that hangs up)', async () => {
    const router = bus('router');
    const ranker = bus('ranker');
    const before = { router: router.stats.cancelled, ranker: ranker.stats.cancelled };
    const client = new AbortController();
    const res = await fetch(`${running.url}/ask?query=westerns&site=movies&query_id=q_hangup`, {
      signal: client.signal,
    });
    // Hang up once the ranker is scoring for this query.
    await vi.waitFor(() => expect(ranker.stats.inFlight).toBeGreaterThan(0), PATIENCE);
    client.abort();
    await res.body?.cancel().catch(() => undefined);
    await vi.waitFor(() => {
      expect(router.stats.cancelled).toBeGreaterThan(before.router);
      expect(ranker.stats.cancelled).toBeGreaterThan(before.ranker);
    }, PATIENCE);
  }, 60_000);
});
