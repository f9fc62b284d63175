import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Kvm } from '@nats-io/kv';
import {
  contracts,
  type AskRequestInput,
  type Contract,
  type StoredItem,
  toolContract,
} from '@askbus/contracts';
import type { Bus } from '@askbus/bus';
import { BusError } from '@askbus/bus';
import { startNatsServer, type NatsServerHandle } from '@askbus/bus';
import { passwordEnvVar, type NatsUser } from '@askbus/bus';
import { renderNatsAuthConfig } from '@askbus/bus';
import { connectBus, natsAuth } from '@askbus/bus';
import { perItemScore } from '@askbus/bus/testing';
import { loadSystem } from './system';

// The whole system's principals, as the services declare them.
const auth = (await loadSystem()).authorization;
const NATS_USERS = auth.users;
const natsPermissions = (user: string) => auth.permissions(user);
const callersOf = (c: Contract) => auth.callersOf(c);
const serviceSubjects: Record<
  string,
  | { serves: readonly Contract[]; calls: readonly Contract[]; events?: readonly { subject: string }[] }
  | undefined
> = Object.fromEntries(
  auth.principals.map((p) => [p.name, { serves: p.serves, calls: auth.callsOf(p.name), events: p.events }]),
);
const toolContracts = { compare: toolContract('compare') };

const item = (n: number): StoredItem => ({
  url: `https://example.test/${n}`,
  name: `Item ${n}`,
  site: 'test',
  '@type': 'Thing',
  schema_object: { '@type': 'Thing', name: `Item ${n}` },
});

async function* noChunks(): AsyncGenerator<never> {}

describe('permissions derived from the contracts', () => {
  const served = (c: Contract) =>
    NATS_USERS.filter((u) => natsPermissions(u).subscribe.allow.includes(c.subject));

  it('lets exactly one service serve each contract, and every call reach a server', () => {
    for (const c of Object.values(contracts)) expect(served(c), c.subject).toHaveLength(1);
    for (const user of NATS_USERS) {
      for (const c of serviceSubjects[user]!.calls) {
        expect(natsPermissions(user).publish.allow, user).toContain(c.subject);
        expect(served(c), `${user} calls ${c.subject}`).toHaveLength(1);
      }
    }
  });

  it('gives only callers the cancel subject and inboxes, and only the gateway JetStream', () => {
    const p = natsPermissions('ranker');
    // A responder publishes only to the inboxes of those who call it: nothing else, no allow_responses.
    expect(p.publish.allow).toEqual(callersOf(contracts.score).map((u) => `_INBOX_${u}.>`));
    expect(p.publish.allow).toEqual([
      '_INBOX_router.>',
      '_INBOX_tool-ensemble.>',
      '_INBOX_tool-recipe.>',
      '_INBOX_tool-who.>',
    ]);
    expect(p).not.toHaveProperty('allow_responses');
    expect(p.subscribe.allow).toEqual(['rank.v1.score', 'ask.v1.cancel.>', '$SRV.>']);
    // Each user cancels under its own name only.
    expect(natsPermissions('router').publish.allow).toContain('ask.v1.cancel.router.>');
    expect(natsPermissions('router').publish.allow).not.toContain('ask.v1.cancel.>');
    expect(natsPermissions('router').publish.allow).toContain(toolContracts.compare.subject);
    expect(natsPermissions('router').publish.allow).toContain('_INBOX_gateway.>');
    expect(natsPermissions('router').subscribe.allow).toContain('_INBOX_router.>');
    expect(natsPermissions('router').subscribe.allow).not.toContain('_INBOX.>');
    for (const user of NATS_USERS) {
      const js = natsPermissions(user).publish.allow.filter(
        (s) => s.startsWith('$JS') || s.startsWith('$KV'),
      );
      expect(js.length > 0, user).toBe(user === 'gateway');
    }
  });

  it("lets every user publish only its calls, its own cancels, its callers' inboxes, its KV and events", () => {
    for (const user of NATS_USERS) {
      const s = serviceSubjects[user] as {
        serves: readonly Contract[];
        calls: readonly Contract[];
        events?: readonly { subject: string }[];
      };
      const calls = s.calls.map((c) => c.subject);
      const inboxes = new Set(s.serves.flatMap((c) => callersOf(c)).map((u) => `_INBOX_${u}.>`));
      for (const subject of natsPermissions(user).publish.allow) {
        const ok =
          calls.includes(subject) ||
          subject === `ask.v1.cancel.${user}.>` ||
          inboxes.has(subject) ||
          (user === 'gateway' && /^\$(JS\.API\.|JS\.FC\.KV_|KV\.)/.test(subject)) ||
          (s.events ?? []).some((e) => subject === `${e.subject}.*`);
        expect(ok, `${user} may publish ${subject}`).toBe(true);
      }
      // Nobody may answer on plain _INBOX.> or any subject's wildcard.
      expect(natsPermissions(user).publish.allow).not.toContain('_INBOX.>');
      expect(natsPermissions(user).publish.allow).not.toContain('>');
    }
  });

  it('renders passwords given, and environment references for the others', () => {
    const text = renderNatsAuthConfig(auth, { passwords: { ranker: 's3cret' } });
    expect(text).toContain('password: "s3cret"');
    expect(text).toContain(`password: $${passwordEnvVar('tool-details')}`);
    expect(passwordEnvVar('tool-details')).toBe('NATS_PASSWORD_TOOL_DETAILS');
    expect(() => renderNatsAuthConfig(auth, { passwords: { ranker: 'a"b' } })).toThrow(/quotes/);
  });
});

describe('credentials of connectBus', () => {
  it('come from the options, else NATS_USER/NATS_PASSWORD, NATS_TOKEN or NATS_CREDS', () => {
    expect(natsAuth({ service: 's', env: {} })).toEqual({});
    expect(natsAuth({ service: 's', env: { NATS_USER: 'u', NATS_PASSWORD: 'p' } })).toEqual({
      user: 'u',
      pass: 'p',
    });
    expect(natsAuth({ service: 's', env: { NATS_TOKEN: 't' } })).toEqual({ token: 't' });
    expect(natsAuth({ service: 's', user: 'o', pass: 'q', env: { NATS_TOKEN: 't' } })).toEqual({
      user: 'o',
      pass: 'q',
    });
    expect(() => natsAuth({ service: 's', env: { NATS_USER: 'u' } })).toThrow(/no password/);
    expect(() =>
      natsAuth({ service: 's', env: { NATS_USER: 'u', NATS_PASSWORD: 'p', NATS_TOKEN: 't' } }),
    ).toThrow(/one of/);
    expect(() => natsAuth({ service: 's', env: { NATS_CREDS: '/nonexistent/askbus.creds' } })).toThrow(
      /cannot read the creds file/,
    );
  });

  it('reads a creds file into an authenticator', () => {
    const dir = mkdtempSync(join(tmpdir(), 'askbus-creds-'));
    try {
      const file = join(dir, 'user.creds');
      writeFileSync(file, 'not really creds');
      expect(natsAuth({ service: 's', env: { NATS_CREDS: file } }).authenticator).toBeTypeOf('function');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a nats-server with the generated authorization', () => {
  const passwords = Object.fromEntries(
    NATS_USERS.map((u) => [u, `pw-${u}-${Math.random().toString(36).slice(2)}`]),
  );
  let server: NatsServerHandle;
  const buses: Bus[] = [];
  const logs = new Map<string, string[]>();
  const as = async (user: NatsUser, password = passwords[user]!) => {
    const lines: string[] = [];
    logs.set(user, lines);
    const bus = await connectBus({
      servers: server.url,
      service: user,
      user,
      pass: password,
      inactivityMs: 10_000,
      log: (_level, msg) => lines.push(msg),
    });
    buses.push(bus);
    return bus;
  };

  beforeAll(async () => {
    // Passwords through $NATS_PASSWORD_<USER> in the server's environment, as in deploy/nats.
    server = await startNatsServer({
      config: renderNatsAuthConfig(auth),
      env: Object.fromEntries(NATS_USERS.map((u) => [passwordEnvVar(u), passwords[u]!])),
    });
  });
  afterAll(async () => {
    for (const b of buses) await b.drain(1_000);
    await server?.stop();
  });

  it('refuses a wrong password and a client without credentials', async () => {
    await expect(as('ranker', 'wrong')).rejects.toThrow(
      /refused ranker \(user "ranker"\).*Authorization Violation/i,
    );
    await expect(connectBus({ servers: server.url, service: 'anon', env: {} })).rejects.toThrow(
      /refused anon/,
    );
  });

  it('carries a stream of many chunks from a responder back to its caller', async () => {
    const ranker = await as('ranker');
    ranker.serveStream(perItemScore, async function* (req) {
      for (const it of req.items) yield { url: it.url, score: 50, description: '' };
    });
    await ranker.nc.flush();
    const router = await as('router');
    const items = Array.from({ length: 120 }, (_, i) => item(i));
    const out = [];
    for await (const s of router.stream(perItemScore, { query: 'q', items }, { timeoutMs: 20_000 }))
      out.push(s);
    // One reply subject, 120 chunks (the last carries the end): more than allow_responses' default of one.
    expect(out).toHaveLength(120);
    expect(logs.get('ranker')).toEqual([]);
  });

  it('lets the gateway keep the A2A tasks in KV, and no other service', async () => {
    const gateway = await as('gateway');
    const kv = await new Kvm(gateway.nc).create('askbus_a2a_tasks', { history: 1, ttl: 60_000 });
    await kv.put('t.k1', 'one');
    expect((await kv.get('t.k1'))?.string()).toBe('one');
    const keys: string[] = [];
    for await (const k of await kv.keys('t.*')) keys.push(k);
    expect(keys).toEqual(['t.k1']);
    await kv.delete('t.k1');
    const router = await as('router');
    await expect(new Kvm(router.nc).create('askbus_a2a_tasks')).rejects.toThrow();
    expect(logs.get('router')?.join('\n')).toMatch(/router may not publish to "\$JS\.API\./);
  });

  // Past a few MB a KV watch's push consumer asks for flow control on $JS.FC.<stream>.…; without
  // the right to answer it (allow_responses used to give it) the watch stalls for ever.
  it("lets the gateway answer its KV watch's flow control, so a large listing completes", async () => {
    const gateway = await as('gateway');
    const kv = await new Kvm(gateway.nc).create('askbus_a2a_push', { history: 1 });
    const big = new Uint8Array(900_000).fill(65);
    for (let i = 0; i < 6; i++) await kv.put(`big.${i}`, big);
    const seen: string[] = [];
    for await (const e of await kv.watch({ key: 'big.>' })) {
      seen.push(e.key);
      if (seen.length === 6) break;
    }
    expect(seen.sort()).toEqual([0, 1, 2, 3, 4, 5].map((i) => `big.${i}`));
    expect(logs.get('gateway')?.filter((l) => /violation/.test(l))).toEqual([]);
    await kv.destroy();
  });

  it('refuses a ranker publishing outside its subjects, and nobody receives the message', async () => {
    const received = new Map<string, number>();
    const count = (subject: string) => received.set(subject, (received.get(subject) ?? 0) + 1);
    const retriever = await as('retriever');
    retriever.serve(contracts.upsert, async (req) => {
      count(contracts.upsert.subject);
      return { upserted: req.items.length, total: req.items.length };
    });
    const router = await as('router');
    router.serveStream(contracts.ask, () => {
      count(contracts.ask.subject);
      return noChunks();
    });
    const compare = await as('tool-compare');
    compare.serveStream(toolContracts.compare, () => {
      count(toolContracts.compare.subject);
      return noChunks();
    });
    await Promise.all([retriever, router, compare].map((b) => b.nc.flush()));

    const ranker = await as('ranker');
    const subjects = [contracts.upsert.subject, contracts.ask.subject, toolContracts.compare.subject];
    for (const subject of subjects) ranker.nc.publish(subject, '{}', { reply: `_INBOX.ranker.${subject}` });
    await ranker.nc.flush();
    await vi.waitFor(() =>
      expect(logs.get('ranker')).toEqual(
        subjects.map((s) => `NATS permissions violation: ranker may not publish to "${s}"`),
      ),
    );

    // The loader may upsert: its call is the first and only one any of the three servers sees.
    const loader = await as('loader');
    await loader.request(contracts.upsert, { site: 'x', items: [item(2)] }, { timeoutMs: 10_000 });
    await Promise.all([router, compare].map((b) => b.nc.flush()));
    expect(Object.fromEntries(received)).toEqual({ 'retrieve.v1.upsert': 1 });
  });

  it('fails a call the service may not make at once, not at its deadline', async () => {
    const compare = await as('tool-compare');
    // The error names the refusal: a timeout or no_responders would say otherwise.
    const refused = async (call: Promise<unknown>, subject: string) => {
      const err = await call.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(BusError);
      expect((err as BusError).message).toContain(`NATS refused tool-compare publishing to "${subject}"`);
    };
    const drain = async (s: AsyncIterable<unknown>) => {
      for await (const _ of s) void _;
    };
    const ask: AskRequestInput = { query: 'q', site: ['all'], queryId: 'q1' };
    const limit = { timeoutMs: 30_000 };
    await refused(
      compare.request(contracts.upsert, { site: 'x', items: [item(1)] }, limit),
      'retrieve.v1.upsert',
    );
    await refused(drain(compare.stream(contracts.ask, ask, limit)), 'ask.v1.run');
    await refused(drain(compare.stream(toolContracts.compare, { ask }, limit)), 'tool.v1.compare.run');
  });

  it('refuses a subscription outside the service list', async () => {
    const ranker = await as('ranker');
    const sub = ranker.nc.subscribe(contracts.upsert.subject, { queue: 'retriever' });
    const closedWith = await sub.closed;
    expect(String(closedWith)).toMatch(/Permissions Violation for Subscription to "retrieve\.v1\.upsert"/);
    await vi.waitFor(() =>
      expect(logs.get('ranker')).toContain(
        'NATS permissions violation: ranker may not subscribe to "retrieve.v1.upsert"',
      ),
    );
  });

  it("keeps a caller's replies from other services: each reads only its own inboxes", async () => {
    const router = await as('router');
    const snoop = router.nc.subscribe('_INBOX_gateway.>');
    expect(String(await snoop.closed)).toMatch(
      /Permissions Violation for Subscription to "_INBOX_gateway\.>"/,
    );
    const wide = router.nc.subscribe('_INBOX.>');
    expect(String(await wide.closed)).toMatch(/Permissions Violation for Subscription/);
    // The gateway's own calls still get their replies, on its own prefix.
    const gateway = await as('gateway');
    const retriever = await as('retriever');
    retriever.serve(contracts.sites, async () => ({ sites: [] }));
    await retriever.nc.flush();
    await expect(gateway.request(contracts.sites, {}, { timeoutMs: 5_000 })).resolves.toEqual({ sites: [] });
  });
});
